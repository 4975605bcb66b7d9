package io.quotagate.loadtest.client;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class AimdTest {
    private static final long S = 1_000_000_000L;
    private final Aimd.Options options = new Aimd.Options(1000, 300, 6000, 0.7, 360, Duration.ofSeconds(5));

    @Test
    void throttleMultipliesTheRateByTheDecreaseFactor() {
        Aimd aimd = new Aimd(options, 0);
        aimd.onThrottled(10 * S, 9 * S);
        assertThat(aimd.unitsPerMinute()).isCloseTo(700, within(1e-9));
    }

    @Test
    void throttlesOfRequestsSentBeforeTheLastDecreaseAreOneCongestionEvent() {
        Aimd aimd = new Aimd(options, 0);
        aimd.onThrottled(10 * S, 9 * S);
        aimd.onThrottled(10 * S + 1, 9 * S + 5);   // in flight when the first 429 came back
        assertThat(aimd.unitsPerMinute()).isCloseTo(700, within(1e-9));
        aimd.onThrottled(11 * S, 10 * S + 100);     // sent after the cut: a new event
        assertThat(aimd.unitsPerMinute()).isCloseTo(490, within(1e-9));
    }

    @Test
    void increasesByTheStepAtMostOncePerInterval() {
        Aimd aimd = new Aimd(options, 0);
        aimd.onAccepted(4 * S, true);
        assertThat(aimd.unitsPerMinute()).isEqualTo(1000);
        aimd.onAccepted(5 * S, true);
        assertThat(aimd.unitsPerMinute()).isEqualTo(1360);
        aimd.onAccepted(7 * S, true);
        aimd.onAccepted(9 * S, true);
        assertThat(aimd.unitsPerMinute()).isEqualTo(1360);
        aimd.onAccepted(10 * S, true);
        assertThat(aimd.unitsPerMinute()).isEqualTo(1720);
    }

    @Test
    void doesNotIncreaseWhenRequestsDidNotWaitForUnits() {
        Aimd aimd = new Aimd(options, 0);
        for (int s = 5; s <= 60; s += 5) aimd.onAccepted(s * S, false);
        assertThat(aimd.unitsPerMinute()).isEqualTo(1000);
    }

    @Test
    void staysBetweenMinAndMax() {
        Aimd aimd = new Aimd(options, 0);
        for (int i = 1; i <= 20; i++) aimd.onThrottled(i * S, i * S);
        assertThat(aimd.unitsPerMinute()).isEqualTo(300);
        for (int s = 30; s <= 600; s += 5) aimd.onAccepted(s * S, true);
        assertThat(aimd.unitsPerMinute()).isEqualTo(6000);
    }

    @Test
    void theIncreaseWaitsAFullIntervalAfterACut() {
        Aimd aimd = new Aimd(options, 0);
        aimd.onThrottled(12 * S, 12 * S);
        aimd.onAccepted(15 * S, true);
        assertThat(aimd.unitsPerMinute()).isCloseTo(700, within(1e-9));
        aimd.onAccepted(17 * S, true);
        assertThat(aimd.unitsPerMinute()).isCloseTo(1060, within(1e-9));
    }

    @Test
    void rejectsNonsenseOptions() {
        assertThatThrownBy(() -> new Aimd.Options(100, 300, 6000, 0.7, 360, Duration.ofSeconds(5)))
                .hasMessageContaining("initial");
        assertThatThrownBy(() -> new Aimd.Options(1000, 300, 6000, 1.2, 360, Duration.ofSeconds(5)))
                .hasMessageContaining("decreaseFactor");
        assertThatThrownBy(() -> new Aimd.Options(1000, 300, 6000, 0.7, 360, Duration.ZERO))
                .hasMessageContaining("increaseInterval");
    }
}

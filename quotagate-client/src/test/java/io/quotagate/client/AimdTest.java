package io.quotagate.client;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class AimdTest {
    private static final long S = 1_000_000_000L;

    private static Aimd started() {
        Aimd aimd = new Aimd(0.7, 360, Duration.ofSeconds(5));
        assertThat(aimd.start(1000, 300, 6000, 0)).isEqualTo(1000);
        return aimd;
    }

    @Test
    void throttleMultipliesTheRateByTheDecreaseFactor() {
        assertThat(started().onThrottled(1000, 10 * S, 9 * S)).isCloseTo(700, within(1e-9));
    }

    @Test
    void throttlesOfRequestsSentBeforeTheLastDecreaseAreOneCongestionEvent() {
        Aimd aimd = started();
        double rate = aimd.onThrottled(1000, 10 * S, 9 * S);
        rate = aimd.onThrottled(rate, 10 * S + 1, 9 * S + 5);   // in flight when the first 429 came back
        assertThat(rate).isCloseTo(700, within(1e-9));
        rate = aimd.onThrottled(rate, 11 * S, 10 * S + 100);     // sent after the cut: a new event
        assertThat(rate).isCloseTo(490, within(1e-9));
    }

    @Test
    void increasesByTheStepAtMostOncePerInterval() {
        Aimd aimd = started();
        assertThat(aimd.onAccepted(1000, 4 * S, true)).isEqualTo(1000);
        assertThat(aimd.onAccepted(1000, 5 * S, true)).isEqualTo(1360);
        assertThat(aimd.onAccepted(1360, 7 * S, true)).isEqualTo(1360);
        assertThat(aimd.onAccepted(1360, 9 * S, true)).isEqualTo(1360);
        assertThat(aimd.onAccepted(1360, 10 * S, true)).isEqualTo(1720);
    }

    @Test
    void doesNotIncreaseWhenRequestsDidNotWaitForUnits() {
        Aimd aimd = started();
        for (int s = 5; s <= 60; s += 5) assertThat(aimd.onAccepted(1000, s * S, false)).isEqualTo(1000);
    }

    @Test
    void theIncreaseWaitsAFullIntervalAfterACut() {
        Aimd aimd = started();
        double rate = aimd.onThrottled(1000, 12 * S, 12 * S);
        rate = aimd.onAccepted(rate, 15 * S, true);
        assertThat(rate).isCloseTo(700, within(1e-9));
        assertThat(aimd.onAccepted(rate, 17 * S, true)).isCloseTo(1060, within(1e-9));
    }

    @Test
    void rejectsNonsenseSettingsNamingThem() {
        assertThatThrownBy(() -> RateController.aimd(1.2, 360, Duration.ofSeconds(5))).hasMessageContaining("decreaseFactor");
        assertThatThrownBy(() -> RateController.aimd(0.7, 0, Duration.ofSeconds(5))).hasMessageContaining("increaseStep");
        assertThatThrownBy(() -> RateController.aimd(0.7, 360, Duration.ZERO)).hasMessageContaining("increaseInterval");
    }
}

package io.quotagate.client;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class PublishedPacingTest {
    private static final long S = 1_000_000_000L;
    private static final List<RateLimitFields.Policy> POLICY = RateLimitFields.parsePolicy("\"hidden\";q=3000;w=60");

    private static PublishedPacing started(double initial) {
        PublishedPacing pacing = new PublishedPacing(Duration.ofSeconds(5));
        pacing.start(initial, 100, 12000, 0);
        return pacing;
    }

    @Test
    void startsAtThePolicysSustainedRateWhenTheBucketSitsAtTheSetPoint() {
        // set point: 5% of 3000
        assertThat(started(500).onPublished(500, S, RateLimitFields.parseRateLimit("\"hidden\";r=150;t=3"), POLICY))
                .isEqualTo(3000);
    }

    @Test
    void slowsDownWhenTheBucketDrainsAndSpeedsUpWhenItFills() {
        PublishedPacing pacing = started(500);
        double rate = pacing.onPublished(500, S, RateLimitFields.parseRateLimit("\"hidden\";r=150"), POLICY);
        rate = pacing.onPublished(rate, 2 * S, RateLimitFields.parseRateLimit("\"hidden\";r=0"), POLICY);
        assertThat(rate).isLessThan(3000 - 60 * 150 / 5.0 + 1);
        assertThat(pacing.onPublished(rate, 3 * S, RateLimitFields.parseRateLimit("\"hidden\";r=600"), POLICY))
                .isGreaterThan(3000);
    }

    @Test
    void followsTheMostConstrainedPolicy() {
        List<RateLimitFields.Policy> two = RateLimitFields.parsePolicy("\"burst\";q=100;w=10, \"daily\";q=100000;w=86400");
        // burst is at its set point (5% of 100): its sustained 10/s = 600/min wins
        assertThat(started(500).onPublished(500, S, RateLimitFields.parseRateLimit("\"burst\";r=5, \"daily\";r=90000"), two))
                .isEqualTo(600);
    }

    @Test
    void aThrottleTrimsTheRateWhileFieldsCome() {
        PublishedPacing pacing = started(1000);
        double rate = pacing.onPublished(1000, S, RateLimitFields.parseRateLimit("\"hidden\";r=150"), POLICY);
        assertThat(rate).isEqualTo(3000);
        assertThat(pacing.onThrottled(rate, 2 * S, 2 * S)).isCloseTo(2700, within(1e-9));
    }

    @Test
    void withoutFieldsItMovesAsTheDefaultAimd() {
        // a server that publishes nothing: the same answers move both alike
        PublishedPacing pacing = started(1000);
        RateController aimd = RateController.aimd();
        aimd.start(1000, 100, 12000, 0);
        double p = 1000, a = 1000;
        long t = 0;
        for (int i = 0; i < 40; i++) {
            t += S / 2;
            boolean throttle = i % 10 == 9;
            p = throttle ? pacing.onThrottled(p, t, t) : pacing.onAccepted(p, t, true);
            a = throttle ? aimd.onThrottled(a, t, t) : aimd.onAccepted(a, t, true);
            assertThat(p).isEqualTo(a);
        }
        assertThat(p).isNotEqualTo(1000);
    }

    @Test
    void fieldsThatStopHandTheRateToTheAimdAndTheLoopTakesOverFromItWhenTheyComeBack() {
        PublishedPacing pacing = started(1000);
        double rate = pacing.onPublished(1000, S, RateLimitFields.parseRateLimit("\"hidden\";r=150"), POLICY);
        assertThat(pacing.onAccepted(rate, S, true)).as("paced by the fields: a 200 moves nothing").isEqualTo(rate);
        // 5 s (tau) later without a field: the answers move the rate again (slow start doubles it)
        long quiet = 7 * S;
        assertThat(pacing.onAccepted(rate, quiet, true)).isEqualTo(2 * rate);
        // fields again, the bucket at its set point: the loop resumes at the rate reached, not at q/w
        assertThat(pacing.onPublished(2 * rate, quiet + S, RateLimitFields.parseRateLimit("\"hidden\";r=150"), POLICY))
                .isEqualTo(2 * rate);
    }
}

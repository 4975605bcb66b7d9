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
    void aThrottleTrimsTheRate() {
        assertThat(started(1000).onThrottled(1000, S, S)).isCloseTo(900, within(1e-9));
    }
}

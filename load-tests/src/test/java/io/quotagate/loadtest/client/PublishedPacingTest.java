package io.quotagate.loadtest.client;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class PublishedPacingTest {
    private static final long S = 1_000_000_000L;
    private static final List<RateLimitFields.Policy> POLICY = RateLimitFields.parsePolicy("\"hidden\";q=3000;w=60");

    @Test
    void startsAtThePolicysSustainedRateWhenTheBucketSitsAtTheSetPoint() {
        PublishedPacing pacing = new PublishedPacing(500, 100, 12000, 5, 0);
        pacing.onPublished(S, RateLimitFields.parseRateLimit("\"hidden\";r=150;t=3"), POLICY);   // set point: 5% of 3000
        assertThat(pacing.unitsPerMinute()).isEqualTo(3000);
    }

    @Test
    void slowsDownWhenTheBucketDrainsAndSpeedsUpWhenItFills() {
        PublishedPacing pacing = new PublishedPacing(500, 100, 12000, 5, 0);
        pacing.onPublished(S, RateLimitFields.parseRateLimit("\"hidden\";r=150"), POLICY);
        pacing.onPublished(2 * S, RateLimitFields.parseRateLimit("\"hidden\";r=0"), POLICY);
        double drained = pacing.unitsPerMinute();
        assertThat(drained).isLessThan(3000 - 60 * 150 / 5.0 + 1);
        pacing.onPublished(3 * S, RateLimitFields.parseRateLimit("\"hidden\";r=600"), POLICY);
        assertThat(pacing.unitsPerMinute()).isGreaterThan(3000);
    }

    @Test
    void followsTheMostConstrainedPolicy() {
        PublishedPacing pacing = new PublishedPacing(500, 100, 12000, 5, 0);
        List<RateLimitFields.Policy> two = RateLimitFields.parsePolicy("\"burst\";q=100;w=10, \"daily\";q=100000;w=86400");
        pacing.onPublished(S, RateLimitFields.parseRateLimit("\"burst\";r=5, \"daily\";r=90000"), two);
        // burst is at its set point (5% of 100): its sustained 10/s = 600/min wins
        assertThat(pacing.unitsPerMinute()).isEqualTo(600);
    }

    @Test
    void aThrottleTrimsTheRate() {
        PublishedPacing pacing = new PublishedPacing(1000, 100, 12000, 5, 0);
        pacing.onThrottled(S, S);
        assertThat(pacing.unitsPerMinute()).isCloseTo(900, org.assertj.core.api.Assertions.within(1e-9));
    }
}

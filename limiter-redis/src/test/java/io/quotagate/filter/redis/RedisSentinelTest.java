package io.quotagate.filter.redis;

import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.RedisServer;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Redis store through Sentinel ({@code redis-sentinel://s1,s2,s3/0#mymaster}) on a loopback
 * primary, replica and three sentinels: two filters enforce one quota on the primary the sentinels
 * name; with that primary killed under load, no request fails, decisions fall back to the local
 * shares, and the store follows the promotion back to Redis. The kill runs last: it changes the pair.
 */
@Timeout(60)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RedisSentinelTest {
    @RegisterExtension
    static final RedisSentinels sentinels = new RedisSentinels();

    /** The bound of {@link SharedQuotaTest#twoInstancesSharingRedisAdmitOneQuota}, through Sentinel. */
    @Test
    @Order(1)
    void twoInstancesFindingThePrimaryThroughSentinelAdmitOneQuota() throws Exception {
        String prefix = RedisServer.randomPrefix();
        SharedQuotaTest.assertTwoInstancesAdmitOneQuota(sentinels.uri(), prefix);
        assertThat(RedisCluster.keys(sentinels.primary(), prefix)).as("buckets on the primary").isPositive();
    }

    @Test
    @Order(2)
    void killingThePrimaryUnderLoadFallsBackWithinTheBoundAndFollowsThePromotion() throws Exception {
        try (FailoverUnderLoad run = new FailoverUnderLoad(sentinels.uri(), 30, 4)) {
            run.awaitReadyToKill();
            assertThat(run.fallbackDecisions()).as("decided on Redis before the kill").isZero();

            RedisServer primary = sentinels.primary();
            RedisServer replica = sentinels.other(primary);
            FailoverUnderLoad.awaitReplicated(primary);
            long killed = System.nanoTime();
            primary.kill();
            Await.within(10, "decisions falling back", () -> run.fallbackDecisions() > 0);
            long back = run.awaitBackOnRedis(30, () -> sentinels.promoted(replica));

            run.assertFailedOverWithinBound("sentinel", (back - killed) / 1e9);
            assertThat(RedisCluster.keys(replica, run.prefix)).as("buckets on the promoted replica").isPositive();
        }
    }
}

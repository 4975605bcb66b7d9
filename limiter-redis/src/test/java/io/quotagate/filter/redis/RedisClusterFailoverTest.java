package io.quotagate.filter.redis;

import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.RedisServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.Comparator;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A primary of a loopback Redis Cluster killed (SIGKILL, by PID) under load from two filter
 * instances: no request fails, the decisions for the dead primary's slots fall back to the local
 * shares, the store is back on Redis once the replica is promoted, and no tenant gets more than the
 * bound {@link FailoverUnderLoad} derives.
 */
@Timeout(60)
class RedisClusterFailoverTest {
    @RegisterExtension
    static final RedisCluster cluster = new RedisCluster();

    @Test
    void killingAPrimaryUnderLoadFallsBackWithinTheBoundAndReturnsAfterThePromotion() throws Exception {
        try (FailoverUnderLoad run = new FailoverUnderLoad(cluster.uri(), 30, 4)) {
            run.awaitReadyToKill();
            assertThat(run.fallbackDecisions()).as("decided on Redis before the kill").isZero();

            // the primary holding most of this run's buckets
            RedisServer victim = cluster.primaries().stream()
                    .max(Comparator.comparingInt(p -> keys(p, run.prefix))).orElseThrow();
            assertThat(keys(victim, run.prefix)).as("buckets on the primary to kill").isPositive();
            FailoverUnderLoad.awaitReplicated(victim);
            long killed = System.nanoTime();
            victim.kill();
            Await.within(10, "decisions falling back", () -> run.fallbackDecisions() > 0);
            long back = run.awaitBackOnRedis(30, cluster::healthy);

            run.assertFailedOverWithinBound("cluster", (back - killed) / 1e9);
            assertThat(cluster.primaries()).as("the replica promoted").hasSize(3).doesNotContain(victim);
        }
    }

    private static int keys(RedisServer node, String prefix) {
        try {
            return RedisCluster.keys(node, prefix);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}

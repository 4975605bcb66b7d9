package io.quotagate.filter.redis;

import io.quotagate.filter.testing.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A primary of a loopback Redis Cluster killed (SIGKILL, by PID) under load from two filter
 * instances: no request fails, the decisions for the dead primary's slots fall back to the local
 * shares, the store is back on Redis once the replica is promoted, and no tenant gets more than the
 * bound {@link FailoverUnderLoad} derives.
 */
@Timeout(60)
class RedisClusterFailoverTest {
    private static RedisCluster cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = RedisCluster.start();
    }

    @AfterAll
    static void stopCluster() throws Exception {
        if (cluster != null) cluster.close();
    }

    @Test
    void killingAPrimaryUnderLoadFallsBackWithinTheBoundAndReturnsAfterThePromotion() throws Exception {
        try (FailoverUnderLoad run = new FailoverUnderLoad(cluster.uri(), 30, 4)) {
            FailoverUnderLoad.await(20, "every tenant's bucket drained on Redis", run::allDrained);
            assertThat(run.fallbackDecisions()).as("decided on Redis before the kill").isZero();

            RedisServer victim = cluster.primaryOf(run.a.key(io.quotagate.filter.core.BucketKind.TENANT, "t0"));
            long killed = System.nanoTime();
            victim.kill();
            FailoverUnderLoad.await(10, "decisions falling back", () -> run.fallbackDecisions() > 0);
            long back = run.awaitBackOnRedis(30, cluster::healthy);

            run.assertFailedOverWithinBound("cluster", (back - killed) / 1e9);
            assertThat(cluster.primaries()).as("the replica promoted").hasSize(3).doesNotContain(victim);
        }
    }
}

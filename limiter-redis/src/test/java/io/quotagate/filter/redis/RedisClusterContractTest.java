package io.quotagate.filter.redis;

import io.quotagate.filter.testing.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The store contract on a Redis Cluster of the test's own (three primaries, three replicas): every
 * bucket operation and the heartbeat are single-key commands that Lettuce routes to the slot's
 * primary, so the store behaves on a cluster as on one server.
 */
class RedisClusterContractTest extends RedisBucketStoreContractTest {
    private static RedisCluster cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = RedisCluster.start();
    }

    @AfterAll
    static void stopCluster() throws Exception {
        if (cluster != null) cluster.close();
    }

    @Override
    String uri() {
        return cluster.uri();
    }

    @Override
    RedisServer serverOf(String key) throws Exception {
        return cluster.primaryOf(key);
    }
}

package io.quotagate.filter.redis;

import io.quotagate.filter.testing.RedisServer;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The store contract on a Redis Cluster of the test's own (three primaries, three replicas): every
 * bucket operation and the heartbeat are single-key commands that Lettuce routes to the slot's
 * primary, so the store behaves on a cluster as on one server.
 */
class RedisClusterContractTest extends RedisBucketStoreContractTest {
    @RegisterExtension
    static final RedisCluster cluster = new RedisCluster();

    @Override
    String uri() {
        return cluster.uri();
    }

    @Override
    RedisServer serverOf(String key) throws Exception {
        return cluster.primaryOf(key);
    }
}

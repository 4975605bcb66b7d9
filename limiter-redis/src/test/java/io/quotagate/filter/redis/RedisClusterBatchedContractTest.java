package io.quotagate.filter.redis;



/**
 * The store contract on a Redis Cluster with {@code batching: true}: bucket4j's buckets, one key per
 * operation routed to its slot's primary.
 */
class RedisClusterBatchedContractTest extends RedisClusterContractTest {
    @Override
    RedisSettings settings(RedisSettings base) {
        return base.withBatching(true);
    }
}

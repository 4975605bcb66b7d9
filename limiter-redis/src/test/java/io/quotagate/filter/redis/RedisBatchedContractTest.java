package io.quotagate.filter.redis;



/**
 * The store contract with {@code batching: true}: bucket4j's compare-and-swap buckets, concurrent requests on
 * one bucket combined (the default is the store's own script, run by {@link RedisBucketStoreContractTest}).
 */
class RedisBatchedContractTest extends RedisBucketStoreContractTest {
    @Override
    RedisSettings settings(RedisSettings base) {
        return base.withBatching(true);
    }
}

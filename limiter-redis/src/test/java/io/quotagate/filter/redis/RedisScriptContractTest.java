package io.quotagate.filter.redis;



/**
 * The store contract with {@code batching: false}: every operation, and every request's buckets together,
 * decided by the store's own script ({@link BucketScript}), one call each.
 */
class RedisScriptContractTest extends RedisBucketStoreContractTest {
    @Override
    RedisSettings settings(RedisSettings base) {
        return base.withBatching(false);
    }
}

package io.quotagate.filter.redis;

import io.quotagate.plans.StoreSettings;

/**
 * The store contract with {@code batching: false}: every operation, and every request's buckets together,
 * decided by the store's own script ({@link BucketScript}), one call each.
 */
class RedisScriptContractTest extends RedisBucketStoreContractTest {
    @Override
    StoreSettings settings(StoreSettings base) {
        return base.withBatching(false);
    }
}

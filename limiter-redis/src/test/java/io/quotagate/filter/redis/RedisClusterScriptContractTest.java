package io.quotagate.filter.redis;

import io.quotagate.plans.StoreSettings;

/**
 * The store contract on a Redis Cluster with the store's own script: a request's keys live on different
 * slots, so {@code takeAll} sends one call per key at once and gives back what was taken on a refusal.
 */
class RedisClusterScriptContractTest extends RedisClusterContractTest {
    @Override
    StoreSettings settings(StoreSettings base) {
        return base.withBatching(false);
    }
}

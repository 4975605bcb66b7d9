package io.quotagate.filter.redis;



/**
 * The store contract on a Redis Cluster with the store's own script: a request's keys live on different
 * slots, so {@code takeAll} sends one call per key at once and gives back what was taken on a refusal.
 */
class RedisClusterScriptContractTest extends RedisClusterContractTest {
    @Override
    RedisSettings settings(RedisSettings base) {
        return base.withBatching(false);
    }
}

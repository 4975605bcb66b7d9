package io.quotagate.filter.redis;

import java.time.Duration;

/**
 * The store contract on a Redis Cluster with a local allowance: bucket4j's buckets, one key per
 * operation routed to its slot's primary (the store's script on a cluster is {@link RedisClusterContractTest}).
 */
class RedisClusterLocalAllowanceContractTest extends RedisClusterContractTest {
    @Override
    RedisSettings settings(RedisSettings base) {
        return base.withLocalAllowance(new RedisSettings.LocalAllowance(5, Duration.ofSeconds(1)));
    }
}

package io.quotagate.filter.redis;


import java.time.Duration;

/**
 * The store contract for a Redis store with a local allowance: one instance alone sees every unit it
 * admits, so its decisions stay exact whether taken on its own copy of a bucket or on Redis.
 */
class RedisLocalAllowanceContractTest extends RedisBucketStoreContractTest {
    @Override
    RedisSettings settings(RedisSettings base) {
        return base.withLocalAllowance(new RedisSettings.LocalAllowance(5, Duration.ofSeconds(1)));
    }
}

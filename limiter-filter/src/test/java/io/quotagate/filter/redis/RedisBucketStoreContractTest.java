package io.quotagate.filter.redis;

import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.store.BucketStoreContract;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.filter.testing.RedisServer;
import io.quotagate.plans.StoreSettings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

import java.time.Duration;

/** The store contract, for the Redis store on the real Redis at 127.0.0.1:6379 (a fresh key prefix per test). */
class RedisBucketStoreContractTest extends BucketStoreContract {
    private final ManualClock clock = new ManualClock();
    private RedisStore store;

    @BeforeEach
    void connect() {
        RedisServer redis = RedisServer.shared();
        store = RedisStore.connect(StoreSettings.redis(redis.uri()).withPrefix(RedisServer.randomPrefix()), 1_000,
                clock.wallClock(), clock);
    }

    @AfterEach
    void close() {
        if (store != null) store.close();
    }

    @Override
    protected BucketStore store() {
        return store;
    }

    @Override
    protected void advance(Duration d) {
        clock.advance(d);
    }
}

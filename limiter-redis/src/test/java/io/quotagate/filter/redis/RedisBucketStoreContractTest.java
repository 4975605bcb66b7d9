package io.quotagate.filter.redis;

import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.store.BucketStoreContract;
import io.quotagate.filter.testing.RedisServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** The store contract, for the Redis store on the real Redis at 127.0.0.1:6379 (a fresh key prefix per test). */
class RedisBucketStoreContractTest extends BucketStoreContract {
    private RedisStore store;
    private String prefix;

    @BeforeEach
    void connect() {
        prefix = RedisServer.randomPrefix();
        store = RedisStore.connect(settings(RedisSettings.of(uri()).withPrefix(prefix)
                        // generous for a loaded 2-core machine: this test is about behaviour, not speed
                        .withTimeout(Duration.ofSeconds(2))), 1_000,
                clock.wallClock(), clock);
    }

    /** The Redis the store connects to. */
    String uri() {
        return RedisServer.shared().uri();
    }

    /** The server holding {@code key} (the one server here; on a cluster, the primary owning its slot). */
    RedisServer serverOf(String key) throws Exception {
        return RedisServer.shared();
    }

    /** The settings under test: the defaults (the store's script: every decision on Redis, one call each). */
    RedisSettings settings(RedisSettings base) {
        return base;
    }

    @AfterEach
    void close() {
        if (store == null) return;
        try {
            // the contract must have been met by Redis itself, not by the local fallback
            assertThat(store.available()).as("Redis available").isTrue();
            assertThat(store.fallbackDecisions()).as("operations answered locally").isZero();
        } finally {
            store.close();
        }
    }

    @Test
    void aFreshPrefixCountsExactlyThisInstanceFromTheHeartbeatSet() throws Exception {
        assertThat(store.instanceCount()).as("alone on a fresh prefix").isEqualTo(1);
        RedisServer redis = serverOf(prefix + ":instances");
        Object score = redis.command("ZSCORE", prefix + ":instances", store.instanceId());
        assertThat(score).as("this instance's heartbeat entry in %s:instances", prefix).isNotNull();
        assertThat(redis.integer("ZCARD", prefix + ":instances")).isOne();
    }

    @Override
    protected BucketStore store() {
        return store;
    }
}

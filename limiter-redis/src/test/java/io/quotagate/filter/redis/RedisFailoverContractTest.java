package io.quotagate.filter.redis;

import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.store.BucketStoreContract;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The store contract for the failover path: a Redis store whose Redis refuses connections answers
 * every operation from this instance's local share (the whole quota, alone on its prefix) and must
 * behave as any store does.
 */
class RedisFailoverContractTest extends BucketStoreContract {
    private RedisStore store;

    @BeforeEach
    void connectToNothing() throws IOException {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0)) {
            closedPort = s.getLocalPort();
        }
        store = RedisStore.connect(RedisSettings.of("redis://127.0.0.1:" + closedPort)
                .withHeartbeat(Duration.ofSeconds(30), Duration.ofSeconds(60)), 1_000, clock.wallClock(), clock);
    }

    @Override
    protected boolean unreachable() {
        return true;
    }

    @AfterEach
    void close() {
        try {
            assertThat(store.available()).as("Redis available").isFalse();
            assertThat(store.outages()).isOne();
        } finally {
            store.close();
        }
    }

    @Override
    protected BucketStore store() {
        return store;
    }
}

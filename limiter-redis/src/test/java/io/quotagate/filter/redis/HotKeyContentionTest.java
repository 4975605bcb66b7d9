package io.quotagate.filter.redis;

import io.github.bucket4j.BucketExceptions;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.store.BucketLimits;
import io.quotagate.filter.store.QuotaBucket;
import io.quotagate.filter.testing.Race;
import io.quotagate.filter.testing.RedisServer;
import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One hot key, many threads. With the store's script (the default) there is no contention at all:
 * every take is decided on Redis, exactly. With bucket4j's compare-and-swap (a local allowance), contention is not an
 * outage: Redis answered every attempt, so only the operation whose retries ran out is decided locally,
 * and the store stays on Redis for everyone else. Told apart by exception type
 * ({@link RedisHealth#classify}), not by message text.
 */
class HotKeyContentionTest {

    @Test
    void manyThreadsOnOneKeyAreAllDecidedOnRedisExactlyByTheScript() throws Exception {
        String prefix = RedisServer.randomPrefix();
        // one retry: bucket4j's compare-and-swap would run out of retries often; the script never retries
        RedisSettings settings = RedisSettings.of(PlansFile.parse("hot.yml", """
                plans: { free: { limits: [ { capacity: 1, refill: 1, period: 1s } ] } }
                tenants: { default-plan: free }
                store: { type: redis, uri: "%s", prefix: "%s", timeout: 500ms, max-retries: 1 }
                """.formatted(RedisServer.shared().uri(), prefix)).store());
        BucketLimits hot = BucketLimits.of(List.of(new Bandwidth("hot", 1_000_000, 1, Duration.ofDays(1))));
        try (RedisStore store = RedisStore.connect(settings, 100)) {
            assertThat(store.available()).isTrue();
            AtomicBoolean everDown = new AtomicBoolean();
            AtomicLong failures = new AtomicLong();
            Race.run(12, t -> {
                QuotaBucket b = store.bucket(BucketKind.TENANT, "hot", hot);
                for (int i = 0; i < 150; i++) {
                    try {
                        b.tryTake(1);
                    } catch (RuntimeException e) {
                        failures.incrementAndGet();
                    }
                    if (!store.available()) everDown.set(true);
                }
            });

            assertThat(failures.get()).as("operations that failed the caller").isZero();
            assertThat(store.fallbackDecisions()).as("operations decided locally").isZero();
            assertThat(store.bucket(BucketKind.TENANT, "hot", hot).available()).as("every take counted once")
                    .isEqualTo(1_000_000 - 12 * 150);
            assertThat(everDown.get()).as("Redis reported down while it answered").isFalse();
            assertThat(store.outages()).isZero();
            assertThat(store.available()).isTrue();
        }
    }

    @Test
    void failuresAreClassifiedByTypeNotByMessage() {
        // what bucket4j 8.x throws when the compare-and-swap retries run out (BucketExceptions.maxRetriesExceeded)
        assertThat(RedisHealth.classify(BucketExceptions.maxRetriesExceeded(1)))
                .isEqualTo(RedisHealth.Failure.CONTENTION);
        assertThat(RedisHealth.classify(new BucketExceptions.BucketExecutionException("any wording at all")))
                .isEqualTo(RedisHealth.Failure.CONTENTION);
        // a Redis failure, as bucket4j wraps it
        assertThat(RedisHealth.classify(BucketExceptions.from(new RedisConnectionException("retry attempts"))))
                .as("a message that mentions retries changes nothing").isEqualTo(RedisHealth.Failure.OUTAGE);
        assertThat(RedisHealth.classify(new io.lettuce.core.RedisException("Currently not connected")))
                .isEqualTo(RedisHealth.Failure.OUTAGE);
        assertThat(RedisHealth.classify(BucketExceptions.from(new RedisCommandTimeoutException("slow"))))
                .isEqualTo(RedisHealth.Failure.SLOW);
        assertThat(RedisHealth.classify(BucketExceptions.timeoutReached(1, 2))).isEqualTo(RedisHealth.Failure.SLOW);
        // an error reply: the server's trouble, unless its code says the key holds another type
        assertThat(RedisHealth.classify(new io.lettuce.core.RedisCommandExecutionException(
                "OOM command not allowed when used memory > 'maxmemory'."))).isEqualTo(RedisHealth.Failure.OUTAGE);
        assertThat(RedisHealth.classify(BucketExceptions.from(new io.lettuce.core.RedisCommandExecutionException(
                "WRONGTYPE Operation against a key holding the wrong kind of value"))))
                .isEqualTo(RedisHealth.Failure.VALUE);
        // no Lettuce exception at all: Redis answered, the value could not be read (bucket4j wraps the cause)
        assertThat(RedisHealth.classify(new IllegalStateException(new java.io.EOFException())))
                .isEqualTo(RedisHealth.Failure.VALUE);
        assertThat(RedisHealth.classify(new IllegalStateException(
                new io.github.bucket4j.distributed.versioning.UsageOfUnsupportedApiException(1_734_439_522, 2))))
                .isEqualTo(RedisHealth.Failure.VALUE);
    }
}

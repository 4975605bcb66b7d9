package io.quotagate.filter.redis;

import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.store.BucketLimits;
import io.quotagate.filter.store.QuotaBucket;
import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.LogCapture;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.filter.testing.RedisServer;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.logging.Level;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 6: the heartbeat set sizes the fallback (quota / instanceCount, last known count kept while
 * Redis is down), forgets silent instances, and an outage is logged once.
 */
class InstanceShareTest {
    /** Capacity 20; refill negligible (and the local clock never moves). */
    private static final BucketLimits TWENTY = BucketLimits.of(List.of(
            new io.quotagate.plans.Bandwidth("burst", 20, 1, Duration.ofHours(1))));

    private final ManualClock clock = new ManualClock();

    private static RedisSettings settings(RedisServer redis, String prefix) {
        return RedisSettings.of(redis.uri()).withPrefix(prefix)
                .withTimeout(Duration.ofMillis(200)).withHeartbeat(Duration.ofMillis(200), Duration.ofSeconds(2));
    }

    @Test
    void duringAnOutageEachInstanceHoldsItsShareWithTheLastKnownCount() throws Exception {
        try (RedisServer redis = RedisServer.startOwn()) {
            RedisSettings settings = settings(redis, RedisServer.randomPrefix());
            try (RedisStore a = RedisStore.connect(settings, 100, clock.wallClock(), clock);
                 RedisStore b = RedisStore.connect(settings, 100, clock.wallClock(), clock)) {
                Await.within(5, "both count 2", () -> a.instanceCount() == 2 && b.instanceCount() == 2);

                redis.kill();
                Await.within(5, "a notices the outage", () -> !a.available());
                QuotaBucket bucket = a.bucket(BucketKind.TENANT, "acme", TWENTY);
                int admitted = 0;
                for (int i = 0; i < 40; i++) {
                    if (bucket.tryTake(1)) admitted++;
                }
                assertThat(admitted).as("20 / 2 instances, answered locally").isEqualTo(10);
                assertThat(bucket.tryTake(1)).as("refused once the share is used").isFalse();
                assertThat(a.instanceCount()).as("the last known count is kept while Redis is down").isEqualTo(2);
                assertThat(a.fallbackDecisions()).isPositive();
            }
        }
    }

    @Test
    void theHeartbeatDropsEntriesOlderThanTheInstanceTtl() throws Exception {
        RedisServer redis = RedisServer.shared();
        String prefix = RedisServer.randomPrefix();
        RedisSettings settings = settings(redis, prefix);
        try (RedisStore store = RedisStore.connect(settings, 100, clock.wallClock(), clock)) {
            assertThat(store.instanceCount()).isEqualTo(1);
            @SuppressWarnings("unchecked")
            List<Object> time = (List<Object>) redis.command("TIME");
            long nowMillis = Long.parseLong((String) time.get(0)) * 1000 + Long.parseLong((String) time.get(1)) / 1000;
            long stale = nowMillis - settings.instanceTtl().toMillis() - 1000;
            redis.command("ZADD", prefix + ":instances", Long.toString(stale), "ghost");
            Await.within(5, "the stale ghost entry dropped by the heartbeat", () -> {
                try {
                    return redis.command("ZSCORE", prefix + ":instances", "ghost") == null && store.instanceCount() == 1;
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            assertThat(redis.command("ZSCORE", prefix + ":instances", store.instanceId())).as("this instance stays").isNotNull();
        }
    }

    @Test
    void theFallbackIsLoggedOncePerOutageAndTheReturnOnce() throws Exception {
        try (RedisServer redis = RedisServer.startOwn();
             LogCapture warnings = LogCapture.of(RedisStore.class, Level.WARNING);
             LogCapture infos = LogCapture.of(RedisStore.class, Level.INFO);
             RedisStore store = RedisStore.connect(settings(redis, RedisServer.randomPrefix()), 100, clock.wallClock(), clock)) {
            QuotaBucket bucket = store.bucket(BucketKind.TENANT, "acme", TWENTY);
            assertThat(bucket.tryTake(1)).isTrue();
            // this server keeps nothing on disk: said once at start, the only warning before the outage
            assertThat(warnings.messages()).filteredOn(m -> !m.contains("keeps nothing on disk")).isEmpty();

            redis.kill();
            // many requests, across several failed heartbeats
            for (int round = 0; round < 10; round++) {
                for (int i = 0; i < 50; i++) bucket.tryTake(1);
                Thread.sleep(100); // spreads the requests over real heartbeats (their own thread): not a poll
            }
            assertThat(store.available()).isFalse();
            assertThat(warnings.messages()).filteredOn(m -> m.contains("answering from local buckets"))
                    .as("one warning per outage").hasSize(1);

            redis.start();
            Await.within(5, "back on Redis after the restart", store::available);
            for (int i = 0; i < 50; i++) bucket.tryTake(1);
            assertThat(infos.messages()).filteredOn(m -> m.contains("answers again after")).as("one INFO on the way back").hasSize(1);
            assertThat(warnings.messages()).filteredOn(m -> m.contains("answers again after")).as("logged below WARNING").isEmpty();
            assertThat(warnings.messages()).filteredOn(m -> m.contains("answering from local buckets"))
                    .as("still the one warning").hasSize(1);
            assertThat(warnings.messages()).filteredOn(m -> m.contains("keeps nothing on disk"))
                    .as("asked again after the outage, said once").hasSize(1);
        }
    }
}

package io.quotagate.filter.redis;

import io.quotagate.filter.QuotaControl;
import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.filter.testing.RedisServer;
import io.quotagate.plans.CalendarQuota;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Calendar quotas with Redis: one count for every instance, kept in Redis, expiring after its period. */
class RedisCalendarQuotaTest {
    private static final Plans PLANS = PlansFile.parse("quota.yml", """
            plans:
              free:
                limits: [ { capacity: 100, refill: 100, period: 1s } ]
              pro:
                limits: [ { capacity: 100, refill: 100, period: 1s } ]
                quotas: [ { name: monthly, limit: 3, per: month } ]
            tenants:
              default-plan: free
              assignments: { acme: pro }
            """);

    /** 21:00 UTC on the last day of a month to come (the counter's expiry must lie in the real future). */
    private static final LocalDate MONTH = LocalDate.now(ZoneOffset.UTC).plusMonths(2).withDayOfMonth(1);
    private static final Instant NEAR_MONTH_END = MONTH.plusMonths(1).atStartOfDay(ZoneOffset.UTC).toInstant()
            .minus(Duration.ofHours(3));

    private final ManualClock clock = new ManualClock();
    private final Clock wall = clock.wallClock(NEAR_MONTH_END);

    record Instance(RedisStore store, QuotaFilter filter, JettyServer server) implements AutoCloseable {
        static Instance start(RedisSettings settings, Clock wall) throws Exception {
            RedisStore store = RedisStore.connect(settings, 1_000);
            QuotaFilter filter = QuotaFilter.builder().plans(PLANS).store(store).wallClock(wall).build();
            return new Instance(store, filter, JettyServer.start(filter));
        }

        QuotaControl control() {
            return filter.control();
        }

        HttpResponse<String> get(String tenant) throws Exception {
            return Http.get(server.uri("/items/1"), tenant);
        }

        @Override
        public void close() throws Exception {
            server.close();
            store.close();
        }
    }

    @Test
    void everyInstanceCountsInOneRedisCounterThatOutlivesARestartAndExpiresAfterItsPeriod() throws Exception {
        RedisServer redis = RedisServer.shared();
        String prefix = RedisServer.randomPrefix();
        RedisSettings s = RedisSettings.of(redis.uri()).withPrefix(prefix).withTimeout(Duration.ofMillis(500));
        try (Instance b = Instance.start(s, wall)) {
            try (Instance a = Instance.start(s, wall)) {
                assertThat(a.get("acme").statusCode()).isEqualTo(200);
                assertThat(a.get("acme").statusCode()).isEqualTo(200);
                assertThat(b.get("acme").statusCode()).isEqualTo(200);
                HttpResponse<String> refused = b.get("acme");
                assertThat(refused.statusCode()).isEqualTo(429);
                assertThat(refused.headers().firstValue("Retry-After")).hasValue("10800");
                assertThat(refused.body()).contains("\"reason\":\"quota\"").contains("'monthly'");
                assertThat(a.get("acme").statusCode()).as("the same count on A").isEqualTo(429);
                assertThat(a.control().tenantQuotas("acme").get(0).used()).isEqualTo(3);
            }
            String key = prefix + ":quota:monthly:acme:" + MONTH;
            assertThat(redis.command("GET", key)).isEqualTo("3");
            // kept for the usage export: the month, the 3 closed months after it, and an hour
            long expiresAt = MONTH.plusMonths(4).atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli() + 3_600_000L;
            long before = System.currentTimeMillis(); // read before the command: the TTL counts down from there
            long pttl = Long.parseLong(String.valueOf(redis.command("PTTL", key)));
            assertThat(pttl).as("expires an hour after the 3 months kept after it")
                    .isBetween(expiresAt - before - 10_000, expiresAt - before);

            try (Instance restarted = Instance.start(s, wall)) {
                assertThat(restarted.get("acme").statusCode()).as("a restart resets nothing").isEqualTo(429);
            }
            clock.advance(Duration.ofHours(3));
            assertThat(b.get("acme").statusCode()).as("the next month").isEqualTo(200);
            assertThat(redis.command("GET", prefix + ":quota:monthly:acme:" + MONTH.plusMonths(1))).isEqualTo("1");
        }
    }

    @Test
    void whileRedisIsDeadAQuotaCountsLocallyUnderOpenAndRefusesWith503UnderClosed() throws Exception {
        try (RedisServer redis = RedisServer.startOwn()) {
            String prefix = RedisServer.randomPrefix();
            RedisSettings open = RedisSettings.of(redis.uri()).withPrefix(prefix).withTimeout(Duration.ofMillis(200))
                    .withHeartbeat(Duration.ofMillis(200), Duration.ofSeconds(2));
            try (Instance a = Instance.start(open, wall);
                 Instance closed = Instance.start(open.withOnFailure(RedisSettings.OnFailure.CLOSED), wall)) {
                assertThat(a.get("acme").statusCode()).isEqualTo(200);
                Await.within(3, "A counts both instances", () -> a.store().instanceCount() == 2);
                redis.kill();
                // a fresh local count against this instance's share (3 / 2 instances = 1) for the outage
                int[] statuses = new int[3];
                for (int i = 0; i < statuses.length; i++) statuses[i] = a.get("acme").statusCode();
                assertThat(statuses).containsExactly(200, 429, 429);
                assertThat(a.store().available()).isFalse();
                HttpResponse<String> refused = closed.get("acme");
                assertThat(refused.statusCode()).isEqualTo(503);
                assertThat(refused.body()).contains("store_unavailable");
            }
        }
    }

    @Test
    void quotasSetAtRuntimeReachEveryInstanceThroughTheRecordFormatTwo() throws Exception {
        RedisServer redis = RedisServer.shared();
        String prefix = RedisServer.randomPrefix();
        RedisSettings s = RedisSettings.of(redis.uri()).withPrefix(prefix).withTimeout(Duration.ofMillis(500));
        try (Instance a = Instance.start(s, wall); Instance b = Instance.start(s, wall)) {
            assertThat(String.valueOf(redis.command("HGET", prefix + ":limits", "body"))).startsWith("{\"format\":2,");
            List<CalendarQuota> one = List.of(new CalendarQuota("daily", 1, CalendarQuota.Per.DAY, ZoneOffset.UTC));
            a.control().setPlanQuotas("pro", one);
            Await.within(3, "B enforces the new quota", () -> b.control().plans().plan("pro").orElseThrow().quotas()
                    .equals(one));
            assertThat(b.get("acme").statusCode()).isEqualTo(200);
            assertThat(a.get("acme").statusCode()).isEqualTo(429);
        }
    }
}

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
import io.quotagate.tenant.TenantContract;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Anchored quota periods on Redis, two instances on one Redis and one manual wall clock: one counter per anchored
 * period (labelled by its start date), the same Retry-After and readout from both, across a leap February's end
 * and the DST changes of Berlin and New York; a tenant's zone set at runtime reaches both instances.
 */
class RedisAnchoredQuotaTest {
    private static final Plans PLANS = PlansFile.parse("anchors.yml", """
            plans:
              free:
                limits: [ { capacity: 100, refill: 100, period: 1s } ]
              pro:
                limits: [ { capacity: 100, refill: 100, period: 1s } ]
                quotas:
                  - { name: monthly, limit: 3, per: month, zone: Europe/Berlin, anchor: { day: 31, time: "09:00" } }
              daily:
                limits: [ { capacity: 100, refill: 100, period: 1s } ]
                quotas:
                  - { name: daily, limit: 2, per: day, zone: Europe/Berlin, anchor: { time: "02:30" } }
            tenants:
              default-plan: free
              assignments: { acme: pro, initech: daily }
              overrides:
                globex: { plan: daily, zone: America/New_York }
            """);

    private final ManualClock clock = new ManualClock();

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

    private static RedisSettings settings(String prefix) {
        return RedisSettings.of(RedisServer.shared().uri()).withPrefix(prefix).withTimeout(Duration.ofMillis(500));
    }

    private static String retryAfter(HttpResponse<String> r) {
        assertThat(r.statusCode()).isEqualTo(429);
        assertThat(r.body()).contains("\"reason\":\"quota\"");
        return r.headers().firstValue("Retry-After").orElseThrow();
    }

    @Test
    void twoInstancesCountOneAnchoredMonthFromJan31ToFeb29ToMar31() throws Exception {
        RedisServer redis = RedisServer.shared();
        String prefix = RedisServer.randomPrefix();
        Clock wall = clock.wallClock(Instant.parse("2028-02-29T07:59:00Z")); // 08:59 in Berlin, in the period of Jan 31
        try (Instance a = Instance.start(settings(prefix), wall); Instance b = Instance.start(settings(prefix), wall)) {
            assertThat(a.get("acme").statusCode()).isEqualTo(200);
            assertThat(b.get("acme").statusCode()).isEqualTo(200);
            assertThat(a.get("acme").statusCode()).isEqualTo(200);
            assertThat(retryAfter(b.get("acme"))).isEqualTo("60");
            assertThat(retryAfter(a.get("acme"))).isEqualTo("60");
            assertThat(redis.command("GET", prefix + ":quota:monthly:acme:2028-01-31")).isEqualTo("3");

            clock.advance(Duration.ofSeconds(60)); // Feb 29 09:00 CET: the anchor on a leap February's last day
            assertThat(b.get("acme").statusCode()).isEqualTo(200);
            assertThat(a.get("acme").statusCode()).isEqualTo(200);
            assertThat(b.get("acme").statusCode()).isEqualTo(200);
            // to Mar 31 09:00 CEST (07:00Z): 31 days less the hour Berlin skips on Mar 26
            String toMarch31 = String.valueOf(31 * 86_400 - 3_600);
            assertThat(retryAfter(a.get("acme"))).isEqualTo(toMarch31);
            assertThat(retryAfter(b.get("acme"))).isEqualTo(toMarch31);
            assertThat(redis.command("GET", prefix + ":quota:monthly:acme:2028-02-29")).isEqualTo("3");
            for (Instance i : new Instance[]{a, b}) {
                assertThat(i.control().tenantQuotas("acme")).singleElement().satisfies(u -> {
                    assertThat(u.used()).isEqualTo(3);
                    assertThat(u.resetsAt()).isEqualTo(Instant.parse("2028-03-31T07:00:00Z"));
                });
            }
            // the counter outlives its period by the closed periods kept for the usage export (3 by default: to the
            // anchored Jun 30 09:00 CEST) and the grace hour, whatever the anchor
            long expiresAt = Instant.parse("2028-06-30T08:00:00Z").toEpochMilli();
            long before = System.currentTimeMillis();
            long pttl = Long.parseLong(String.valueOf(redis.command("PTTL", prefix + ":quota:monthly:acme:2028-02-29")));
            assertThat(pttl).isBetween(expiresAt - before - 10_000, expiresAt - before);

            clock.advance(Duration.ofDays(31).minusHours(1)); // Mar 31 09:00 CEST: the 31st again, not drifted to the 29th
            assertThat(a.get("acme").statusCode()).isEqualTo(200);
            assertThat(redis.command("GET", prefix + ":quota:monthly:acme:2028-03-31")).isEqualTo("1");
        }
    }

    @Test
    void aDailyAnchorInsideBerlinsSkippedHourStartsAtTheFirstValidTimeOnBothInstances() throws Exception {
        RedisServer redis = RedisServer.shared();
        String prefix = RedisServer.randomPrefix();
        // 2027-03-28: Berlin skips 02:00-03:00 CET; the day anchored at 02:30 starts at 03:00 CEST (01:00Z)
        Clock wall = clock.wallClock(Instant.parse("2027-03-28T00:59:00Z"));
        try (Instance a = Instance.start(settings(prefix), wall); Instance b = Instance.start(settings(prefix), wall)) {
            assertThat(a.get("initech").statusCode()).isEqualTo(200);
            assertThat(b.get("initech").statusCode()).isEqualTo(200);
            assertThat(retryAfter(a.get("initech"))).isEqualTo("60");
            assertThat(redis.command("GET", prefix + ":quota:daily:initech:2027-03-27")).isEqualTo("2");
            clock.advance(Duration.ofSeconds(60));
            assertThat(b.get("initech").statusCode()).isEqualTo(200);
            assertThat(a.get("initech").statusCode()).isEqualTo(200);
            // 03:00 CEST to 02:30 CEST tomorrow: 23.5 hours
            assertThat(retryAfter(b.get("initech"))).isEqualTo(String.valueOf(23 * 3_600 + 1_800));
            assertThat(redis.command("GET", prefix + ":quota:daily:initech:2027-03-28")).isEqualTo("2");
        }
    }

    @Test
    void aTenantInNewYorkCountsInItsZoneOnBothInstancesAndAZoneSetAtRuntimeReachesThem() throws Exception {
        RedisServer redis = RedisServer.shared();
        String prefix = RedisServer.randomPrefix();
        // 2027-03-14: New York skips 02:00-03:00 EST; globex's day anchored at 02:30 starts at 03:00 EDT (07:00Z)
        Clock wall = clock.wallClock(Instant.parse("2027-03-14T06:00:00Z"));
        try (Instance a = Instance.start(settings(prefix), wall); Instance b = Instance.start(settings(prefix), wall)) {
            assertThat(a.get("globex").statusCode()).isEqualTo(200);
            assertThat(b.get("globex").statusCode()).isEqualTo(200);
            assertThat(retryAfter(a.get("globex"))).isEqualTo("3600");
            assertThat(redis.command("GET", prefix + ":quota:daily:globex:2027-03-13")).isEqualTo("2");
            // initech in the plan's zone (Berlin, 07:00 CET now): its day began at 02:30 CET today
            assertThat(b.control().tenantQuotas("initech").get(0).resetsAt()).isEqualTo(Instant.parse("2027-03-15T01:30:00Z"));

            // initech moves to New York at runtime, on A: B counts it there too
            a.control().setTenant("initech", TenantContract.onPlan("daily").withZone(ZoneId.of("America/New_York")));
            Await.within(3, "B has initech in New York", () -> b.control().tenantQuotas("initech").get(0).resetsAt()
                    .equals(Instant.parse("2027-03-14T07:00:00Z")));
            assertThat(String.valueOf(redis.command("HGET", prefix + ":limits", "body"))).startsWith("{\"format\":4,");
            assertThat(b.get("initech").statusCode()).isEqualTo(200);
            assertThat(a.get("initech").statusCode()).isEqualTo(200);
            assertThat(retryAfter(b.get("initech"))).isEqualTo("3600");
            assertThat(redis.command("GET", prefix + ":quota:daily:initech:2027-03-13")).isEqualTo("2");

            clock.advance(Duration.ofHours(1)); // 03:00 EDT: a 23.5-hour day for both
            for (String tenant : new String[]{"globex", "initech"}) {
                assertThat(a.get(tenant).statusCode()).isEqualTo(200);
                assertThat(b.get(tenant).statusCode()).isEqualTo(200);
                assertThat(retryAfter(a.get(tenant))).isEqualTo(String.valueOf(23 * 3_600 + 1_800));
                assertThat(redis.command("GET", prefix + ":quota:daily:" + tenant + ":2027-03-14")).isEqualTo("2");
            }
        }
    }
}

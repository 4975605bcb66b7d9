package io.quotagate.filter.redis;

import io.quotagate.filter.QuotaControl;
import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.status.TenantUsage;
import io.quotagate.filter.status.UsagePage;
import io.quotagate.filter.store.QuotaCounters;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.filter.testing.RedisServer;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import io.quotagate.tenant.TenantDirectory;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The usage export read from Redis: every tenant once over bounded pages, and the same figures from every
 * instance sharing the store.
 */
class RedisUsageExportTest {
    private static final Plans PLANS = PlansFile.parse("usage.yml", """
            plans:
              free:
                limits: [ { capacity: 1000, refill: 1000, period: 1s } ]
              pro:
                limits: [ { capacity: 1000, refill: 1000, period: 1s } ]
                quotas: [ { name: monthly, limit: 1000000, per: month } ]
            tenants:
              default-plan: free
            """);
    /** Mid-month, a month to come (the counters' expiry must lie in the real future). */
    private static final LocalDate MONTH = LocalDate.now(ZoneOffset.UTC).plusMonths(2).withDayOfMonth(1);
    private static final Instant MID_MONTH = MONTH.plusDays(14).atStartOfDay(ZoneOffset.UTC).toInstant();
    /** Every tenant whose id starts with "bulk" or "two" is on pro. */
    private static final TenantDirectory DIRECTORY = tenant -> tenant.startsWith("bulk") || tenant.startsWith("two")
            ? Optional.of("pro") : Optional.empty();

    private final ManualClock clock = new ManualClock();
    private final Clock wall = clock.wallClock(MID_MONTH);

    private QuotaFilter filter(RedisStore store) {
        return QuotaFilter.builder().plans(PLANS).store(store).tenantDirectory(DIRECTORY).wallClock(wall).build();
    }

    /** The whole export, page by page, each tenant at most once; the page sizes into {@code sizes}. */
    private static Map<String, TenantUsage> export(QuotaControl control, int size, List<Integer> sizes) {
        Map<String, TenantUsage> seen = new HashMap<>();
        String cursor = null;
        do {
            UsagePage page = control.usage(cursor, size);
            sizes.add(page.tenants().size());
            for (TenantUsage t : page.tenants()) {
                assertThat(seen.put(t.tenant(), t)).as("%s listed once", t.tenant()).isNull();
            }
            cursor = page.next();
        } while (cursor != null);
        return seen;
    }

    @Test
    void tenThousandTenantsAreExportedFromRedisEachExactlyOnceInBoundedPages() throws Exception {
        RedisServer redis = RedisServer.shared();
        String prefix = RedisServer.randomPrefix();
        int tenants = 10_000;
        long expires = MONTH.plusMonths(5).atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli();
        try (RedisStore store = RedisStore.connect(RedisSettings.of(redis.uri()).withPrefix(prefix)
                .withTimeout(Duration.ofSeconds(2)), 1_000)) {
            QuotaCounters counters = store.quotaCounters().orElseThrow();
            long now = MID_MONTH.toEpochMilli();
            for (int i = 0; i < tenants; i++) {
                // every tenth used the quota only last month: a closed period alone still lists it
                String label = i % 10 == 0 ? MONTH.minusMonths(1).toString() : MONTH.toString();
                counters.add("monthly:bulk" + i + ":" + label, 1 + i % 7, now, expires);
            }
            QuotaFilter filter = filter(store);
            int size = 500;
            List<Integer> sizes = new ArrayList<>();
            long started = System.nanoTime();
            Map<String, TenantUsage> seen = export(filter.control(), size, sizes);
            long millis = (System.nanoTime() - started) / 1_000_000;
            System.out.printf("usage export: %d tenants from Redis in %d pages of at most %d (size %d) in %d ms%n",
                    seen.size(), sizes.size(), sizes.stream().mapToInt(Integer::intValue).max().orElse(0), size, millis);

            assertThat(seen).hasSize(tenants);
            // SCAN's COUNT is a hint: a step returns about that many keys, never the whole keyspace
            assertThat(sizes).allSatisfy(n -> assertThat(n).isLessThanOrEqualTo(2 * size));
            assertThat(sizes.size()).isGreaterThanOrEqualTo(tenants / (2 * size));
            for (int i = 0; i < tenants; i++) {
                TenantUsage t = seen.get("bulk" + i);
                assertThat(t).as("bulk%d", i).isNotNull();
                assertThat(t.periods()).hasSize(4); // this month and the 3 kept
                long expected = 1 + i % 7;
                assertThat(t.periods().get(i % 10 == 0 ? 1 : 0).used()).as("bulk%d", i).isEqualTo(expected);
                assertThat(t.periods().stream().mapToLong(TenantUsage.Period::used).sum()).isEqualTo(expected);
            }
        }
    }

    @Test
    void twoInstancesOnOneRedisExportTheSameFigures() throws Exception {
        RedisServer redis = RedisServer.shared();
        RedisSettings settings = RedisSettings.of(redis.uri()).withPrefix(RedisServer.randomPrefix())
                .withTimeout(Duration.ofSeconds(2));
        try (RedisStore storeA = RedisStore.connect(settings, 1_000);
             RedisStore storeB = RedisStore.connect(settings, 1_000)) {
            QuotaFilter a = filter(storeA);
            QuotaFilter b = filter(storeB);
            try (JettyServer serverA = JettyServer.start(a); JettyServer serverB = JettyServer.start(b)) {
                for (int i = 0; i < 12; i++) {
                    JettyServer via = i % 2 == 0 ? serverA : serverB;
                    for (int n = 0; n <= i % 3; n++) {
                        assertThat(Http.get(via.uri("/items/1"), "two" + i).statusCode()).isEqualTo(200);
                    }
                }
                assertThat(Http.get(serverB.uri("/items/1"), "two0").statusCode()).isEqualTo(200); // on B as well
                Http.get(serverA.uri("/items/1"), "free-one"); // no quota: not exported
            }
            String fromA = whole(a.control());
            String fromB = whole(b.control());
            assertThat(fromA).isEqualTo(fromB);
            Map<String, TenantUsage> seen = export(a.control(), 5, new ArrayList<>());
            assertThat(seen).hasSize(12);
            assertThat(seen.get("two0").periods().get(0).used()).as("counted on A and B").isEqualTo(2);
            assertThat(seen.get("two5").periods().get(0).used()).isEqualTo(3);
        }
    }

    /** The whole export as CSV lines in tenant order (SCAN's order differs between calls of one instance too). */
    private static String whole(QuotaControl control) {
        List<String> lines = new ArrayList<>();
        String cursor = null;
        do {
            UsagePage page = control.usage(cursor, 3);
            lines.addAll(List.of(page.csv(false).split("\r\n")));
            cursor = page.next();
        } while (cursor != null);
        lines.removeIf(String::isEmpty);
        lines.sort(null);
        return String.join("\n", lines);
    }
}

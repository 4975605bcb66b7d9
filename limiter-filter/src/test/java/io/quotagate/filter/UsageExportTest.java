package io.quotagate.filter;

import io.quotagate.filter.status.TenantUsage;
import io.quotagate.filter.status.UsagePage;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.CalendarQuota;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The usage export on the local store, through real Jetty: every tenant once, current and closed periods. */
class UsageExportTest {
    private static final String PLANS = """
            plans:
              free:
                limits: [ { capacity: 1000, refill: 1000, period: 1s } ]
                quotas:
                  - { name: monthly, limit: 100, per: month, zone: UTC }
                  - { name: daily, limit: 50, per: day, zone: UTC }
              basic:
                limits: [ { capacity: 1000, refill: 1000, period: 1s } ]
            routes:
              - { name: export, paths: ["/export"], cost: 3 }
            tenants:
              default-plan: basic
              assignments: { %s }
            """;

    private final ManualClock clock = new ManualClock();
    private QuotaFilter filter;
    private JettyServer server;

    @AfterEach
    void stop() throws Exception {
        if (server != null) server.close();
    }

    private void start(List<String> tenants, int kept) throws Exception {
        StringBuilder assignments = new StringBuilder();
        for (String t : tenants) assignments.append(assignments.isEmpty() ? "" : ", ").append('"').append(t).append("\": free");
        assignments.append(", \"basic-one\": basic");
        filter = QuotaFilter.builder().plans(PlansFile.parse("plans.yml", PLANS.formatted(assignments)))
                .clock(clock).wallClock(clock.wallClock(Instant.parse("2027-01-31T22:00:00Z")))
                .closedPeriodsKept(kept).build();
        server = JettyServer.start(filter);
    }

    private static Map<String, TenantUsage> all(QuotaControl control, int size, List<Integer> pageSizes) {
        Map<String, TenantUsage> seen = new HashMap<>();
        String cursor = null;
        do {
            UsagePage page = control.usage(cursor, size);
            pageSizes.add(page.tenants().size());
            for (TenantUsage t : page.tenants()) {
                assertThat(seen.put(t.tenant(), t)).as("tenant %s listed once", t.tenant()).isNull();
            }
            cursor = page.next();
        } while (cursor != null);
        return seen;
    }

    @Test
    void listsEveryTenantThatUsedAQuotaExactlyOnceWithTheCurrentAndTheKeptClosedPeriods() throws Exception {
        List<String> tenants = new ArrayList<>();
        for (int i = 0; i < 23; i++) tenants.add("t" + i + "-" + Long.toHexString(System.nanoTime()));
        start(tenants, 2);
        for (String t : tenants) assertThat(Http.get(server.uri("/export"), t).statusCode()).isEqualTo(200);
        Http.get(server.uri("/items"), "basic-one"); // a plan without quotas: not exported
        clock.advance(Duration.ofHours(3)); // February
        for (String t : tenants.subList(0, 5)) Http.get(server.uri("/items"), t);

        List<Integer> pageSizes = new ArrayList<>();
        Map<String, TenantUsage> seen = all(filter.control(), 4, pageSizes);
        assertThat(seen.keySet()).containsExactlyInAnyOrderElementsOf(tenants);
        assertThat(pageSizes).allSatisfy(n -> assertThat(n).isLessThanOrEqualTo(4));

        TenantUsage first = seen.get(tenants.get(0));
        assertThat(first.plan()).isEqualTo("free");
        // monthly: February (current), January, December; then daily: Feb 1 (current), Jan 31, Jan 30
        assertThat(first.periods()).extracting(TenantUsage.Period::quota)
                .containsExactly("monthly", "monthly", "monthly", "daily", "daily", "daily");
        TenantUsage.Period feb = first.periods().get(0);
        assertThat(feb).isEqualTo(new TenantUsage.Period("monthly", CalendarQuota.Per.MONTH, 100,
                Instant.parse("2027-02-01T00:00:00Z"), Instant.parse("2027-03-01T00:00:00Z"), false, 1));
        assertThat(first.periods().get(1)).isEqualTo(new TenantUsage.Period("monthly", CalendarQuota.Per.MONTH, 100,
                Instant.parse("2027-01-01T00:00:00Z"), Instant.parse("2027-02-01T00:00:00Z"), true, 3));
        assertThat(first.periods().get(2).used()).as("December: nothing counted").isZero();
        assertThat(first.periods().get(4)).isEqualTo(new TenantUsage.Period("daily", CalendarQuota.Per.DAY, 50,
                Instant.parse("2027-01-31T00:00:00Z"), Instant.parse("2027-02-01T00:00:00Z"), true, 3));
        assertThat(seen.get(tenants.get(10)).periods().get(0).used()).as("nothing in February").isZero();
        assertThat(seen.get(tenants.get(10)).periods().get(1).used()).isEqualTo(3);

        UsagePage one = filter.control().usage(null, 100);
        assertThat(one.next()).isNull();
        assertThat(one.csv(true)).startsWith(UsagePage.CSV_HEADER + "\r\n")
                .contains(first.tenant() + ",free,monthly,month,100,2027-01-01T00:00:00Z,2027-02-01T00:00:00Z,true,3\r\n");
        assertThat(one.json()).startsWith("{\"tenants\":[{\"tenant\":").endsWith("],\"next\":null}")
                .contains("{\"quota\":\"monthly\",\"per\":\"month\",\"limit\":100,\"start\":\"2027-02-01T00:00:00Z\","
                        + "\"end\":\"2027-03-01T00:00:00Z\",\"closed\":false,\"used\":1}");
    }

    @Test
    void closedPeriodsAreKeptAsLongAsConfiguredThenNoLongerListed() throws Exception {
        String t = "kept-" + Long.toHexString(System.nanoTime());
        start(List.of(t), 1);
        Http.get(server.uri("/export"), t); // January
        clock.advance(Duration.ofDays(29)); // March 1st, 22:00: January is two months back, beyond the one kept
        Http.get(server.uri("/items"), "basic-one");
        assertThat(filter.control().usage(null, 10).tenants()).as("January is no longer exported").isEmpty();
        Http.get(server.uri("/items"), t);
        TenantUsage march = filter.control().usage(null, 10).tenants().get(0);
        assertThat(march.periods()).extracting(TenantUsage.Period::used).containsExactly(1L, 0L, 1L, 0L);
    }

    @Test
    void aCursorNoExportGaveAndAnOutOfRangeSizeAreRefused() throws Exception {
        start(List.of("x-" + Long.toHexString(System.nanoTime())), 3);
        assertThatThrownBy(() -> filter.control().usage("not-a-cursor", 10))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cursor");
        assertThatThrownBy(() -> filter.control().usage(null, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> filter.control().usage(null, 10_001)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> QuotaFilter.builder().closedPeriodsKept(-1)).isInstanceOf(IllegalArgumentException.class);
    }

    /**
     * A tenant whose current counter appears while the export runs (its first request of the month, after the scan
     * passed the place of that counter) is listed once, on its closed period's page: the owner of a tenant's rows
     * is chosen among the closed counters first, which no request changes (review finding: listed twice before).
     */
    @Test
    void aTenantWhoseCurrentCounterAppearsBetweenPagesIsListedOnce() throws Exception {
        start(List.of("acme"), 2);
        assertThat(Http.get(server.uri("/items/1"), "acme").statusCode()).isEqualTo(200); // Jan 31: 1 unit
        clock.advance(Duration.ofHours(3)); // Feb 1 01:00 UTC: January and Jan 31 are closed
        UsagePage first = filter.control().usage(null, 1);
        assertThat(first.tenants()).extracting(TenantUsage::tenant).containsExactly("acme");
        assertThat(Http.get(server.uri("/items/1"), "acme").statusCode()).isEqualTo(200); // February's counters appear
        int listed = 1;
        for (String cursor = first.next(); cursor != null; ) {
            UsagePage page = filter.control().usage(cursor, 1);
            listed += (int) page.tenants().stream().filter(t -> t.tenant().equals("acme")).count();
            cursor = page.next();
        }
        assertThat(listed).as("acme listed over the whole export").isEqualTo(1);
    }
}

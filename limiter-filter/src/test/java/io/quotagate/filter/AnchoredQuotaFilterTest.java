package io.quotagate.filter;

import io.quotagate.filter.status.QuotaUsage;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.CalendarQuota;
import io.quotagate.plans.CalendarQuota.Anchor;
import io.quotagate.plans.PlansFile;
import io.quotagate.tenant.TenantContract;
import io.quotagate.tenant.TenantDirectory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Anchored quota periods and tenant zones on the local store, real Jetty, a manual clock: Retry-After, the
 * published fields and the usage readout follow the anchor across month ends, a leap February and DST.
 */
class AnchoredQuotaFilterTest {
    private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");
    private static final ZoneId NEW_YORK = ZoneId.of("America/New_York");
    private static final String PLANS = """
            plans:
              free:
                limits: [ { capacity: 100, refill: 100, period: 1s } ]
              pro:
                limits: [ { capacity: 100, refill: 100, period: 1s } ]
                publish: true
                quotas:
                  - { name: monthly, limit: 2, per: month, zone: Europe/Berlin, anchor: { day: 31, time: "09:00" } }
              weekly:
                limits: [ { capacity: 100, refill: 100, period: 1s } ]
                quotas:
                  - { name: weekly, limit: 1, per: week, zone: America/New_York, anchor: { weekday: sunday, time: "02:30" } }
              daily:
                limits: [ { capacity: 100, refill: 100, period: 1s } ]
                quotas:
                  - { name: daily, limit: 1, per: day, anchor: { time: "06:00" } }
            tenants:
              default-plan: free
              assignments: { acme: pro, globex: weekly, initech: daily }
              overrides:
                hooli: { plan: daily, zone: Europe/Berlin }
            """;

    private final ManualClock clock = new ManualClock();
    private QuotaFilter filter;
    private JettyServer server;

    private void start(String now, TenantDirectory directory) throws Exception {
        QuotaFilter.Builder b = QuotaFilter.builder().plans(PlansFile.parse("plans.yml", PLANS)).clock(clock)
                .wallClock(clock.wallClock(Instant.parse(now)));
        if (directory != null) b.tenantDirectory(directory);
        filter = b.build();
        server = JettyServer.start(filter);
    }

    @AfterEach
    void stop() throws Exception {
        if (server != null) server.close();
    }

    private HttpResponse<String> get(String tenant) throws Exception {
        return Http.get(server.uri("/items"), tenant);
    }

    private static String retryAfter(HttpResponse<String> r) {
        assertThat(r.statusCode()).isEqualTo(429);
        assertThat(r.body()).contains("\"reason\":\"quota\"");
        return r.headers().firstValue("Retry-After").orElseThrow();
    }

    private void useUp(String tenant, int limit) throws Exception {
        for (int i = 0; i < limit; i++) assertThat(get(tenant).statusCode()).as("request %d", i + 1).isEqualTo(200);
    }

    @Test
    void aMonthlyAnchorOnThe31stRunsJan31ToFeb29ToMar31InALeapYearAcrossBerlinsSpringChange() throws Exception {
        start("2028-01-31T07:59:00Z", null); // 08:59 in Berlin: a minute before the anchor, in December's period
        useUp("acme", 2);
        assertThat(retryAfter(get("acme"))).isEqualTo("60");
        assertThat(filter.control().tenantQuotas("acme")).containsExactly(new QuotaUsage("monthly",
                CalendarQuota.Per.MONTH, 2, 2, 0, Instant.parse("2028-01-31T08:00:00Z")));

        clock.advance(Duration.ofSeconds(60)); // Jan 31 09:00: until Feb 29 09:00 (the anchor on February's last day)
        HttpResponse<String> first = get("acme");
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.headers().firstValue("RateLimit-Policy").orElseThrow()).contains("\"monthly\";q=2;w=" + 29 * 86_400);
        assertThat(first.headers().firstValue("RateLimit").orElseThrow()).contains("\"monthly\";r=1;t=" + 29 * 86_400);
        useUp("acme", 1);
        assertThat(retryAfter(get("acme"))).isEqualTo(String.valueOf(29 * 86_400));
        assertThat(filter.control().tenantQuotas("acme").get(0).resetsAt()).isEqualTo(Instant.parse("2028-02-29T08:00:00Z"));

        clock.advance(Duration.ofDays(29)); // Feb 29 09:00 CET to Mar 31 09:00 CEST: 31 days less the hour of Mar 26
        HttpResponse<String> march = get("acme");
        assertThat(march.statusCode()).isEqualTo(200);
        assertThat(march.headers().firstValue("RateLimit-Policy").orElseThrow())
                .contains("\"monthly\";q=2;w=" + (31 * 86_400 - 3_600));
        useUp("acme", 1);
        assertThat(retryAfter(get("acme"))).isEqualTo(String.valueOf(31 * 86_400 - 3_600));
        assertThat(filter.control().tenantQuotas("acme").get(0).resetsAt()).isEqualTo(Instant.parse("2028-03-31T07:00:00Z"));

        clock.advance(Duration.ofDays(31).minusHours(1)); // Mar 31 09:00 CEST to Apr 30 09:00: the anchor day back
        useUp("acme", 2);
        assertThat(retryAfter(get("acme"))).isEqualTo(String.valueOf(30 * 86_400));
    }

    @Test
    void aWeeklyAnchorAtATimeNewYorksSpringChangeSkipsStartsAtTheFirstValidTime() throws Exception {
        // Sunday 2028-03-12: 02:00 EST jumps to 03:00 EDT; the week anchored at Sunday 02:30 starts at 03:00 EDT (07:00Z)
        start("2028-03-12T06:59:00Z", null); // 01:59 EST
        useUp("globex", 1);
        assertThat(retryAfter(get("globex"))).isEqualTo("60");
        clock.advance(Duration.ofSeconds(60));
        useUp("globex", 1);
        // to Sunday 2028-03-19 02:30 EDT (06:30Z): a week less half an hour
        assertThat(retryAfter(get("globex"))).isEqualTo(String.valueOf(7 * 86_400 - 1_800));
        assertThat(filter.control().tenantQuotas("globex").get(0).resetsAt()).isEqualTo(Instant.parse("2028-03-19T06:30:00Z"));
    }

    @Test
    void aTenantsZoneRunsItsPlansQuotasFromTheFileARuntimeContractOrTheDirectory() throws Exception {
        // 2027-11-07: New York falls back at 02:00 EDT; the 06:00 anchor that day is 11:00Z, the day before 10:00Z
        TenantDirectory directory = new TenantDirectory() {
            @Override
            public Optional<String> planOf(String tenant) {
                return contractOf(tenant).map(TenantContract::plan);
            }

            @Override
            public Optional<TenantContract> contractOf(String tenant) {
                return tenant.equals("umbrella")
                        ? Optional.of(TenantContract.onPlan("daily").withZone(NEW_YORK)) : Optional.empty();
            }
        };
        start("2027-11-07T10:30:00Z", directory);
        // initech: the plan's zone (UTC): the day from 06:00Z ends tomorrow at 06:00Z
        useUp("initech", 1);
        assertThat(retryAfter(get("initech"))).isEqualTo(String.valueOf(19 * 3_600 + 1_800));
        // hooli (file: zone Europe/Berlin, CET): from 05:00Z to tomorrow 05:00Z
        useUp("hooli", 1);
        assertThat(retryAfter(get("hooli"))).isEqualTo(String.valueOf(18 * 3_600 + 1_800));
        // umbrella (directory: America/New_York): 05:30 EST, its day began at 06:00 EDT yesterday and ends at 11:00Z
        useUp("umbrella", 1);
        assertThat(retryAfter(get("umbrella"))).isEqualTo("1800");
        assertThat(filter.control().tenantQuotas("umbrella")).singleElement()
                .satisfies(u -> assertThat(u.resetsAt()).isEqualTo(Instant.parse("2027-11-07T11:00:00Z")));
        // a runtime contract: initech moves to Tokyo (UTC+9): its 06:00 is 21:00Z, the day ends at 21:00Z today
        filter.control().setTenant("initech", TenantContract.onPlan("daily").withZone(ZoneId.of("Asia/Tokyo")));
        assertThat(filter.control().tenantQuotas("initech")).singleElement()
                .satisfies(u -> assertThat(u.resetsAt()).isEqualTo(Instant.parse("2027-11-07T21:00:00Z")));
        // Tokyo's period began on 2027-11-07 (06:00 JST) as UTC's did: the same label, the same count, used up
        assertThat(retryAfter(get("initech"))).isEqualTo(String.valueOf(10 * 3_600 + 1_800));

        // a runtime contract follows the plan's quotas as they change, in its zone
        filter.control().setPlanQuotas("daily", List.of(new CalendarQuota("daily", 3, CalendarQuota.Per.DAY,
                ZoneId.of("UTC"), Anchor.daily(LocalTime.of(6, 0)))));
        assertThat(filter.control().tenantQuotas("initech")).singleElement().satisfies(u -> {
            assertThat(u.limit()).isEqualTo(3);
            assertThat(u.resetsAt()).isEqualTo(Instant.parse("2027-11-07T21:00:00Z"));
        });

        // 11:00Z: New York's 06:00 EST ends umbrella's 25-hour day (from 06:00 EDT, 10:00Z yesterday); the next is 24 h
        clock.advance(Duration.ofMinutes(30));
        useUp("umbrella", 3);
        assertThat(retryAfter(get("umbrella"))).isEqualTo(String.valueOf(24 * 3_600));
    }

    @Test
    void aChangeOfAnchorStartsTheCountOfThePeriodItLabelsAndMovingBackFindsTheOldCount() throws Exception {
        start("2027-03-10T12:00:00Z", null);
        CalendarQuota calendar = new CalendarQuota("monthly", 2, CalendarQuota.Per.MONTH, BERLIN);
        filter.control().setPlanQuotas("pro", List.of(calendar));
        useUp("acme", 2);
        assertThat(get("acme").statusCode()).isEqualTo(429);
        // anchored on the 15th: now is in the period from Feb 15, a counter of its own, empty
        filter.control().setPlanQuotas("pro", List.of(calendar.withAnchor(Anchor.monthly(15, LocalTime.MIDNIGHT))));
        assertThat(filter.control().tenantQuotas("acme").get(0).used()).isZero();
        assertThat(filter.control().tenantQuotas("acme").get(0).resetsAt()).isEqualTo(Instant.parse("2027-03-14T23:00:00Z"));
        useUp("acme", 2);
        assertThat(get("acme").statusCode()).isEqualTo(429);
        // back to the 1st: the count of the period from Mar 1 is still there
        filter.control().setPlanQuotas("pro", List.of(calendar));
        assertThat(filter.control().tenantQuotas("acme").get(0).used()).isEqualTo(2);
        // the time alone moves: the period still starts on Mar 1, the same label, the same count
        filter.control().setPlanQuotas("pro", List.of(calendar.withAnchor(Anchor.monthly(1, LocalTime.of(9, 0)))));
        assertThat(filter.control().tenantQuotas("acme").get(0).used()).isEqualTo(2);
        assertThat(filter.control().tenantQuotas("acme").get(0).resetsAt()).isEqualTo(Instant.parse("2027-04-01T07:00:00Z"));
    }
}

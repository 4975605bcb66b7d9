package io.quotagate.filter.internal.admission;

import io.quotagate.filter.status.QuotaUsage;
import io.quotagate.filter.status.Reason;
import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.CalendarQuota;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;

class CalendarQuotaAdmissionTest {
    private final ManualClock clock = new ManualClock();

    private Decisions admission(String quotas, Instant now, int maxTracked) {
        String yaml = """
                plans:
                  pro:
                    limits: [ { capacity: 1000, refill: 1000, period: 1s } ]
                    quotas: %s
                tenants:
                  assignments: { acme: pro, globex: pro }
                """.formatted(quotas);
        return new Decisions(PlansFile.parse("t.yml", yaml), BucketStore.local(maxTracked, clock), clock.wallClock(now));
    }

    private Decisions admission(String quotas, String now) {
        return admission(quotas, Instant.parse(now), 1000);
    }

    private static void use(Decisions a, String tenant, int requests) {
        for (int i = 0; i < requests; i++) {
            assertThat(a.admit(tenant, "pro", 1)).as("request %d", i).isInstanceOf(Decision.Admitted.class);
        }
    }

    private static Decision.Rejected refused(Decision d) {
        assertThat(d).isInstanceOf(Decision.Rejected.class);
        return (Decision.Rejected) d;
    }

    @Test
    void monthlyQuotaRefusesNamingItselfUntilTheFirstOfTheMonthInItsZone() {
        // 23:00 on 31 January in Berlin: one hour of the month left
        Decisions a = admission("[ { name: monthly, limit: 5, per: month, zone: Europe/Berlin } ]", "2027-01-31T22:00:00Z");
        use(a, "acme", 5);
        Decision.Rejected r = refused(a.admit("acme", "pro", 1));
        assertThat(r.reason()).isEqualTo(Reason.QUOTA);
        assertThat(r.limit()).isEqualTo("monthly");
        assertThat(r.retryAfterSeconds()).isEqualTo(3600);
        assertThat(Outcome.Refused.tooMany(new Rejection(r.reason(), r.nanosToWait(), r.limit()), new Caller("acme", "acme", BucketKind.TENANT, "pro")).detail())
                .isEqualTo("The tenant's quota 'monthly' is used up until it resets; retry after 3600 s.");
        assertThat(a.admit("globex", "pro", 1)).as("another tenant's month").isInstanceOf(Decision.Admitted.class);

        clock.advance(Duration.ofSeconds(3599));
        assertThat(refused(a.admit("acme", "pro", 1)).retryAfterSeconds()).isEqualTo(1);
        clock.advance(Duration.ofSeconds(1));
        assertThat(a.admit("acme", "pro", 1)).as("Retry-After later: February").isInstanceOf(Decision.Admitted.class);
        assertThat(a.quotaUsage("acme", "pro")).containsExactly(new QuotaUsage("monthly", CalendarQuota.Per.MONTH,
                5, 1, 4, Instant.parse("2027-02-28T23:00:00Z")));
    }

    @ParameterizedTest(name = "[{index}] {0} {1} from {2}: Retry-After {3} s")
    @CsvSource({
            // month lengths: January 31 days, February 28, February of a leap year 29, April 30
            "month, UTC, 2027-01-01T00:00:00Z, 2678400",
            "month, UTC, 2027-02-01T00:00:00Z, 2419200",
            "month, UTC, 2028-02-01T00:00:00Z, 2505600",
            "month, UTC, 2027-04-01T00:00:00Z, 2592000",
            // the leap day is a day of its own
            "day, UTC, 2028-02-29T00:00:00Z, 86400",
            // daylight saving in Berlin: the spring day has 23 hours, the autumn day 25; from 00:30
            "day, Europe/Berlin, 2026-03-28T23:30:00Z, 81000",
            "day, Europe/Berlin, 2026-10-24T22:30:00Z, 88200",
            // the ISO week of the spring change is an hour short
            "week, Europe/Berlin, 2026-03-22T23:00:00Z, 601200",
            // a fraction of a second left rounds up
            "day, UTC, 2027-03-01T23:59:59.250Z, 1"})
    void retryAfterIsTheWholeSecondsToTheResetRoundedUp(String per, String zone, String now, long seconds) {
        Decisions a = admission("[ { name: q, limit: 3, per: " + per + ", zone: " + zone + " } ]", now);
        use(a, "acme", 3);
        Decision.Rejected r = refused(a.admit("acme", "pro", 1));
        assertThat(r.retryAfterSeconds()).isEqualTo(seconds);

        clock.advance(Duration.ofNanos(r.nanosToWait()).minusMillis(1));
        assertThat(a.admit("acme", "pro", 1)).as("just before the reset").isInstanceOf(Decision.Rejected.class);
        clock.advance(Duration.ofSeconds(seconds).minusNanos(r.nanosToWait()).plusMillis(1));
        use(a, "acme", 3); // Retry-After later, the whole limit is back
    }

    @Test
    void whenSeveralRefuseTheRefusalWaitsForTheLastReset() {
        Decisions a = admission("""
                [ { name: daily, limit: 3, per: day }, { name: monthly, limit: 3, per: month } ]""",
                "2027-03-10T12:00:00Z");
        use(a, "acme", 3);
        Decision.Rejected r = refused(a.admit("acme", "pro", 1));
        assertThat(r.limit()).isEqualTo("monthly");
        assertThat(r.retryAfterSeconds()).isEqualTo(Duration.ofDays(21).plusHours(12).toSeconds());
    }

    @Test
    void aRequestMustFitBothItsBucketAndItsQuotaAndIsChargedNeitherWhenRefused() {
        String yaml = """
                plans:
                  pro:
                    limits: [ { capacity: 4, refill: 4, period: 1h } ]
                    quotas: [ { name: daily, limit: 6, per: day } ]
                tenants:
                  assignments: { acme: pro }
                """;
        Decisions a = new Decisions(PlansFile.parse("t.yml", yaml), BucketStore.local(100, clock),
                clock.wallClock(Instant.parse("2027-03-10T12:00:00Z")));
        use(a, "acme", 4);
        // the bucket refuses first, and the quota still has room: the bucket's wait
        assertThat(refused(a.admit("acme", "pro", 1)).reason()).isEqualTo(Reason.TENANT_RATE);
        clock.advance(Duration.ofHours(1));
        use(a, "acme", 2);
        Decision.Rejected overQuota = refused(a.admit("acme", "pro", 1));
        assertThat(overQuota.reason()).isEqualTo(Reason.QUOTA);
        assertThat(a.status("acme", "pro").get(0).remaining()).as("the quota's refusal took nothing from the bucket")
                .isEqualTo(2);
        assertThat(a.quotaUsage("acme", "pro").get(0).used()).isEqualTo(6);
    }

    @Test
    void aBucketRefusalWaitsForTheQuotaWhenTheQuotaIsUsedUpToo() {
        String yaml = """
                plans:
                  pro:
                    limits: [ { capacity: 2, refill: 2, period: 1m } ]
                    quotas: [ { name: daily, limit: 2, per: day } ]
                tenants:
                  assignments: { acme: pro }
                """;
        Decisions a = new Decisions(PlansFile.parse("t.yml", yaml), BucketStore.local(100, clock),
                clock.wallClock(Instant.parse("2027-03-10T12:00:00Z")));
        use(a, "acme", 2);
        Decision.Rejected r = refused(a.admit("acme", "pro", 1));
        assertThat(r.reason()).as("a client waiting the bucket's minute would be refused by the quota")
                .isEqualTo(Reason.QUOTA);
        assertThat(r.retryAfterSeconds()).isEqualTo(Duration.ofHours(12).toSeconds());
    }

    @Test
    void settlingGivesUnitsBackToTheQuotaOrChargesTheExcess() {
        Decisions a = admission("[ { name: daily, limit: 100, per: day } ]", "2027-03-10T12:00:00Z");
        Decision.Admitted d = (Decision.Admitted) a.admit("acme", "pro", 40);
        a.reconcile(d, 10);
        assertThat(a.quotaUsage("acme", "pro").get(0).used()).isEqualTo(10);
        Decision.Admitted e = (Decision.Admitted) a.admit("acme", "pro", 10);
        a.reconcile(e, 30);
        assertThat(a.quotaUsage("acme", "pro").get(0).used()).isEqualTo(40);
    }

    @Test
    void aRequestThatSettlesAfterTheResetSettlesInThePeriodItWasCountedIn() {
        Decisions a = admission("[ { name: daily, limit: 100, per: day } ]", "2027-03-10T23:59:00Z");
        Decision.Admitted d = (Decision.Admitted) a.admit("acme", "pro", 40);
        clock.advance(Duration.ofMinutes(2));
        a.reconcile(d, 0);
        assertThat(a.quotaUsage("acme", "pro").get(0).used()).as("the new day owes nothing").isZero();
        use(a, "acme", 100);
    }

    @Test
    void aCountOutlivesItsTenantsBucketLeavingAFullTable() {
        // two buckets per table: every other tenant pushes acme's bucket out
        Decisions a = admission("[ { name: monthly, limit: 10, per: month } ]", Instant.parse("2027-03-10T12:00:00Z"), 2);
        use(a, "acme", 10);
        for (int i = 0; i < 200; i++) a.admit("t" + i, "pro", 1);
        clock.advance(Duration.ofDays(2)); // and every bucket idle long enough to be dropped
        assertThat(refused(a.admit("acme", "pro", 1)).reason()).isEqualTo(Reason.QUOTA);
    }

    @Test
    void aTenantsOwnQuotasReplaceItsPlansAndAnEmptyListMeansNone() {
        String yaml = """
                plans:
                  pro:
                    limits: [ { capacity: 100, refill: 100, period: 1s } ]
                    quotas: [ { name: monthly, limit: 2, per: month } ]
                tenants:
                  assignments: { acme: pro }
                  overrides:
                    bigcorp: { plan: pro, quotas: [ { name: monthly, limit: 4, per: month } ] }
                    unlimited: { plan: pro, quotas: [] }
                    own: { plan: pro, limits: [ { capacity: 3, refill: 3, period: 1h } ] }
                """;
        Decisions a = new Decisions(PlansFile.parse("t.yml", yaml), BucketStore.local(100, clock),
                clock.wallClock(Instant.parse("2027-03-10T12:00:00Z")));
        use(a, "acme", 2);
        assertThat(refused(a.admit("acme", "pro", 1)).reason()).isEqualTo(Reason.QUOTA);
        use(a, "bigcorp", 4);
        assertThat(refused(a.admit("bigcorp", "pro", 1)).reason()).isEqualTo(Reason.QUOTA);
        assertThat(a.status("bigcorp", "pro").get(0).capacity()).as("the plan's bandwidths").isEqualTo(100);
        use(a, "unlimited", 50);
        assertThat(a.quotaUsage("unlimited", "pro")).isEmpty();
        use(a, "own", 2);
        assertThat(refused(a.admit("own", "pro", 1)).reason()).as("own limits keep the plan's quotas")
                .isEqualTo(Reason.QUOTA);
    }

    @Test
    void guestsAreNotCountedAsTheirIdsCanBeMadeUp() {
        Decisions a = admission("[ { name: daily, limit: 2, per: day } ]", "2027-03-10T12:00:00Z");
        for (int i = 0; i < 5; i++) {
            assertThat(a.admit(BucketKind.GUEST, "stranger", "pro", 1)).isInstanceOf(Decision.Admitted.class);
        }
        assertThat(a.policy().readout().quotaUsage(BucketKind.GUEST, "stranger", "pro")).isEmpty();
    }

    @Test
    void shadowModeCountsAQuotaRefusalAndChargesNothing() {
        String yaml = """
                plans:
                  pro:
                    shadow: true
                    limits: [ { capacity: 100, refill: 100, period: 1s } ]
                    quotas: [ { name: daily, limit: 2, per: day } ]
                tenants:
                  assignments: { acme: pro }
                """;
        Decisions a = new Decisions(PlansFile.parse("t.yml", yaml), BucketStore.local(100, clock),
                clock.wallClock(Instant.parse("2027-03-10T12:00:00Z")));
        use(a, "acme", 3);
        assertThat(a.shadowRejections(Reason.QUOTA)).isEqualTo(1);
        assertThat(a.quotaUsage("acme", "pro").get(0).used()).isEqualTo(2);
    }

    @Test
    void aCostAboveTheSmallestQuotaLimitCanNeverBeAdmitted() {
        Decisions a = admission("[ { name: daily, limit: 50, per: day } ]", "2027-03-10T12:00:00Z");
        assertThat(a.maxCost("pro")).isEqualTo(50);
    }
}

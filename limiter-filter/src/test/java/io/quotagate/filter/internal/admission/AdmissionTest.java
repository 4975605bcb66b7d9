package io.quotagate.filter.internal.admission;

import io.quotagate.filter.status.BandwidthStatus;
import io.quotagate.filter.status.Reason;
import io.quotagate.filter.status.RetryAfter;
import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class AdmissionTest {
    private final ManualClock clock = new ManualClock();

    private Decisions admission(String yaml) {
        Plans plans = PlansFile.parse("test.yml", yaml);
        return new Decisions(plans, BucketStore.local(1000, clock));
    }

    private static final String FREE_10_PER_10S = """
            plans:
              free:
                limits: [ { capacity: 10, refill: 10, period: 10s } ]
            """;

    @Test
    void admitsUntilTheBucketIsEmptyThenRejectsWithTheTenantReason() {
        Decisions a = admission(FREE_10_PER_10S);
        for (int i = 0; i < 10; i++) assertThat(a.admit("acme", "free", 1)).isInstanceOf(Decision.Admitted.class);
        Decision d = a.admit("acme", "free", 1);
        assertThat(d).isInstanceOfSatisfying(Decision.Rejected.class, r -> {
            assertThat(r.reason()).isEqualTo(Reason.TENANT_RATE);
            assertThat(r.nanosToWait()).isEqualTo(Duration.ofSeconds(1).toNanos());
            assertThat(r.retryAfterSeconds()).isEqualTo(1);
        });
    }

    @Test
    void eachTenantHasItsOwnBucket() {
        Decisions a = admission(FREE_10_PER_10S);
        for (int i = 0; i < 10; i++) a.admit("acme", "free", 1);
        assertThat(a.admit("acme", "free", 1)).isInstanceOf(Decision.Rejected.class);
        assertThat(a.admit("globex", "free", 1)).isInstanceOf(Decision.Admitted.class);
    }

    @Test
    void costIsTakenInUnits() {
        Decisions a = admission(FREE_10_PER_10S);
        assertThat(a.admit("acme", "free", 7)).isInstanceOf(Decision.Admitted.class);
        Decision d = a.admit("acme", "free", 5);
        // 3 units left, 2 missing at 1 unit/s
        assertThat(d).isInstanceOfSatisfying(Decision.Rejected.class,
                r -> assertThat(r.nanosToWait()).isEqualTo(Duration.ofSeconds(2).toNanos()));
        assertThat(a.admit("acme", "free", 3)).isInstanceOf(Decision.Admitted.class);
    }

    @Test
    void retryAfterIsRoundedUpAndWaitingExactlyThatLongSucceeds() {
        // 3 units per 10 s: one unit every 3.333... s
        Decisions a = admission("plans: { free: { limits: [ { capacity: 3, refill: 3, period: 10s } ] } }");
        for (int i = 0; i < 3; i++) a.admit("acme", "free", 1);
        Decision.Rejected r = (Decision.Rejected) a.admit("acme", "free", 1);
        assertThat(r.nanosToWait()).isBetween(3_333_333_000L, 3_333_334_000L);
        assertThat(r.retryAfterSeconds()).isEqualTo(4);

        clock.advance(Duration.ofSeconds(r.retryAfterSeconds() - 1));
        assertThat(a.admit("acme", "free", 1)).as("one second early").isInstanceOf(Decision.Rejected.class);
        clock.advance(Duration.ofSeconds(1));
        assertThat(a.admit("acme", "free", 1)).as("exactly Retry-After later").isInstanceOf(Decision.Admitted.class);
    }

    @Test
    void everyBandwidthOfThePlanApplies() {
        Decisions a = admission("""
                plans:
                  pro:
                    limits:
                      - { name: burst, capacity: 5, refill: 5, period: 1s }
                      - { name: daily, capacity: 8, refill: 8, period: 1d }
                """);
        for (int i = 0; i < 5; i++) assertThat(a.admit("acme", "pro", 1)).isInstanceOf(Decision.Admitted.class);
        clock.advance(Duration.ofSeconds(1));
        for (int i = 0; i < 3; i++) assertThat(a.admit("acme", "pro", 1)).isInstanceOf(Decision.Admitted.class);
        // the burst has refilled, the daily budget has not: the wait is the daily one
        Decision.Rejected r = (Decision.Rejected) a.admit("acme", "pro", 1);
        assertThat(r.nanosToWait()).isGreaterThan(Duration.ofHours(2).toNanos());
        // one unit of 8/day takes 3 h, and the first second of it has passed
        assertThat(r.retryAfterSeconds()).isEqualTo(10_799);
    }

    @Test
    void globalRefusalGivesTheTenantItsUnitsBack() {
        Decisions a = admission("""
                global: { limits: [ { capacity: 4, refill: 4, period: 1m } ] }
                plans:  { free: { limits: [ { capacity: 10, refill: 10, period: 1m } ] } }
                """);
        for (int i = 0; i < 4; i++) assertThat(a.admit("acme", "free", 1)).isInstanceOf(Decision.Admitted.class);
        for (int i = 0; i < 20; i++) {
            Decision.Rejected r = (Decision.Rejected) a.admit("acme", "free", 1);
            assertThat(r.reason()).isEqualTo(Reason.GLOBAL_RATE);
            assertThat(r.retryAfterSeconds()).isEqualTo(15);
        }
        // 20 refusals later, acme has still spent only 4 of its 10: after the global refills it gets 6 more
        clock.advance(Duration.ofMinutes(1));
        for (int i = 0; i < 4; i++) assertThat(a.admit("acme", "free", 1)).isInstanceOf(Decision.Admitted.class);
        clock.advance(Duration.ofSeconds(30)); // global +2, acme +5 (capped at what it lacks)
        assertThat(a.admit("acme", "free", 2)).isInstanceOf(Decision.Admitted.class);
    }

    @Test
    void whenSeveralBucketsWouldRefuseTheLongestWaitIsReported() {
        Decisions a = admission("""
                global: { limits: [ { capacity: 2, refill: 2, period: 1m } ] }
                plans:  { free: { limits: [ { capacity: 2, refill: 2, period: 10s } ] } }
                """);
        a.admit("acme", "free", 2);
        // acme waits 5 s for its own bucket, but the global needs 30 s
        Decision.Rejected r = (Decision.Rejected) a.admit("acme", "free", 1);
        assertThat(r.reason()).isEqualTo(Reason.GLOBAL_RATE);
        assertThat(r.retryAfterSeconds()).isEqualTo(30);
        clock.advance(Duration.ofSeconds(30));
        assertThat(a.admit("acme", "free", 1)).isInstanceOf(Decision.Admitted.class);
    }

    @Test
    void tenantReasonWhenItsOwnWaitIsLonger() {
        Decisions a = admission("""
                global: { limits: [ { capacity: 100, refill: 100, period: 1s } ] }
                plans:  { free: { limits: [ { capacity: 1, refill: 1, period: 1m } ] } }
                """);
        a.admit("acme", "free", 1);
        Decision.Rejected r = (Decision.Rejected) a.admit("acme", "free", 1);
        assertThat(r.reason()).isEqualTo(Reason.TENANT_RATE);
        assertThat(r.retryAfterSeconds()).isEqualTo(60);
    }

    @Test
    void refusesNonsense() {
        Decisions a = admission(FREE_10_PER_10S);
        assertThatThrownBy(() -> a.admit("acme", "gold", 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> a.admit("acme", "free", 0)).isInstanceOf(IllegalArgumentException.class);
    }

    @ParameterizedTest
    @CsvSource({"0,1", "1,1", "999999999,1", "1000000000,1", "1000000001,2", "2500000000,3", "3000000000,3"})
    void retryAfterSecondsRoundUpAndAreNeverZero(long nanos, long seconds) {
        assertThat(RetryAfter.seconds(nanos)).isEqualTo(seconds);
    }

    @Test
    void publishedWindowAndResetAreExactWhenTheRefillDoesNotDivideThePeriod() {
        Decisions a = admission("""
                plans:
                  odd:
                    publish: true
                    limits: [ { name: burst, capacity: 45, refill: 45, period: 1s } ]
                """);
        assertThat(a.admit("acme", "odd", 9)).isInstanceOf(Decision.Admitted.class);
        BandwidthStatus burst = a.status("acme", "odd").get(0);
        assertThat(burst.windowSeconds()).as("45 units at 45/s: one second, not two").isEqualTo(1);
        assertThat(burst.nanosToFull()).as("9 units at 45/s").isEqualTo(200_000_000L);
    }

    private static final String GUEST_POOL_OF_5 = """
            global: { limits: [ { capacity: 100, refill: 100, period: 10s } ] }
            plans:
              free:
                limits: [ { capacity: 10, refill: 10, period: 10s } ]
            tenants:
              guests: { limits: [ { capacity: 5, refill: 5, period: 10s } ] }
            """;

    @Test
    void guestsShareOnePoolThatRefusesWithTheGuestReasonAndChargesNobody() {
        Decisions a = admission(GUEST_POOL_OF_5);
        for (int i = 0; i < 5; i++) {
            assertThat(a.admit(BucketKind.GUEST, "made-up-" + i, "free", 1)).isInstanceOf(Decision.Admitted.class);
        }
        Decision d = a.admit(BucketKind.GUEST, "made-up-5", "free", 1);
        assertThat(d).isInstanceOfSatisfying(Decision.Rejected.class, r -> {
            assertThat(r.reason()).isEqualTo(Reason.GUEST_RATE);
            assertThat(r.retryAfterSeconds()).isEqualTo(2);
        });
        assertThat(a.status(BucketKind.GUEST, "made-up-5", "free").get(0).remaining()).isEqualTo(10);
        assertThat(a.globalAvailableTokens()).isEqualTo(95);
        // an assigned tenant's bucket never draws on the pool
        assertThat(a.admit(BucketKind.TENANT, "acme", "free", 1)).isInstanceOf(Decision.Admitted.class);
    }

    @Test
    void aGuestsRefundGoesBackToThePoolToo() {
        Decisions a = admission(GUEST_POOL_OF_5);
        Decision.Admitted d = (Decision.Admitted) a.admit(BucketKind.GUEST, "g", "free", 5);
        assertThat(d.guestsCharged()).isTrue();
        assertThat(a.admit(BucketKind.GUEST, "h", "free", 1)).isInstanceOf(Decision.Rejected.class);
        a.reconcile(d, 1);
        assertThat(a.admit(BucketKind.GUEST, "h", "free", 4)).isInstanceOf(Decision.Admitted.class);
        assertThat(a.maxCost(BucketKind.GUEST, "h", "free")).isEqualTo(5);
        assertThat(a.maxCost(BucketKind.TENANT, "acme", "free")).isEqualTo(10);
    }
}

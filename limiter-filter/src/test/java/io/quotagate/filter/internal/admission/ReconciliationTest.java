package io.quotagate.filter.internal.admission;

import io.quotagate.filter.status.Reason;
import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.store.HeldBuckets;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Reserve, then reconcile: the estimate is charged up front and settled against the actual cost. */
class ReconciliationTest {
    private final ManualClock clock = new ManualClock();
    private final BucketStore store = BucketStore.local(1000, clock);
    // tenant: 100 units, 10 per second; global: 1000 units, 10 per second
    private final Decisions admission = new Decisions(PlansFile.parse("t.yml", """
            global: { limits: [ { capacity: 1000, refill: 600, period: 1m } ] }
            plans:  { llm: { limits: [ { capacity: 100, refill: 10, period: 1s } ] } }
            """), store);

    private long tenantTokens() {
        return HeldBuckets.available(store, BucketKind.TENANT, "acme");
    }

    private long globalTokens() {
        return HeldBuckets.available(store, BucketKind.GLOBAL, LimitsCompiler.GLOBAL_KEY);
    }

    private Decision.Admitted reserve(long cost) {
        return (Decision.Admitted) admission.admit("acme", "llm", cost);
    }

    @Test
    void admittedSaysWhichBucketsWereChargedAndHowMuch() {
        Decision.Admitted a = reserve(80);
        assertThat(a.tenant()).isEqualTo("acme");
        assertThat(a.plan()).isEqualTo("llm");
        assertThat(a.charged()).isEqualTo(80);
        assertThat(a.globalCharged()).isTrue();
        assertThat(a.shadowed()).isFalse();
        assertThat(tenantTokens()).isEqualTo(20);
        assertThat(globalTokens()).isEqualTo(920);
    }

    @Test
    void aSmallerActualCostIsRefundedToTheTenantAndTheGlobalBucket() {
        Decision.Admitted a = reserve(80);
        assertThat(admission.reconcile(a, 30)).isEqualTo(-50);
        assertThat(tenantTokens()).isEqualTo(70);
        assertThat(globalTokens()).isEqualTo(970);
    }

    /**
     * A request admitted before a reload that raised the plan ends after the tenant's next request moved
     * its bucket to the new limits: settling it by the policy that admitted it must not move the bucket
     * back to the old, smaller ones (which would cap its tokens there).
     */
    @Test
    void settlingARequestAdmittedBeforeAReloadKeepsTheBucketAtTheNewLimits() {
        Policy before = admission.policy();
        Decision.Admitted a = reserve(80);
        admission.apply(PlansFile.parse("t.yml", """
                global: { limits: [ { capacity: 1000, refill: 600, period: 1m } ] }
                plans:  { llm: { limits: [ { capacity: 1000, refill: 10, period: 1s } ] } }
                """));
        assertThat(reserve(1)).isNotNull(); // moves the bucket to the new limits: 19
        clock.advance(Duration.ofSeconds(60)); // 19 + 600 refilled, at the new capacity of 1,000
        assertThat(tenantTokens()).isEqualTo(619);
        assertThat(admission.reconcile(before, a, 30)).isEqualTo(-50);
        assertThat(tenantTokens()).as("619 + 50 back, at the new limits").isEqualTo(669);
        assertThat(admission.reconcile(before, (Decision.Admitted) admission.admit("acme", "llm", 1), 0))
                .isEqualTo(-1);
        assertThat(tenantTokens()).isEqualTo(669);
    }

    @Test
    void aRefundNeverFillsABucketAboveItsCapacity() {
        Decision.Admitted a = reserve(80);
        clock.advance(Duration.ofSeconds(6)); // tenant back to 80
        admission.reconcile(a, 0);
        assertThat(tenantTokens()).isEqualTo(100);
        assertThat(globalTokens()).as("920 + 60 refilled + 80 refunded, capped").isEqualTo(1000);
    }

    @Test
    void aLargerActualCostPutsBothBucketsIntoDebtSoTheTenantWaitsLonger() {
        Decision.Admitted a = reserve(80);
        assertThat(admission.reconcile(a, 150)).isEqualTo(70);
        assertThat(tenantTokens()).isEqualTo(-50);
        assertThat(globalTokens()).isEqualTo(850);

        // 10 units need the debt paid first: (50 + 10) / 10 per second = 6 s
        Decision.Rejected r = (Decision.Rejected) admission.admit("acme", "llm", 10);
        assertThat(r.reason()).isEqualTo(Reason.TENANT_RATE);
        assertThat(r.nanosToWait()).isEqualTo(Duration.ofSeconds(6).toNanos());
        clock.advance(Duration.ofSeconds(6));
        assertThat(admission.admit("acme", "llm", 10)).isInstanceOf(Decision.Admitted.class);
    }

    @Test
    void theExtraChargeIsCappedAtTheLargestPossibleCostAndTheGlobalQuotaPaysAtMostTheReservationAgain() {
        Decision.Admitted a = reserve(10);
        assertThat(admission.reconcile(a, Long.MAX_VALUE)).isEqualTo(100);
        assertThat(tenantTokens()).isEqualTo(-10);
        assertThat(globalTokens()).as("10 reserved, then 10 more of the excess").isEqualTo(980);
    }

    /**
     * Issue 58: five requests estimated at 1 and reported at Long.MAX_VALUE took 505 of the global 1,000. The
     * tenant pays the excess (its plan's largest cost each, into debt); the global quota at most the reservation
     * again: 2 units a request.
     */
    @Test
    void requestsReportedAtLongMaxTakeAtMostTwiceTheirReservationFromTheGlobalQuota() {
        java.util.List<Decision.Admitted> inFlight = new java.util.ArrayList<>();
        for (int i = 0; i < 5; i++) inFlight.add(reserve(1));
        for (Decision.Admitted a : inFlight) assertThat(admission.reconcile(a, Long.MAX_VALUE)).isEqualTo(100);
        assertThat(globalTokens()).isEqualTo(1000 - 5 * 2);
        assertThat(tenantTokens()).as("its own debt: 5 reserved, 5 × 100 of excess").isEqualTo(100 - 5 - 500);
    }

    /**
     * Issue 58: without a guest pool, made-up ids reporting huge costs drove the global quota into debt (every
     * tenant got 429 global_rate); now the excess the global quota pays is bounded by what it admitted, and
     * another tenant is still admitted at its plan's largest cost.
     */
    @Test
    void madeUpIdsReportingHugeCostsCannotPushTheGlobalQuotaIntoDebt() {
        for (int i = 0; i < 10; i++) {
            Decision.Admitted guest = (Decision.Admitted) admission.admit(BucketKind.GUEST, "made-up-" + i, "llm", 1);
            admission.reconcile(guest, Long.MAX_VALUE);
        }
        assertThat(globalTokens()).as("each id: 1 reserved, 1 of its excess").isEqualTo(1000 - 10 * 2);
        assertThat(admission.admit("globex", "llm", 100)).isInstanceOf(Decision.Admitted.class);
    }

    /** The guest pool is shared as the global quota is: it pays at most the reservation again, too. */
    @Test
    void theGuestPoolPaysAtMostTheReservationAgain() {
        Decisions pooled = new Decisions(PlansFile.parse("t.yml", """
                plans:  { llm: { limits: [ { capacity: 100, refill: 10, period: 1s } ] } }
                tenants: { guests: { limits: [ { capacity: 500, refill: 10, period: 1s } ] } }
                """), store);
        Decision.Admitted guest = (Decision.Admitted) pooled.admit(BucketKind.GUEST, "made-up", "llm", 3);
        assertThat(guest.guestsCharged()).isTrue();
        assertThat(pooled.reconcile(guest, Long.MAX_VALUE)).isEqualTo(100);
        assertThat(HeldBuckets.available(store, BucketKind.GUEST, "made-up")).isEqualTo(100 - 3 - 100);
        assertThat(HeldBuckets.available(store, BucketKind.GLOBAL, LimitsCompiler.GUESTS_KEY)).isEqualTo(500 - 3 - 3);
    }

    @Test
    void anExactEstimateOrAShadowedRequestChangesNothing() {
        Decision.Admitted a = reserve(40);
        assertThat(admission.reconcile(a, 40)).isZero();
        assertThat(tenantTokens()).isEqualTo(60);
        Decision.Admitted shadow = new Decision.Admitted(io.quotagate.filter.store.BucketKind.TENANT, "acme", "llm",
                0, false, false, new Decision.Rejected(Reason.TENANT_RATE, 1));
        assertThat(admission.reconcile(shadow, 5)).isZero();
        assertThat(tenantTokens()).isEqualTo(60);
    }

    @Test
    void aNegativeActualCostIsRefusedAndTheBucketsAreUntouched() {
        Decision.Admitted a = reserve(40);
        assertThatThrownBy(() -> admission.reconcile(a, -1)).isInstanceOf(IllegalArgumentException.class);
        assertThat(tenantTokens()).isEqualTo(60);
        assertThat(globalTokens()).isEqualTo(960);
    }

    @Test
    void withoutAGlobalQuotaOnlyTheTenantIsSettled() {
        Decisions alone = new Decisions(PlansFile.parse("t.yml", """
                plans: { llm: { limits: [ { capacity: 100, refill: 10, period: 1s } ] } }
                """), store);
        Decision.Admitted a = (Decision.Admitted) alone.admit("solo", "llm", 50);
        assertThat(a.globalCharged()).isFalse();
        alone.reconcile(a, 20);
        assertThat(HeldBuckets.available(store, BucketKind.TENANT, "solo")).isEqualTo(80);
    }
}

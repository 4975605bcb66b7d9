package io.quotagate.filter.internal.admission;

import io.quotagate.filter.status.BandwidthStatus;
import io.quotagate.filter.status.Reason;
import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.store.HeldBuckets;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.GlobalQuota;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Limits changed while running: bucket state kept (AS_IS), tenants migrated lazily, shadow mode, status. */
class RuntimeLimitsTest {
    private final ManualClock clock = new ManualClock();
    private final BucketStore store = BucketStore.local(1000, clock);
    private final Plans plans = PlansFile.parse("t.yml", """
            global: { limits: [ { name: api, capacity: 1000, refill: 1000, period: 1m } ] }
            plans:
              free: { limits: [ { name: burst, capacity: 100, refill: 100, period: 1m } ] }
              pro:  { limits: [ { name: burst, capacity: 500, refill: 500, period: 1m } ] }
            routes:
              - { name: big, paths: ["/big"], cost: 50 }
            tenants: { default-plan: free }
            """);
    private final Decisions admission = new Decisions(plans, store);

    private long tokens(String tenant) {
        return HeldBuckets.available(store, BucketKind.TENANT, tenant);
    }

    private long globalTokens() {
        return HeldBuckets.available(store, BucketKind.GLOBAL, LimitsCompiler.GLOBAL_KEY);
    }

    private static List<Bandwidth> limit(String name, long capacity) {
        return List.of(new Bandwidth(name, capacity, capacity, Duration.ofMinutes(1)));
    }

    @Test
    void raisingTheGlobalQuotaKeepsItsTokensAndRefillsToTheNewCapacity() {
        admission.admit("acme", "pro", 400);
        assertThat(globalTokens()).isEqualTo(600);

        admission.apply(plans.withGlobal(Optional.of(new GlobalQuota(limit("api", 1500)))));
        assertThat(globalTokens()).as("AS_IS: the 600 left are kept, no instant burst").isEqualTo(600);
        clock.advance(Duration.ofSeconds(30)); // new rate: 1500/min, so 750 in 30 s
        assertThat(globalTokens()).isEqualTo(1350);
        clock.advance(Duration.ofSeconds(30));
        assertThat(globalTokens()).as("full at the new capacity").isEqualTo(1500);
    }

    @Test
    void loweringTheGlobalQuotaCapsItsTokensAtOnce() {
        admission.admit("acme", "pro", 100);
        admission.apply(plans.withGlobal(Optional.of(new GlobalQuota(limit("api", 300)))));
        assertThat(globalTokens()).as("900 capped at the new capacity").isEqualTo(300);
        assertThat(admission.maxCost("pro")).isEqualTo(300);
    }

    @Test
    void existingTenantBucketsMoveToChangedPlanLimitsOnTheirNextRequest() {
        admission.admit("acme", "free", 90);
        admission.apply(plans.withPlanLimits("free", limit("burst", 200)));

        assertThat(tokens("acme")).as("not touched until its next request").isEqualTo(10);
        assertThat(admission.admit("acme", "free", 10)).isInstanceOf(Decision.Admitted.class);
        assertThat(tokens("acme")).isEqualTo(0);
        clock.advance(Duration.ofSeconds(30));
        assertThat(tokens("acme")).as("refills at the new 200/min").isEqualTo(100);
        clock.advance(Duration.ofSeconds(29));
        assertThat(tokens("acme")).as("100 + 29 s × 200/min").isEqualTo(196);
        clock.advance(Duration.ofSeconds(20));
        assertThat(tokens("acme")).as("never above the new capacity").isEqualTo(200);
    }

    @Test
    void loweringAPlanCapsTheTokensOfItsTenantsAtTheNewCapacity() {
        admission.admit("globex", "free", 20);
        admission.apply(plans.withPlanLimits("free", limit("burst", 50)));
        assertThat(admission.admit("globex", "free", 1)).isInstanceOf(Decision.Admitted.class);
        assertThat(tokens("globex")).as("min(80, 50) - 1").isEqualTo(49);
    }

    @Test
    void aDebtSurvivesAPlanChange() {
        Decision.Admitted a = (Decision.Admitted) admission.admit("acme", "free", 60);
        admission.reconcile(a, 160); // 100 - 160 = -60
        admission.apply(plans.withPlanLimits("free", limit("burst", 300)));
        assertThat(admission.admit("acme", "free", 1)).isInstanceOf(Decision.Rejected.class);
        assertThat(tokens("acme")).isEqualTo(-60);
    }

    @Test
    void aTenantMovedToAnotherPlanKeepsItsTokens() {
        admission.admit("acme", "free", 70);
        assertThat(admission.admit("acme", "pro", 10)).isInstanceOf(Decision.Admitted.class);
        assertThat(tokens("acme")).as("30 kept, not a fresh 500").isEqualTo(20);
    }

    @Test
    void unchangedPlansKeepTheirBucketsUntouched() {
        admission.admit("acme", "pro", 100);
        admission.apply(PlansFile.parse("t.yml", """
                plans:
                  free: { limits: [ { name: burst, capacity: 100, refill: 100, period: 1m } ] }
                  pro:  { limits: [ { name: burst, capacity: 500, refill: 500, period: 1m } ] }
                tenants: { default-plan: free }
                """));
        assertThat(tokens("acme")).isEqualTo(400);
        assertThat(admission.maxCost("pro")).as("no global quota any more").isEqualTo(500);
    }

    @Test
    void aRuntimeChangeThatARouteCostCouldNeverFitIsRefused() {
        assertThatThrownBy(() -> plans.withGlobal(Optional.of(new GlobalQuota(limit("api", 49)))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("route 'big'");
        assertThatThrownBy(() -> plans.withPlanLimits("free", limit("burst", 10)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cost 50");
        assertThatThrownBy(() -> plans.withPlanLimits("gold", limit("burst", 100)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unknown plan 'gold'");
    }

    @Test
    void shadowModeRefusesNothingButCountsWhatItWouldHaveRefused() {
        Decisions shadow = new Decisions(PlansFile.parse("s.yml", """
                global: { limits: [ { capacity: 3, refill: 3, period: 1m } ] }
                plans:
                  free: { limits: [ { capacity: 2, refill: 2, period: 1m } ], shadow: true }
                  strict: { limits: [ { capacity: 2, refill: 2, period: 1m } ] }
                tenants: { default-plan: free }
                """), BucketStore.local(100, clock));
        assertThat(shadow.admit("a", "free", 1)).isInstanceOf(Decision.Admitted.class);
        assertThat(shadow.admit("a", "free", 1)).isInstanceOf(Decision.Admitted.class);
        Decision.Admitted d = (Decision.Admitted) shadow.admit("a", "free", 1);
        assertThat(d.shadowed()).isTrue();
        assertThat(d.charged()).as("nothing taken, as when refusing").isZero();
        assertThat(d.shadowRejection().reason()).isEqualTo(Reason.TENANT_RATE);
        assertThat(d.shadowRejection().retryAfterSeconds()).isEqualTo(30);
        assertThat(shadow.admit("b", "free", 1)).isInstanceOf(Decision.Admitted.class); // global now empty
        Decision.Admitted g = (Decision.Admitted) shadow.admit("c", "free", 1);
        assertThat(g.shadowRejection().reason()).isEqualTo(Reason.GLOBAL_RATE);
        assertThat(shadow.status("c", "free").get(0).remaining()).as("the tenant is not charged for a global refusal").isEqualTo(2);

        assertThat(shadow.admit("d", "strict", 1)).as("a plan not in shadow mode enforces").isInstanceOf(Decision.Rejected.class);
        assertThat(shadow.shadowRejections(Reason.TENANT_RATE)).isEqualTo(1);
        assertThat(shadow.shadowRejections(Reason.GLOBAL_RATE)).isEqualTo(1);
    }

    @Test
    void aTopLevelShadowSwitchCoversEveryPlan() {
        Decisions shadow = new Decisions(PlansFile.parse("s.yml", """
                shadow: true
                plans: { free: { limits: [ { capacity: 1, refill: 1, period: 1m } ] } }
                """), BucketStore.local(100, clock));
        shadow.admit("a", "free", 1);
        assertThat(((Decision.Admitted) shadow.admit("a", "free", 1)).shadowed()).isTrue();
        assertThat(shadow.shadowRejections(Reason.TENANT_RATE)).isEqualTo(1);
    }

    @Test
    void statusReportsEachBandwidthOfTheTenantsBucketButNeverTheGlobalQuota() {
        Decisions a = new Decisions(PlansFile.parse("p.yml", """
                global: { limits: [ { capacity: 1000, refill: 1000, period: 1m } ] }
                plans:
                  open:
                    publish: true
                    limits:
                      - { name: burst, capacity: 200, refill: 100, period: 10s }
                      - { name: daily, capacity: 5000, refill: 5000, period: 1d }
                """), BucketStore.local(100, clock));
        a.admit("acme", "open", 163);
        List<BandwidthStatus> status = a.status("acme", "open");
        assertThat(status).hasSize(2);
        assertThat(status.get(0)).isEqualTo(new BandwidthStatus("burst", 200, 20, 37, Duration.ofMillis(16_300).toNanos()));
        assertThat(status.get(1).name()).isEqualTo("daily");
        assertThat(status.get(1).remaining()).isEqualTo(4837);
        assertThat(status.get(1).windowSeconds()).isEqualTo(86_400);
        assertThat(a.publishes("open")).isTrue();
        assertThat(admission.publishes("free")).isFalse();
    }
}

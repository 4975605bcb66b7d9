package io.quotagate.filter.internal.admission;

import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import io.quotagate.tenant.TenantDirectory;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/** Plan assignment (directory, unknown policy) and per-tenant overrides, servlet-free. */
class TenantPlansTest {
    private static final String PLANS = """
            plans:
              free: { limits: [ { capacity: 2, refill: 2, period: 1m } ] }
              pro:  { limits: [ { capacity: 5, refill: 5, period: 1m } ] }
            tenants:
              default-plan: free
              unknown: %s
              assignments: { acme: pro }
              overrides:
                bigcorp: { plan: pro, limits: [ { capacity: 8, refill: 8, period: 1m } ] }
            """;

    private static Plans plans(String unknown) {
        return PlansFile.parse("t.yml", PLANS.formatted(unknown));
    }

    @Test
    void assignedTenantsGoToTheTenantTableUnknownOnesToTheGuestTable() {
        Plans p = plans("default");
        TenantPlans tp = new TenantPlans(p, TenantDirectory.of(p.tenants().assignments()));
        assertThat(tp.place("acme")).contains(new TenantPlans.Placement(BucketKind.TENANT, "pro"));
        assertThat(tp.place("bigcorp")).contains(new TenantPlans.Placement(BucketKind.TENANT, "pro"));
        assertThat(tp.place("stranger")).contains(new TenantPlans.Placement(BucketKind.GUEST, "free"));
        assertThat(tp.anonymous()).isEqualTo(new TenantPlans.Placement(BucketKind.GUEST, "free"));
    }

    @Test
    void everyPlacementNamesItsPlanByThePlansOwnNameString() {
        // the policy's maps by plan are keyed by these very strings: each request's lookups match by identity
        Plans p = plans("default");
        TenantPlans tp = new TenantPlans(p, t -> Optional.of(new String("pro")));
        assertThat(tp.place("acme").orElseThrow().plan()).isSameAs(p.plans().get("pro").name());
        TenantPlans guests = new TenantPlans(p, t -> Optional.empty());
        assertThat(guests.place("stranger").orElseThrow().plan()).isSameAs(p.plans().get("free").name());
        assertThat(guests.anonymous().plan()).isSameAs(p.plans().get("free").name());
    }

    @Test
    void unknownTenantsArePlacedNowhereUnderReject() {
        Plans p = plans("reject");
        TenantPlans tp = new TenantPlans(p, TenantDirectory.of(p.tenants().assignments()));
        assertThat(tp.place("stranger")).isEmpty();
        assertThat(tp.place("acme")).isPresent();
    }

    @Test
    void aDirectoryNamingAnUndefinedPlanMakesTheTenantUnknownNotA500() {
        Plans p = plans("reject");
        TenantPlans tp = new TenantPlans(p, t -> Optional.of("platinum"));
        assertThat(tp.place("acme")).isEmpty();
        Plans d = plans("default");
        assertThat(new TenantPlans(d, t -> Optional.of("platinum")).place("acme"))
                .contains(new TenantPlans.Placement(BucketKind.GUEST, "free"));
    }

    @Test
    void anOverrideReplacesThePlansLimitsForThatTenantOnly() {
        Plans p = plans("default");
        Decisions a = new Decisions(p, BucketStore.local(100, new ManualClock()));
        assertThat(admitted(a, BucketKind.TENANT, "bigcorp", "pro")).isEqualTo(8);
        assertThat(admitted(a, BucketKind.TENANT, "acme", "pro")).isEqualTo(5);
        assertThat(admitted(a, BucketKind.GUEST, "bigcorp-lookalike", "free")).isEqualTo(2);
    }

    @Test
    void aGuestKeyNeverSharesAnAssignedTenantsBucket() {
        Plans p = plans("default");
        Decisions a = new Decisions(p, BucketStore.local(100, new ManualClock()));
        assertThat(admitted(a, BucketKind.TENANT, "acme", "pro")).isEqualTo(5);
        assertThat(admitted(a, BucketKind.GUEST, "acme", "free")).as("a separate table").isEqualTo(2);
    }

    private static int admitted(Decisions a, BucketKind kind, String key, String plan) {
        int n = 0;
        while (n < 100 && a.admit(kind, key, plan, 1) instanceof Decision.Admitted) n++;
        return n;
    }

    @Test
    void theFileAssignmentsComeBeforeTheUserDirectory() {
        Plans p = plans("reject");
        TenantDirectory d = TenantDirectory.of(p.tenants().assignments()).orElse(TenantDirectory.of(Map.of("acme", "free", "newco", "free")));
        TenantPlans tp = new TenantPlans(p, d);
        assertThat(tp.place("acme")).contains(new TenantPlans.Placement(BucketKind.TENANT, "pro"));
        assertThat(tp.place("newco")).contains(new TenantPlans.Placement(BucketKind.TENANT, "free"));
    }
}

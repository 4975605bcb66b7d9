package io.quotagate.filter.internal.admission;

import io.quotagate.filter.status.ConcurrencyListener;
import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import io.quotagate.tenant.TenantDirectory;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ConcurrencyLimitsTest {
    static final String PLANS = """
            plans:
              free:
                limits: [ { capacity: 100, refill: 100, period: 1s } ]
                concurrency: { reports: 1, exports: 1, slow: 1 }
              pro:
                limits: [ { capacity: 100, refill: 100, period: 1s } ]
                concurrency: { reports: 2, slow: 2 }
            routes:
              - { name: reports, paths: ["/reports/*"], group: reports }
              - { name: exports, paths: ["/exports/*"], group: exports }
              - { name: slow, paths: ["/slow/*"], group: slow }
              - { name: audit, paths: ["/audit/*"], group: audit }
            groups:
              exports: { max-inflight: 2 }
              slow: { max-inflight: 2, queue: { size: 3, max-wait: 60s } }
            tenants:
              default-plan: free
            """;

    private final ManualClock clock = new ManualClock();
    private final List<Object[]> waits = new ArrayList<>();
    private final ConcurrencyLimits limits = limits(PLANS);

    private ConcurrencyLimits limits(String yaml) {
        Plans plans = PlansFile.parse("test.yml", yaml);
        return new ConcurrencyLimits(plans, clock, (group, tenant, nanos, admitted) -> {
            synchronized (waits) {
                waits.add(new Object[]{group, tenant, nanos, admitted});
            }
        });
    }

    private static Permit granted(Acquisition a) {
        assertThat(a).isInstanceOf(Acquisition.Granted.class);
        return ((Acquisition.Granted) a).permit();
    }

    @Test
    void withSeveralInstancesEachHoldsItsShareOfATenantsCap() {
        java.util.concurrent.atomic.AtomicInteger instances = new java.util.concurrent.atomic.AtomicInteger(2);
        ConcurrencyLimits shared = new ConcurrencyLimits(PlansFile.parse("test.yml", PLANS), clock,
                ConcurrencyListener.NONE, instances::get);
        Permit b1 = granted(shared.acquire("b", "pro", "reports"));
        assertThat(shared.acquire("b", "pro", "reports")).as("pro caps reports at 2: 1 per instance of 2")
                .isInstanceOf(Acquisition.Refused.class);
        granted(shared.acquire("a", "free", "reports")); // a cap of 1 stays 1: never 0
        instances.set(1); // the other instance went away
        granted(shared.acquire("b", "pro", "reports"));
        b1.release();
    }

    @Test
    void capsEachTenantByItsPlanAndAReleaseFreesTheSlot() {
        Permit a1 = granted(limits.acquire("a", "free", "reports"));
        assertThat(limits.acquire("a", "free", "reports")).isInstanceOf(Acquisition.Refused.class);
        Permit b1 = granted(limits.acquire("b", "pro", "reports"));
        Permit b2 = granted(limits.acquire("b", "pro", "reports"));
        assertThat(limits.acquire("b", "pro", "reports")).isInstanceOf(Acquisition.Refused.class);
        assertThat(limits.inflight("reports")).isEqualTo(3);
        assertThat(limits.inflightByTenant("reports")).isEqualTo(Map.of("a", 1, "b", 2));

        a1.release();
        granted(limits.acquire("a", "free", "reports")).release();
        b1.release();
        b2.release();
        assertThat(limits.inflight("reports")).isZero();
        assertThat(limits.inflight("reports", "b")).isZero();
    }

    @Test
    void aGroupCapLimitsAllTenantsTogether() {
        Permit a = granted(limits.acquire("a", "free", "exports"));
        Permit b = granted(limits.acquire("b", "free", "exports"));
        assertThat(limits.acquire("c", "free", "exports")).isInstanceOf(Acquisition.Refused.class);
        assertThat(limits.inflight("exports", "c")).as("the refused tenant's slot was given back").isZero();
        assertThat(limits.trackedTenants("exports")).isEqualTo(2);
        a.release();
        granted(limits.acquire("c", "free", "exports")).release();
        b.release();
    }

    @Test
    void aGroupNoPlanCapsIsCountedButNeverRefuses() {
        List<Permit> held = new ArrayList<>();
        for (int i = 0; i < 50; i++) held.add(granted(limits.acquire("a", "pro", "audit")));
        assertThat(limits.inflight("audit")).isEqualTo(50);
        held.forEach(Permit::release);
        assertThat(limits.inflight("audit")).isZero();
    }

    @Test
    void releaseAndCancelAreIdempotent() {
        Permit p = granted(limits.acquire("b", "pro", "reports"));
        p.release();
        p.release();
        p.cancel();
        Permit q = granted(limits.acquire("b", "pro", "reports"));
        Permit r = granted(limits.acquire("b", "pro", "reports"));
        assertThat(limits.acquire("b", "pro", "reports"))
                .as("a second release of the same permit must not free another slot").isInstanceOf(Acquisition.Refused.class);
        q.cancel();
        q.release();
        r.release();
        assertThat(limits.inflight("reports")).isZero();
    }

    @Test
    void tenantEntriesVanishWhenTheirLastRequestEnds() {
        for (int t = 0; t < 1000; t++) {
            granted(limits.acquire("tenant-" + t, "free", "reports")).release();
            granted(limits.acquire("tenant-" + t, "free", "slow")).release();
        }
        assertThat(limits.trackedTenants("reports")).isZero();
        assertThat(limits.trackedTenants("slow")).isZero();
    }

    @Test
    void retryAfterIsTheMovingAverageOfCompletedDurationsRoundedUp() {
        Permit held = granted(limits.acquire("a", "free", "reports"));
        Acquisition.Refused first = (Acquisition.Refused) limits.acquire("a", "free", "reports");
        assertThat(first.retryAfterSeconds()).as("no request completed yet: 1 s").isEqualTo(1);

        clock.advance(Duration.ofMillis(4200));
        held.release(); // 4.2 s: the first sample is the average
        held = granted(limits.acquire("a", "free", "reports"));
        assertThat(((Acquisition.Refused) limits.acquire("a", "free", "reports")).retryAfterSeconds()).isEqualTo(5);

        clock.advance(Duration.ofMillis(200));
        held.release(); // 4.2 + 0.2 × (0.2 − 4.2) = 3.4 s
        assertThat(limits.averageDurationNanos("reports")).isEqualTo(3_400_000_000L);
        held = granted(limits.acquire("a", "free", "reports"));
        assertThat(((Acquisition.Refused) limits.acquire("a", "free", "reports")).retryAfterSeconds()).isEqualTo(4);

        clock.advance(Duration.ofHours(1));
        held.cancel(); // a request that never ran is no sample
        assertThat(limits.averageDurationNanos("reports")).isEqualTo(3_400_000_000L);
    }

    @Test
    void anUnknownGroupIsAProgrammingError() {
        assertThatThrownBy(() -> limits.acquire("a", "free", "nope")).isInstanceOf(IllegalArgumentException.class);
        assertThat(limits.inflight("nope")).isZero();
        assertThat(limits.groups()).containsExactlyInAnyOrder("reports", "exports", "slow", "audit");
    }

    // ---- queued groups ------------------------------------------------------------------------

    private final ExecutorService pool = Executors.newCachedThreadPool();

    private Future<Acquisition> acquireLater(String tenant, String plan, String group) {
        return pool.submit(() -> limits.acquire(tenant, plan, group));
    }

    @Test
    void aQueuedRequestGetsTheSlotOfTheRequestThatEnds_firstInFirstServed() throws Exception {
        Permit a1 = granted(limits.acquire("a", "free", "slow"));
        Future<Acquisition> a2 = acquireLater("a", "free", "slow");
        Await.until("one queued", () -> limits.queued("slow") == 1);
        Future<Acquisition> a3 = acquireLater("a", "free", "slow");
        Await.until("two queued", () -> limits.queued("slow") == 2);
        assertThat(limits.queuedByTenant("slow")).isEqualTo(Map.of("a", 2));

        a1.release();
        Permit second = granted(a2.get(30, TimeUnit.SECONDS));
        assertThat(a3.isDone()).as("the later waiter still waits").isFalse();
        assertThat(limits.queued("slow", "a")).isEqualTo(1);
        second.release();
        granted(a3.get(30, TimeUnit.SECONDS)).release();
        assertThat(limits.inflight("slow")).isZero();
        assertThat(limits.queued("slow")).isZero();
        assertThat(limits.trackedTenants("slow")).isZero();
        synchronized (waits) {
            assertThat(waits).hasSize(2).allSatisfy(w -> assertThat(w[3]).isEqualTo(true));
        }
    }

    @Test
    void aWaiterBlockedByItsOwnTenantCapDoesNotBlockOtherTenants() throws Exception {
        Permit a1 = granted(limits.acquire("a", "free", "slow"));
        Permit b1 = granted(limits.acquire("b", "free", "slow")); // group full (max-inflight 2)
        Future<Acquisition> a2 = acquireLater("a", "free", "slow");
        Await.until("one queued", () -> limits.queued("slow") == 1);
        Future<Acquisition> c1 = acquireLater("c", "free", "slow");
        Await.until("two queued", () -> limits.queued("slow") == 2);

        b1.release(); // a2 is first, but tenant a is still at its cap of 1: c1 takes the slot
        Permit c = granted(c1.get(30, TimeUnit.SECONDS));
        assertThat(a2.isDone()).isFalse();
        a1.release();
        granted(a2.get(30, TimeUnit.SECONDS)).release();
        c.release();
        assertThat(limits.inflight("slow")).isZero();
    }

    @Test
    void aFullQueueRefusesAtOnce() throws Exception {
        Permit a1 = granted(limits.acquire("a", "free", "slow"));
        List<Future<Acquisition>> waiting = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            waiting.add(acquireLater("a", "free", "slow"));
            int n = i;
            Await.until(n + " queued", () -> limits.queued("slow") == n);
        }
        Acquisition refused = limits.acquire("a", "free", "slow");
        assertThat(refused).isEqualTo(new Acquisition.Refused("slow", GroupLimiter.DEFAULT_DURATION_NANOS, false));
        a1.release();
        for (Future<Acquisition> f : waiting) granted(f.get(30, TimeUnit.SECONDS)).release();
        assertThat(limits.inflight("slow")).isZero();
    }

    @Test
    void aRequestThatWaitsTooLongIsRefusedAndLeavesTheQueue() throws Exception {
        ConcurrencyLimits quick = limits(PLANS.replace("max-wait: 60s", "max-wait: 50ms"));
        Permit held = granted(quick.acquire("a", "free", "slow"));
        Acquisition timedOut = quick.acquire("a", "free", "slow");
        assertThat(timedOut).isInstanceOfSatisfying(Acquisition.Refused.class, r -> assertThat(r.timedOut()).isTrue());
        assertThat(quick.queued("slow")).isZero();
        held.release();
        assertThat(quick.trackedTenants("slow")).isZero();
        synchronized (waits) {
            assertThat(waits).hasSize(1);
            assertThat(waits.get(0)[0]).isEqualTo("slow");
            assertThat((long) waits.get(0)[2]).isGreaterThanOrEqualTo(50_000_000L);
            assertThat(waits.get(0)[3]).isEqualTo(false);
        }
    }

    @Test
    void underContentionNoCapIsExceededAndEveryCountEndsAtZero() throws Exception {
        // 4 threads × 3 tenants × 2 engines; counted in-flight here must never exceed any cap
        int threads = 4;
        int rounds = 50_000;
        String[] groups = {"exports", "reports"};
        AtomicIntegerArray perTenant = new AtomicIntegerArray(6);
        AtomicInteger exportsTotal = new AtomicInteger();
        AtomicInteger violations = new AtomicInteger();
        AtomicInteger refusals = new AtomicInteger();
        List<CompletableFuture<Void>> runs = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int seed = t;
            runs.add(CompletableFuture.runAsync(() -> {
                for (int i = 0; i < rounds; i++) {
                    int g = (i + seed) & 1;
                    int tenant = (i * 7 + seed) % 3;
                    Acquisition a = limits.acquire("t" + tenant, tenant == 2 ? "pro" : "free", groups[g]);
                    if (a instanceof Acquisition.Granted granted) {
                        int slot = g * 3 + tenant;
                        // pro (t2): reports 2, exports uncapped per tenant (only the group's 2)
                        int cap = tenant != 2 ? 1 : g == 1 ? 2 : Integer.MAX_VALUE;
                        if (perTenant.incrementAndGet(slot) > cap) violations.incrementAndGet();
                        if (g == 0 && exportsTotal.incrementAndGet() > 2) violations.incrementAndGet();
                        Thread.onSpinWait();
                        if (g == 0) exportsTotal.decrementAndGet();
                        perTenant.decrementAndGet(slot);
                        granted.permit().release();
                    } else {
                        refusals.incrementAndGet();
                    }
                }
            }, pool));
        }
        CompletableFuture.allOf(runs.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        assertThat(violations.get()).isZero();
        assertThat(refusals.get()).as("the caps were actually contended").isPositive();
        for (String g : groups) {
            assertThat(limits.inflight(g)).isZero();
            assertThat(limits.trackedTenants(g)).isZero();
        }
    }

    @Test
    void guestsTogetherHoldAtMostTheirSharedCapAndGiveBothSlotsBack() {
        String yaml = PLANS.replace("  default-plan: free", """
                  default-plan: free
                  guests: { concurrency: { reports: 2 } }
                """);
        ConcurrencyLimits l = limits(yaml);
        Policy p = new Admission(BucketStore.local(10, clock)).policy(PlansFile.parse("test.yml", yaml));
        Permit a = granted(l.acquire(p, BucketKind.GUEST, "made-up-1", "free", "reports"));
        Permit b = granted(l.acquire(p, BucketKind.GUEST, "made-up-2", "free", "reports"));
        // a third made-up id has a slot of its own, but the guests' two are taken
        assertThat(l.acquire(p, BucketKind.GUEST, "made-up-3", "free", "reports")).isInstanceOf(Acquisition.Refused.class);
        // assigned tenants never count against the guests' cap
        granted(l.acquire(p, BucketKind.TENANT, "acme", "pro", "reports")).release();
        assertThat(l.guestsInflight("reports")).isEqualTo(2);
        // a guest refused by its own cap gives the shared slot it took back at once
        a.release();
        assertThat(l.acquire(p, BucketKind.GUEST, "made-up-2", "free", "reports")).isInstanceOf(Acquisition.Refused.class);
        assertThat(l.guestsInflight("reports")).isEqualTo(1);
        b.cancel();
        b.release(); // idempotent: a second end frees nothing more
        assertThat(l.guestsInflight("reports")).isZero();
        assertThat(l.inflight("reports")).isZero();
        // groups without a guests' cap: each guest only has its own
        granted(l.acquire(p, BucketKind.GUEST, "made-up-1", "free", "exports"));
        granted(l.acquire(p, BucketKind.GUEST, "made-up-2", "free", "exports"));
    }

    @Test
    void noGuestIdNorClientAddressHoldsMoreThanItsFairShareOfTheGuestsCap() {
        String yaml = PLANS.replace("  default-plan: free", """
                  default-plan: free
                  guests: { concurrency: { slow: 8 } }
                """).replace("slow: { max-inflight: 2, queue: { size: 3, max-wait: 60s } }",
                "slow: { max-inflight: 40 }").replace("concurrency: { reports: 2, slow: 2 }",
                "concurrency: { reports: 2, slow: 8 }");
        ConcurrencyLimits l = limits(yaml);
        Policy p = new Admission(BucketStore.local(10, clock)).policy(PlansFile.parse("test.yml", yaml));
        // one address, many made-up ids (each of the free plan's cap of 1): alone it gets half of the 8
        for (int i = 0; i < 4; i++) granted(l.acquire(p, BucketKind.GUEST, "made-up-" + i, "free", "slow", "10.0.0.66"));
        Acquisition refused = l.acquire(p, BucketKind.GUEST, "made-up-4", "free", "slow", "10.0.0.66");
        assertThat(refused).isInstanceOf(Acquisition.Refused.class);
        // another address is a newcomer: it finds a slot; then each holds at most 8 / (2 + 1) = 2 more...
        granted(l.acquire(p, BucketKind.GUEST, "visitor", "free", "slow", "10.0.0.7"));
        assertThat(l.guestsInflight("slow")).isEqualTo(5);
        // one id on a plan that allows 8 (a guest on pro): alone, half of the pool's slots left to others
        ConcurrencyLimits fresh = limits(yaml);
        for (int i = 0; i < 4; i++) granted(fresh.acquire(p, BucketKind.GUEST, "big", "pro", "slow", "10.0.0." + i));
        assertThat(fresh.acquire(p, BucketKind.GUEST, "big", "pro", "slow", "10.0.0.9"))
                .isInstanceOf(Acquisition.Refused.class);
        // a refused guest holds nothing: neither its own slot nor a share
        assertThat(fresh.inflight("slow", "big")).isEqualTo(4);
        assertThat(fresh.guestsInflight("slow")).isEqualTo(4);
    }

    @Test
    void aTenantAtItsCapWaitsForItsOwnOldestRequestByItsOwnDurations() {
        // b's requests take 12 s: one finished, so its own average says so
        Permit first = granted(limits.acquire("b", "pro", "reports"));
        clock.advance(Duration.ofSeconds(12));
        first.release();
        Permit oldest = granted(limits.acquire("b", "pro", "reports"));
        clock.advance(Duration.ofSeconds(5));
        granted(limits.acquire("b", "pro", "reports"));
        // a's instant requests pull the group's average to almost nothing
        for (int i = 0; i < 20; i++) granted(limits.acquire("a", "free", "reports")).release();
        clock.advance(Duration.ofSeconds(2));
        Acquisition.Refused refused = (Acquisition.Refused) limits.acquire("b", "pro", "reports");
        assertThat(refused.nanosToWait()).isEqualTo(Duration.ofSeconds(12 - 7).toNanos()); // the oldest ran 7 s
        // past its expected end, the wait is what it overran by
        clock.advance(Duration.ofSeconds(8));
        refused = (Acquisition.Refused) limits.acquire("b", "pro", "reports");
        assertThat(refused.nanosToWait()).isEqualTo(Duration.ofSeconds(3).toNanos());
        oldest.release();
        granted(limits.acquire("b", "pro", "reports"));
    }

    @Test
    void capsComeFromThePolicyEachRequestReadSoAReloadChangesThemAndANewPlanIsCapped() {
        Admission admission = new Admission(BucketStore.local(10, clock));
        Policy before = admission.policy(PlansFile.parse("v1.yml", PLANS));
        Policy after = admission.policy(PlansFile.parse("v2.yml", PLANS
                .replace("concurrency: { reports: 1, exports: 1, slow: 1 }", "concurrency: { reports: 2, exports: 1, slow: 1 }")
                .replace("routes:", "  team:\n    limits: [ { capacity: 100, refill: 100, period: 1s } ]\n"
                        + "    concurrency: { reports: 1 }\nroutes:")), TenantDirectory.of(Map.of()), before);
        granted(limits.acquire(before, BucketKind.TENANT, "acme", "free", "reports"));
        assertThat(limits.acquire(before, BucketKind.TENANT, "acme", "free", "reports"))
                .as("free allows 1 under the old file").isInstanceOf(Acquisition.Refused.class);
        granted(limits.acquire(after, BucketKind.TENANT, "acme", "free", "reports"));
        assertThat(limits.acquire(after, BucketKind.TENANT, "acme", "free", "reports"))
                .as("free allows 2 under the new one").isInstanceOf(Acquisition.Refused.class);
        granted(limits.acquire(after, BucketKind.TENANT, "globex", "team", "reports"));
        assertThat(limits.acquire(after, BucketKind.TENANT, "globex", "team", "reports"))
                .as("a plan the reload added has its cap").isInstanceOf(Acquisition.Refused.class);
    }
}

package io.quotagate.filter.store;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.internal.admission.ConcurrencyLimits;
import io.quotagate.filter.internal.admission.FailureLog;
import io.quotagate.filter.internal.admission.Gate;
import io.quotagate.filter.internal.admission.Outcome;
import io.quotagate.filter.internal.admission.Policy;
import io.quotagate.filter.internal.admission.Ticket;
import io.quotagate.filter.internal.route.Route;
import io.quotagate.filter.status.ConcurrencyListener;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import io.quotagate.tenant.TenantDirectory;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Hostile tenant ids and memory: a flood of made-up ids must neither reset an assigned tenant's bucket
 * (handing it a fresh, full one) nor grow memory without bound.
 */
class SpoofedTenantFloodTest {
    private static final int SPOOFED = 200_000;
    private static final int MAX_TRACKED = 10_000;
    private static final String PLANS = """
            plans:
              free: { limits: [ { capacity: 3, refill: 3, period: 1h } ] }
              pro:  { limits: [ { capacity: 20, refill: 20, period: 1h } ] }
            tenants:
              default-plan: free
              unknown: %s
              max-tracked: %d
              assignments: { acme: pro }
            """;

    private final ManualClock clock = new ManualClock(); // frozen: a full bucket for acme can only come from a reset

    @Test
    void twoHundredThousandSpoofedIdsNeitherResetAnAssignedTenantNorGrowTheHeap() {
        Plans plans = PlansFile.parse("flood.yml", PLANS.formatted("default", MAX_TRACKED));
        LocalBucketStore store = new LocalBucketStore(MAX_TRACKED, clock);
        Gate gate = gate(plans, store);
        Policy policy = gate.policy(plans, TenantDirectory.of(plans.tenants().assignments()), null);

        int admitted = 0;
        while (admit(gate, policy, "acme") instanceof Ticket) admitted++;
        assertThat(admitted).isEqualTo(20);

        long heapBefore = usedHeapAfterGc();
        int acmeRejections = 0;
        for (int i = 0; i < SPOOFED; i++) {
            assertThat(admit(gate, policy, "spoof-" + i)).isInstanceOf(Ticket.class);
            if (i % 1000 == 999) {
                assertThat(admit(gate, policy, "acme")).as("after %d spoofed ids", i + 1).isInstanceOfSatisfying(
                        Outcome.Refused.class, r -> assertThat(r.reason()).isEqualTo("tenant_rate"));
                acmeRejections++;
            }
        }
        long heapAfter = usedHeapAfterGc();

        assertThat(acmeRejections).isEqualTo(SPOOFED / 1000);
        assertThat(store.tenantCount()).as("assigned table").isEqualTo(1);
        assertThat(store.guestCount()).as("guest table bounded by max-tracked").isLessThanOrEqualTo(MAX_TRACKED);
        // 200,000 kept buckets would take well over 100 MB; 10,000 take a few MB. The bound is generous
        // so that GC noise cannot fail the test, and still far below what an unbounded table would hold.
        assertThat(heapAfter - heapBefore).as("heap growth in bytes").isLessThan(48L << 20);
    }

    @Test
    void underUnknownRejectSpoofedIdsNeverCreateABucket() {
        Plans plans = PlansFile.parse("flood.yml", PLANS.formatted("reject", MAX_TRACKED));
        LocalBucketStore store = new LocalBucketStore(MAX_TRACKED, clock);
        Gate gate = gate(plans, store);
        Policy policy = gate.policy(plans, TenantDirectory.of(plans.tenants().assignments()), null);
        for (int i = 0; i < SPOOFED; i++) {
            assertThat(admit(gate, policy, "spoof-" + i)).isInstanceOfSatisfying(Outcome.Refused.class,
                    r -> assertThat(r.status()).isEqualTo(403));
        }
        assertThat(admit(gate, policy, "acme")).isInstanceOf(Ticket.class);
        assertThat(store.guestCount()).isZero();
        assertThat(store.tenantCount()).isEqualTo(1);
    }

    @Test
    void overRealHttpSpoofedIdsLeaveTheAssignedTenantAtItsLimit() throws Exception {
        int maxTracked = 200;
        Plans plans = PlansFile.parse("flood.yml", PLANS.formatted("default", maxTracked));
        LocalBucketStore store = new LocalBucketStore(maxTracked, clock);
        try (JettyServer server = JettyServer.start(QuotaFilter.builder().plans(plans).clock(clock).store(store).build())) {
            for (int i = 0; i < 20; i++) assertThat(Http.get(server.uri("/items/1"), "acme").statusCode()).isEqualTo(200);
            for (int i = 0; i < 2_000; i++) {
                assertThat(Http.get(server.uri("/items/1"), "spoof-" + i).statusCode()).isEqualTo(200);
                if (i % 100 == 99) {
                    var r = Http.get(server.uri("/items/1"), "acme");
                    assertThat(r.statusCode()).as("after %d spoofed ids", i + 1).isEqualTo(429);
                    assertThat(r.body()).contains("\"tenant\":\"acme\"", "\"reason\":\"tenant_rate\"");
                }
            }
            assertThat(store.guestCount()).isLessThanOrEqualTo(maxTracked);
            assertThat(store.tenantCount()).isEqualTo(1);
        }
    }

    @Test
    void overRealHttpUnknownRejectAnswers403AndKeepsNoBucket() throws Exception {
        Plans plans = PlansFile.parse("flood.yml", PLANS.formatted("reject", 100));
        LocalBucketStore store = new LocalBucketStore(100, clock);
        try (JettyServer server = JettyServer.start(QuotaFilter.builder().plans(plans).clock(clock).store(store).build())) {
            for (int i = 0; i < 300; i++) {
                var r = Http.get(server.uri("/items/1"), "spoof-" + i);
                assertThat(r.statusCode()).isEqualTo(403);
                assertThat(r.body()).contains("\"reason\":\"unknown_tenant\"");
            }
            assertThat(store.guestCount()).isZero();
        }
    }

    private Gate gate(Plans plans, BucketStore store) {
        return new Gate(store, new ConcurrencyLimits(plans, clock, ConcurrencyListener.NONE),
                new FailureLog(System.getLogger("test"), clock, "tenant directory"));
    }

    /** One request of cost 1 as the filter decides it; an admitted one runs (its units stay taken). */
    private static Outcome admit(Gate gate, Policy policy, String tenant) {
        Outcome outcome = gate.decide(policy, Route.DEFAULT, tenant, null);
        if (outcome instanceof Ticket ticket) ticket.run();
        return outcome;
    }

    private static long usedHeapAfterGc() {
        var memory = ManagementFactory.getMemoryMXBean();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) { // a few full collections settle finalisable and soft garbage
            System.gc();
            used = Math.min(used, memory.getHeapMemoryUsage().getUsed());
        }
        return used;
    }
}

package io.quotagate.filter;

import io.quotagate.filter.internal.admission.Acquisition;
import io.quotagate.filter.internal.admission.ConcurrencyLimits;
import io.quotagate.filter.internal.admission.Decisions;
import io.quotagate.filter.internal.admission.FailureLog;
import io.quotagate.filter.internal.admission.Gate;
import io.quotagate.filter.internal.admission.Outcome;
import io.quotagate.filter.internal.admission.Policy;
import io.quotagate.filter.internal.admission.Ticket;
import io.quotagate.filter.internal.route.Route;
import io.quotagate.filter.status.ConcurrencyListener;
import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.LogCapture;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import io.quotagate.tenant.TenantDirectory;
import org.junit.jupiter.api.Test;
import java.util.Optional;

import java.net.http.HttpResponse;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Failures of foreign code (directories, listeners, reloads) never leak a slot, a unit or a stack trace. */
class FailureContainmentTest {
    private final ManualClock clock = new ManualClock();

    private static final String PLANS = """
            plans:
              free:
                limits: [ { capacity: 100, refill: 100, period: 1m } ]
                concurrency: { reports: 1 }
            routes:
              - { name: reports, paths: ["/reports/*"], group: reports }
            groups:
              reports: { queue: { size: 4, max-wait: 5s } }
            tenants:
              overrides:
                small: { plan: free, limits: [ { capacity: 10, refill: 10, period: 1m } ] }
            """;

    @Test
    void aThrowingTenantDirectoryPlacesTheTenantOnTheDefaultPlanNot500() throws Exception {
        Plans plans = PlansFile.parse("p.yml", PLANS);
        QuotaFilter filter = QuotaFilter.builder().plans(plans).clock(clock)
                .tenantDirectory(tenant -> {
                    throw new IllegalStateException("billing database is down");
                }).build();
        try (JettyServer server = JettyServer.start(filter)) {
            HttpResponse<String> r = Http.get(server.uri("/items/1"), "stranger");
            assertThat(r.statusCode()).as("tenants.directory.unavailable: default, the default").isEqualTo(200);
            assertThat(r.body()).doesNotContain("billing database", "Exception");
        }
    }

    @Test
    void aThrowingTenantDirectoryUnderRefuseGives503WithRetryAfterNot500() throws Exception {
        Plans plans = PlansFile.parse("p.yml", PLANS + "  directory: { unavailable: refuse }\n");
        QuotaFilter filter = QuotaFilter.builder().plans(plans).clock(clock)
                .tenantDirectory(tenant -> {
                    throw new IllegalStateException("billing database is down");
                }).build();
        try (JettyServer server = JettyServer.start(filter)) {
            HttpResponse<String> r = Http.get(server.uri("/items/1"), "stranger");
            assertThat(r.statusCode()).isEqualTo(503);
            assertThat(r.headers().firstValue("Retry-After")).contains("5");
            assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("application/problem+json");
            assertThat(r.body()).contains("\"reason\":\"directory_unavailable\"", "\"tenant\":\"stranger\"")
                    .doesNotContain("billing database", "Exception");
            assertThat(Http.get(server.uri("/items/1"), "small").statusCode())
                    .as("a tenant of the file's assignments is never asked of the directory").isEqualTo(200);
        }
    }

    @Test
    void aFailingResolverOrDirectoryIsLoggedOncePerIntervalNotPerRequest() throws Exception {
        QuotaFilter filter = QuotaFilter.builder().plans(PlansFile.parse("p.yml", PLANS)).clock(clock)
                .tenantDirectory(tenant -> {
                    throw new IllegalStateException("billing database is down");
                }).build();
        try (LogCapture log = LogCapture.of(QuotaFilter.class, java.util.logging.Level.SEVERE);
             JettyServer server = JettyServer.start(filter)) {
            // the default plan's answers (its 100 units a minute, then 429), never a 500
            for (int i = 0; i < 200; i++) assertThat(Http.get(server.uri("/items/1"), "stranger").statusCode()).isIn(200, 429);
            assertThat(log.messages()).containsExactly("tenant directory failed for tenant stranger");
            clock.advance(java.time.Duration.ofSeconds(io.quotagate.filter.internal.admission.FailureLog.INTERVAL_SECONDS));
            assertThat(Http.get(server.uri("/items/1"), "stranger").statusCode()).isIn(200, 429);
            assertThat(log.messages()).hasSize(2).last().asString()
                    .isEqualTo("tenant directory failed for tenant stranger (and 199 times more in the last 10 s or longer, not logged)");
        }
    }

    @Test
    void aThrowingConcurrencyListenerCannotStrandAQueuedSlot() throws Exception {
        Plans plans = PlansFile.parse("p.yml", PLANS);
        ConcurrencyLimits limits = new ConcurrencyLimits(plans, clock, (group, tenant, nanos, admitted) -> {
            throw new IllegalStateException("a broken metrics sink");
        });
        Acquisition.Granted first = (Acquisition.Granted) limits.acquire("acme", "free", "reports");
        CompletableFuture<Acquisition> second = CompletableFuture.supplyAsync(() -> limits.acquire("acme", "free", "reports"));
        Await.until("the second request queued", () -> limits.queued("reports") == 1);
        first.permit().release();

        Acquisition got = second.get(10, TimeUnit.SECONDS);
        assertThat(got).isInstanceOf(Acquisition.Granted.class);
        ((Acquisition.Granted) got).permit().release();
        assertThat(limits.inflight("reports")).isZero();
        assertThat(limits.inflightByTenant("reports")).isEmpty();
    }

    @Test
    void aReloadThatAddsAConcurrencyGroupIsRefusedAndTheOldPlansStay() {
        Plans plans = PlansFile.parse("p.yml", PLANS);
        QuotaFilter filter = QuotaFilter.builder().plans(plans).clock(clock).build();
        Plans withExports = PlansFile.parse("p2.yml", PLANS.replace(
                "  - { name: reports, paths: [\"/reports/*\"], group: reports }",
                "  - { name: reports, paths: [\"/reports/*\"], group: reports }\n  - { name: exports, paths: [\"/exports/*\"], group: exports }"));
        assertThatThrownBy(() -> filter.control().apply(withExports))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("p2.yml").hasMessageContaining("exports").hasMessageContaining("restart");
        assertThat(filter.control().plans()).isSameAs(plans);
    }

    @Test
    void aTenantOverrideBoundsTheLargestCost() {
        Plans plans = PlansFile.parse("p.yml", PLANS);
        Decisions admission = new Decisions(plans, BucketStore.local(100, clock));
        assertThat(admission.maxCost("free")).isEqualTo(100);
        assertThat(admission.maxCost(BucketKind.TENANT, "small", "free")).isEqualTo(10);
        assertThat(admission.maxCost(BucketKind.TENANT, "acme", "free")).isEqualTo(100);
        assertThatThrownBy(() -> admission.admit(BucketKind.TENANT, "small", "free", 50))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("could never be admitted");
    }

    @Test
    void aRequestAdmittedBeforeAReloadIsSettledByThePolicyThatAdmittedIt() {
        Plans v1 = PlansFile.parse("p.yml", PLANS.replace("plans:\n", "plans:\n  old: { limits: [ { capacity: 5, refill: 5, period: 1m } ] }\n")
                .replace("tenants:\n", "tenants:\n  default-plan: free\n  assignments: { acme: old }\n"));
        Gate gate = new Gate(BucketStore.local(100, clock), new ConcurrencyLimits(v1, clock, ConcurrencyListener.NONE),
                new FailureLog(System.getLogger("test"), clock, "directory"));
        Policy before = gate.policy(v1, TenantDirectory.of(v1.tenants().assignments()), null);
        Route items = new Route("items", 3, Optional.empty(), true);
        Ticket ticket = (Ticket) gate.decide(before, items, "acme", null);
        ticket.run();
        // the reload drops plan "old": acme is now an unknown tenant (guest, default plan)
        Plans v2 = PlansFile.parse("p2.yml", PLANS.replace("tenants:\n", "tenants:\n  default-plan: free\n"));
        Policy after = gate.policy(v2, TenantDirectory.of(v2.tenants().assignments()), before);
        assertThat(gate.tenantLimits(after, "acme").get(0).capacity()).isEqualTo(100);
        // the request that ran on "old" settles against old's bucket: 5 - 3 + 2 refunded = 4
        assertThat(gate.settle(ticket, 1)).isEqualTo(-2);
        assertThat(gate.tenantLimits(before, "acme").get(0).remaining()).isEqualTo(4);
        // and the old policy still decides by old's limits (capacity 5): 4 fit, the 5th is refused
        Route one = new Route("items", 1, Optional.empty(), true);
        for (int i = 0; i < 4; i++) {
            Ticket t = (Ticket) gate.decide(before, one, "acme", null);
            t.run();
            gate.release(t); // frees nothing: it runs
        }
        assertThat(gate.decide(before, one, "acme", null)).isInstanceOfSatisfying(Outcome.Refused.class,
                r -> assertThat(r.reason()).isEqualTo("tenant_rate"));
    }

    @Test
    void aTicketClosedWithoutRunningGivesBackItsSlotAndUnits() {
        Plans plans = PlansFile.parse("p.yml", PLANS.replace("tenants:\n", "tenants:\n  default-plan: free\n"));
        ConcurrencyLimits limits = new ConcurrencyLimits(plans, clock, ConcurrencyListener.NONE);
        Gate gate = new Gate(BucketStore.local(100, clock), limits, new FailureLog(System.getLogger("test"), clock, "directory"));
        Policy policy = gate.policy(plans, TenantDirectory.of(plans.tenants().assignments()), null);
        Route reports = new Route("reports", 7, Optional.of("reports"), true);
        Ticket ticket = (Ticket) gate.decide(policy, reports, "acme", null);
        try {
            assertThat(limits.inflight("reports", "acme")).isEqualTo(1);
            assertThat(gate.tenantLimits(policy, "acme").get(0).remaining()).isEqualTo(93);
            assertThat(gate.reprice(ticket, 20)).isNull();
            assertThat(gate.tenantLimits(policy, "acme").get(0).remaining()).isEqualTo(80);
        } finally {
            gate.release(ticket);
        }
        assertThat(limits.inflight("reports", "acme")).isZero();
        assertThat(gate.tenantLimits(policy, "acme").get(0).remaining()).isEqualTo(100);
        // kept: a body read and refused as bad input is paid for
        Ticket kept = (Ticket) gate.decide(policy, reports, "acme", null);
        kept.keepCharge();
        gate.release(kept);
        assertThat(limits.inflight("reports", "acme")).isZero();
        assertThat(gate.tenantLimits(policy, "acme").get(0).remaining()).isEqualTo(93);
    }
}

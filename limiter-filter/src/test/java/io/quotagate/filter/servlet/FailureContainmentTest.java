package io.quotagate.filter.servlet;

import io.quotagate.filter.admission.Acquisition;
import io.quotagate.filter.admission.Admission;
import io.quotagate.filter.admission.ConcurrencyLimits;
import io.quotagate.filter.core.BucketKind;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.LogCapture;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.Test;

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
    void aThrowingTenantDirectoryGivesAProblem500NotAStackTrace() throws Exception {
        Plans plans = PlansFile.parse("p.yml", PLANS);
        QuotaFilter filter = QuotaFilter.builder().plans(plans).clock(clock)
                .tenantDirectory(tenant -> {
                    throw new IllegalStateException("billing database is down");
                }).build();
        try (JettyServer server = JettyServer.start(filter)) {
            HttpResponse<String> r = Http.get(server.uri("/items/1"), "stranger");
            assertThat(r.statusCode()).isEqualTo(500);
            assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("application/problem+json");
            assertThat(r.body()).contains("\"reason\":\"internal_error\"").doesNotContain("billing database", "Exception");
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
            for (int i = 0; i < 200; i++) assertThat(Http.get(server.uri("/items/1"), "stranger").statusCode()).isEqualTo(500);
            assertThat(log.messages()).containsExactly("tenant directory failed for tenant stranger");
            clock.advance(java.time.Duration.ofSeconds(FailureLog.INTERVAL_SECONDS));
            assertThat(Http.get(server.uri("/items/1"), "stranger").statusCode()).isEqualTo(500);
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
        for (int i = 0; i < 500 && limits.queued("reports") == 0; i++) Thread.sleep(10);
        assertThat(limits.queued("reports")).isEqualTo(1);
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
        assertThatThrownBy(() -> filter.apply(withExports))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("p2.yml").hasMessageContaining("exports").hasMessageContaining("restart");
        assertThat(filter.plans()).isSameAs(plans);
    }

    @Test
    void aTenantOverrideBoundsTheLargestCost() {
        Plans plans = PlansFile.parse("p.yml", PLANS);
        Admission admission = new Admission(plans, BucketStore.local(100, clock));
        assertThat(admission.maxCost("free")).isEqualTo(100);
        assertThat(admission.maxCost(BucketKind.TENANT, "small", "free")).isEqualTo(10);
        assertThat(admission.maxCost(BucketKind.TENANT, "acme", "free")).isEqualTo(100);
        assertThatThrownBy(() -> admission.admit(BucketKind.TENANT, "small", "free", 50))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("could never be admitted");
    }

    @Test
    void aPlanDroppedByAReloadStillDecidesRequestsPlacedBeforeIt() {
        Plans plans = PlansFile.parse("p.yml", PLANS.replace("plans:\n", "plans:\n  old: { limits: [ { capacity: 5, refill: 5, period: 1m } ] }\n")
                .replace("tenants:\n", "tenants:\n  default-plan: free\n"));
        Admission admission = new Admission(plans, BucketStore.local(100, clock));
        admission.apply(PlansFile.parse("p2.yml", PLANS));
        assertThat(admission.admit(BucketKind.TENANT, "acme", "old", 1)).isNotNull();
        // the dropped plan's own limits (capacity 5, not free's 100) still decide: 4 more fit, the 6th is refused
        assertThat(admission.maxCost(BucketKind.TENANT, "acme", "old")).isEqualTo(5);
        for (int i = 2; i <= 5; i++) {
            assertThat(admission.admit(BucketKind.TENANT, "acme", "old", 1)).as("request %d", i)
                    .isInstanceOf(io.quotagate.filter.admission.Decision.Admitted.class);
        }
        io.quotagate.filter.admission.Decision sixth = admission.admit(BucketKind.TENANT, "acme", "old", 1);
        assertThat(sixth).isInstanceOf(io.quotagate.filter.admission.Decision.Rejected.class);
        assertThat(((io.quotagate.filter.admission.Decision.Rejected) sixth).reason())
                .isEqualTo(io.quotagate.filter.admission.Reason.TENANT_RATE);
        assertThatThrownBy(() -> admission.admit(BucketKind.TENANT, "acme", "never-existed", 1))
                .isInstanceOf(IllegalArgumentException.class);
    }
}

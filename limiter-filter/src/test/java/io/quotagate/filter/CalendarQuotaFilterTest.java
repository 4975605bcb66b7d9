package io.quotagate.filter;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quotagate.filter.metrics.QuotaMeterBinder;
import io.quotagate.filter.status.QuotaUsage;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.CalendarQuota;
import io.quotagate.plans.PlansFile;
import io.quotagate.tenant.TenantContract;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Calendar quotas on real Jetty: the 429's contract, the readout, and a change at runtime. */
class CalendarQuotaFilterTest {
    private static final String PLANS = """
            plans:
              free:
                limits: [ { capacity: 100, refill: 100, period: 1s } ]
              pro:
                limits: [ { capacity: 100, refill: 100, period: 1s } ]
                quotas:
                  - { name: monthly, limit: 3, per: month, zone: Europe/Berlin }
            routes:
              - { name: export, paths: ["/export"], cost: 2 }
            tenants:
              default-plan: free
              assignments: { acme: pro, globex: free }
            """;

    private final ManualClock clock = new ManualClock();
    private QuotaFilter filter;
    private JettyServer server;

    private void start(String now) throws Exception {
        filter = QuotaFilter.builder().plans(PlansFile.parse("plans.yml", PLANS)).clock(clock)
                .wallClock(clock.wallClock(Instant.parse(now))).build();
        server = JettyServer.start(filter);
    }

    @AfterEach
    void stop() throws Exception {
        if (server != null) server.close();
    }

    private HttpResponse<String> get(String path, String tenant) throws Exception {
        return Http.get(server.uri(path), tenant);
    }

    @Test
    void aPublishedPlanPublishesItsQuotaWithItsPeriodAsWindowAndTheResetAsT() throws Exception {
        filter = QuotaFilter.builder().plans(PlansFile.parse("plans.yml", PLANS.replace("  pro:\n",
                "  pro:\n    publish: true\n"))).clock(clock)
                .wallClock(clock.wallClock(Instant.parse("2027-02-28T20:00:00Z"))).build();
        server = JettyServer.start(filter);
        HttpResponse<String> first = get("/items", "acme");
        // February 2027 in Berlin: 28 days; 3 hours to its end
        assertThat(first.headers().firstValue("RateLimit-Policy").orElseThrow())
                .contains("\"monthly\";q=3;w=" + 28 * 86_400);
        assertThat(first.headers().firstValue("RateLimit").orElseThrow()).contains("\"monthly\";r=2;t=10800");
        get("/export", "acme");
        HttpResponse<String> refused = get("/items", "acme");
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.headers().firstValue("RateLimit").orElseThrow()).as("only the exhausted policy")
                .isEqualTo("\"monthly\";r=0;t=10800;pk=:YWNtZQ==:");
        assertThat(refused.body()).contains("\"violated-policies\":[\"monthly\"]");
    }

    @Test
    void aUsedUpQuotaIsA429WithItsOwnReasonRetryAfterToTheResetAndADetailNamingIt() throws Exception {
        start("2027-02-28T20:00:00Z"); // 21:00 in Berlin on the last day of February: 3 hours left
        assertThat(get("/items", "acme").statusCode()).isEqualTo(200);
        assertThat(get("/export", "acme").statusCode()).isEqualTo(200); // costs 2: 3 of 3 used
        HttpResponse<String> refused = get("/items", "acme");
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.headers().firstValue("Retry-After")).hasValue("10800");
        assertThat(refused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(refused.body()).contains("\"reason\":\"quota\"")
                .contains("The tenant's quota 'monthly' is used up until it resets; retry after 10800 s.")
                .contains("\"retryAfterSeconds\":10800");
        assertThat(get("/items", "globex").statusCode()).as("a plan without quotas").isEqualTo(200);
        assertThat(filter.control().tenantQuotas("acme")).containsExactly(new QuotaUsage("monthly",
                CalendarQuota.Per.MONTH, 3, 3, 0, Instant.parse("2027-02-28T23:00:00Z")));
        assertThat(filter.control().tenantQuotas("globex")).isEmpty();

        clock.advance(Duration.ofSeconds(10800));
        assertThat(get("/items", "acme").statusCode()).as("March").isEqualTo(200);
        assertThat(filter.control().tenantQuotas("acme").get(0).used()).isEqualTo(1);
    }

    @Test
    void metricsShowEachPlansQuotaLimitAndWhatANamedTenantUsedAndCountQuotaRefusals() throws Exception {
        start("2027-03-10T12:00:00Z");
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new QuotaMeterBinder(filter.control()).bindTo(registry);
        for (int i = 0; i < 4; i++) get("/items", "acme");
        get("/items", "globex");
        assertThat(registry.get(QuotaMeterBinder.QUOTA_LIMIT).tags("plan", "pro", "quota", "monthly").gauge().value())
                .isEqualTo(3.0);
        assertThat(registry.get(QuotaMeterBinder.QUOTA_USED).tags("tenant", "acme", "quota", "monthly").gauge().value())
                .isEqualTo(3.0);
        assertThat(registry.get(QuotaMeterBinder.QUOTA_USAGE).tags("tenant", "acme", "quota", "monthly").gauge().value())
                .as("used up: the ratio an alert watches").isEqualTo(1.0);
        assertThat(registry.find(QuotaMeterBinder.QUOTA_USED).tags("tenant", "globex").gauges())
                .as("a plan without quotas has no quota series").isEmpty();
        assertThat(registry.find(QuotaMeterBinder.QUOTA_USAGE).tags("tenant", "globex").gauges()).isEmpty();
        assertThat(registry.get(QuotaMeterBinder.REQUESTS).tags("tenant", "acme", "reason", "quota").functionCounter()
                .count()).isEqualTo(1.0);
        filter.control().setPlanQuotas("pro", List.of());
        assertThat(registry.get(QuotaMeterBinder.QUOTA_LIMIT).tags("plan", "pro", "quota", "monthly").gauge().value())
                .as("gone").isNaN();
        assertThat(registry.get(QuotaMeterBinder.QUOTA_USED).tags("tenant", "acme", "quota", "monthly").gauge().value())
                .isNaN();
        assertThat(registry.get(QuotaMeterBinder.QUOTA_USAGE).tags("tenant", "acme", "quota", "monthly").gauge().value())
                .isNaN();
    }

    @Test
    void aTenantsOwnQuotasFromARuntimeContractOrTheDirectoryReplaceItsPlans() throws Exception {
        List<CalendarQuota> onePerDay = List.of(new CalendarQuota("daily", 2, CalendarQuota.Per.DAY, ZoneId.of("UTC")));
        filter = QuotaFilter.builder().plans(PlansFile.parse("plans.yml", PLANS)).clock(clock)
                .wallClock(clock.wallClock(Instant.parse("2027-03-10T12:00:00Z")))
                .tenantDirectory(new io.quotagate.tenant.TenantDirectory() {
                    @Override
                    public java.util.Optional<String> planOf(String tenant) {
                        return contractOf(tenant).map(TenantContract::plan);
                    }

                    @Override
                    public java.util.Optional<TenantContract> contractOf(String tenant) {
                        return tenant.equals("initech") ? java.util.Optional.of(new TenantContract("free", List.of(),
                                onePerDay)) : java.util.Optional.empty();
                    }
                })
                .build();
        server = JettyServer.start(filter);
        // the directory's contract: the free plan's bandwidths, quotas of its own
        for (int i = 0; i < 2; i++) assertThat(get("/items", "initech").statusCode()).isEqualTo(200);
        assertThat(get("/items", "initech").statusCode()).isEqualTo(429);
        assertThat(filter.control().tenantQuotas("initech").get(0).name()).isEqualTo("daily");
        // a runtime contract: globex (free, no quotas) gets one
        filter.control().setTenant("globex", new TenantContract("free", List.of(), onePerDay));
        assertThat(filter.control().tenant("globex")).hasValue(new TenantContract("free", List.of(), onePerDay));
        for (int i = 0; i < 2; i++) assertThat(get("/items", "globex").statusCode()).isEqualTo(200);
        HttpResponse<String> refused = get("/items", "globex");
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.body()).contains("'daily'");
        // and acme (pro: monthly 3) none at all
        filter.control().setTenant("acme", new TenantContract("pro", List.of(), List.of()));
        for (int i = 0; i < 5; i++) assertThat(get("/items", "acme").statusCode()).isEqualTo(200);
        assertThat(filter.control().overrides().tenants()).containsKeys("acme", "globex");
    }

    @Test
    void aQuotaSetAtRuntimeIsEnforcedAndCountsOnFromThisPeriodsUse() throws Exception {
        start("2027-03-10T12:00:00Z");
        for (int i = 0; i < 2; i++) assertThat(get("/items", "acme").statusCode()).isEqualTo(200);
        List<CalendarQuota> five = List.of(new CalendarQuota("monthly", 5, CalendarQuota.Per.MONTH,
                ZoneId.of("Europe/Berlin")));
        filter.control().setPlanQuotas("pro", five);
        assertThat(filter.control().plans().plan("pro").orElseThrow().quotas()).isEqualTo(five);
        assertThat(filter.control().overrides().quotas()).containsEntry("pro", five);
        assertThat(filter.control().tenantQuotas("acme").get(0).used()).as("the same counter").isEqualTo(2);
        for (int i = 0; i < 3; i++) assertThat(get("/items", "acme").statusCode()).isEqualTo(200);
        assertThat(get("/items", "acme").statusCode()).isEqualTo(429);

        assertThatThrownBy(() -> filter.control().setPlanQuotas("pro",
                List.of(new CalendarQuota("tiny", 1, CalendarQuota.Per.DAY, ZoneId.of("UTC")))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("below the cost 2 of route 'export'");
        filter.control().setPlanQuotas("pro", List.of());
        assertThat(get("/items", "acme").statusCode()).as("quota removed").isEqualTo(200);
        filter.control().clearOverrides();
        assertThat(get("/items", "acme").statusCode()).as("the file's quota again: 5 of 3 used").isEqualTo(429);
    }
}

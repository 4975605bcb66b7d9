package io.quotagate.loadtest.bench;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.internal.metrics.RequestStatistics;
import io.quotagate.filter.metrics.StatisticsView;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/** Each mode of {@link FilterBenchmark} runs its filter on the stub request and is admitted. */
class FilterBenchmarkTest {

    @ParameterizedTest
    @ValueSource(strings = {"bare", "quotagate-1-tenant", "jetty-dosfilter", "quotagate-10000-tenants",
            "counter-map-10000-tenants", "bucket4j-map-10000-tenants", "resilience4j-10000-tenants"})
    void everyModeAdmitsTheBenchmarkRequests(String mode) throws Exception {
        FilterBenchmark benchmark = new FilterBenchmark();
        benchmark.mode = mode;
        benchmark.setUp(); // one request per tenant, each must be admitted
        try {
            assertThat(benchmark.filter == null).isEqualTo(mode.equals("bare"));
            for (int i = 0; i < 1_000; i++) assertThat(benchmark.filter()).as("request %d", i).isEqualTo(200);
            if (benchmark.filter instanceof QuotaFilter quota) { // it decided them: limited route, counted
                long allowed = quota.control().statistics().cells().stream()
                        .filter(c -> c.result() == StatisticsView.Result.ALLOWED && c.route().equals("items"))
                        .mapToLong(StatisticsView.Cell::count).sum();
                assertThat(allowed).isEqualTo(Mode.ofLabel(mode).tenants() + 1_000L);
            }
        } finally {
            benchmark.tearDown();
        }
    }

    /** QuotaFilter with each algorithm, fed a tenant count other than its label's: each tenant admitted and counted. */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.CsvSource({"token-bucket, 1", "gcra, 1", "sliding-window, 1",
            "token-bucket, 20000", "gcra, 20000", "sliding-window, 20000"})
    void quotaFiltersModesTakeAnAlgorithmAndATenantCount(String algorithm, int tenants) throws Exception {
        FilterBenchmark benchmark = new FilterBenchmark();
        benchmark.mode = "quotagate-10000-tenants";
        benchmark.algorithm = algorithm;
        benchmark.tenants = Integer.toString(tenants);
        benchmark.setUp();
        try {
            for (int i = 0; i < 1_000; i++) assertThat(benchmark.filter()).as("request %d", i).isEqualTo(200);
            QuotaFilter quota = (QuotaFilter) benchmark.filter;
            assertThat(quota.control().plans().plan("bench").orElseThrow().limits()).singleElement()
                    .satisfies(b -> assertThat(b.algorithm().fileName()).isEqualTo(algorithm));
            assertThat(quota.control().tenantLimits("tenant-00000")).singleElement()
                    .satisfies(s -> assertThat(s.algorithm().fileName()).isEqualTo(algorithm));
            long allowed = quota.control().statistics().cells().stream()
                    .filter(c -> c.result() == StatisticsView.Result.ALLOWED && c.route().equals("items"))
                    .mapToLong(StatisticsView.Cell::count).sum();
            assertThat(allowed).isEqualTo(tenants + 1_000L);
        } finally {
            benchmark.tearDown();
        }
        FilterBenchmark wrong = new FilterBenchmark();
        wrong.mode = "quotagate-1-tenant";
        wrong.algorithm = "leaky-bucket";
        org.assertj.core.api.Assertions.assertThatThrownBy(wrong::setUp)
                .hasMessage("unknown algorithm 'leaky-bucket'; algorithms: token-bucket, gcra, sliding-window");
        wrong.algorithm = "gcra";
        wrong.tenants = "0";
        org.assertj.core.api.Assertions.assertThatThrownBy(wrong::setUp)
                .hasMessage("tenants must be 'mode' or 1 to 10000000, was '0'");
    }
}

package io.quotagate.example;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.internal.metrics.RequestStatistics;
import io.quotagate.filter.metrics.QuotaSource;
import io.quotagate.filter.metrics.StatisticsView.Result;
import io.quotagate.filter.metrics.StatisticsView;
import io.quotagate.filter.status.ConcurrencyView;
import io.quotagate.filter.status.Reason;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The dashboard's per-second counts when tenants lose and regain their name between two samples. */
class DashboardHistoryTest {

    @Test
    void aTenantRenamedBetweenTwoSamplesKeepsEveryRequestCountedAndNoRateGoesNegative() throws Exception {
        QuotaFilter filter = QuotaFilter.builder().plans(PlansFile.parse("d.yml", """
                plans: { free: { limits: [ { capacity: 10, refill: 10, period: 1s } ] } }
                tenants: { assignments: { first: free } }
                """)).topTenants(1).build();
        // the filter's own counters are read-only: record into counters like its own, behind its other reads
        RequestStatistics.Recorder recorder = new RequestStatistics.Recorder(1, List.of("first"));
        RequestStatistics s = recorder.statistics();
        long recorded = 0;
        try (DashboardHistory history = new DashboardHistory(withStatistics(filter, s))) {
            for (int i = 0; i < 5_000; i++, recorded++) recorder.record("first", true, "free", "items", Result.ALLOWED, null);
            history.sample();

            // between two samples: "second" (known to the directory, say) outgrows the quiet "first" and
            // takes the one name, then "first" takes it back: it lost a cell of 5,000 and starts a new one from 0
            recorded += sendUntilNamed(recorder, "second");
            assertThat(s.namedTenants()).containsExactly("second");
            recorded += sendUntilNamed(recorder, "first");
            assertThat(s.namedTenants()).containsExactly("first");
            history.sample();

            JsonNode tenants = new ObjectMapper().readTree(history.json()).get("tenants");
            long total = 0;
            for (JsonNode tenant : tenants) {
                for (JsonNode perSecond : tenant.get("allowed")) {
                    assertThat(perSecond.asLong()).as(tenants.toString()).isNotNegative();
                    total += perSecond.asLong();
                }
            }
            assertThat(total).as("every request, under one tag or another").isEqualTo(recorded);
            assertThat(new ObjectMapper().readTree(history.json()).get("topTenants").asInt()).isEqualTo(1);
        }
    }

    private static QuotaSource withStatistics(QuotaFilter filter, RequestStatistics statistics) {
        QuotaSource control = filter.control();
        return new QuotaSource() {
            @Override
            public RequestStatistics statistics() {
                return statistics;
            }

            @Override
            public ConcurrencyView concurrency() {
                return control.concurrency();
            }

            @Override
            public long globalQuotaCapacity() {
                return control.globalQuotaCapacity();
            }

            @Override
            public long globalQuotaAvailable() {
                return control.globalQuotaAvailable();
            }

            @Override
            public long shadowRejections(Reason reason) {
                return control.shadowRejections(reason);
            }
        };
    }

    /** Sends requests of one known tenant alone until it has the name; returns how many. */
    private static long sendUntilNamed(RequestStatistics.Recorder s, String tenant) {
        long sent = 0;
        while (!s.statistics().tagOf(tenant).equals(tenant)) {
            assertThat(sent).as("%s named within a few epochs of its traffic", tenant).isLessThan(1_000_000);
            s.record(tenant, true, "free", "items", Result.ALLOWED, null);
            sent++;
        }
        return sent;
    }
}

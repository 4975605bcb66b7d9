package io.quotagate.filter;

import io.quotagate.filter.status.BandwidthStatus;
import io.quotagate.filter.status.LimitsReport;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.Algorithm;
import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import io.quotagate.tenant.TenantContract;
import io.quotagate.tenant.TenantDirectory;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Each limit's algorithm reaches the buckets' limits and every readout of them, from the plans file, a runtime
 * change and a tenant directory; what an algorithm cannot do is refused there too. (How each algorithm admits is
 * the store contract's.)
 */
class AlgorithmLimitsTest {
    private static final Plans PLANS = PlansFile.parse("plans.yml", """
            plans:
              free:
                limits:
                  - { name: minute, algorithm: sliding-window, capacity: 100, period: 1m }
                  - { name: burst, algorithm: gcra, capacity: 20, refill: 10, period: 10s }
                  - { name: day, capacity: 1000, refill: 1000, period: 1d }
              pro:
                limits: [ { capacity: 200, refill: 100, period: 10s } ]
                throttle: { max-delay: 500ms, queue: 10 }
            tenants:
              default-plan: free
              assignments: { acme: free, initech: pro }
            """);

    private static QuotaFilter filter(TenantDirectory directory) {
        QuotaFilter.Builder b = QuotaFilter.builder().plans(PLANS).clock(new ManualClock());
        if (directory != null) b.tenantDirectory(directory);
        return b.build();
    }

    @Test
    void aTenantsBandwidthsCarryTheirPlansAlgorithms() {
        List<BandwidthStatus> acme = filter(null).control().tenantLimits("acme");
        assertThat(acme).extracting(BandwidthStatus::name).containsExactly("minute", "burst", "day");
        assertThat(acme).extracting(BandwidthStatus::algorithm)
                .containsExactly(Algorithm.SLIDING_WINDOW, Algorithm.GCRA, Algorithm.TOKEN_BUCKET);
        assertThat(acme.get(0).capacity()).isEqualTo(100);
    }

    @Test
    void aRuntimeChangeSetsTheAlgorithmAndTheReportsShowIt() {
        QuotaControl control = filter(null).control();
        control.setPlanLimits("free", List.of(Bandwidth.gcra("burst", 30, 10, Duration.ofSeconds(10))));
        assertThat(control.tenantLimits("acme")).singleElement()
                .satisfies(s -> assertThat(s.algorithm()).isEqualTo(Algorithm.GCRA));
        assertThat(LimitsReport.overrides(control.overrides()).get("plans")).isEqualTo(Map.of("free", List.of(
                Map.of("name", "burst", "capacity", 30L, "refill", 10L, "period", "PT10S", "algorithm", "gcra"))));
        // a throttled plan cannot take a sliding window: refused, nothing changed
        assertThatThrownBy(() -> control.setPlanLimits("pro",
                List.of(Bandwidth.slidingWindow("minute", 100, Duration.ofMinutes(1)))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("a sliding window cannot reserve units ahead, as the throttle plans.pro.throttle");
        assertThat(control.tenantLimits("initech")).singleElement()
                .satisfies(s -> assertThat(s.algorithm()).isEqualTo(Algorithm.TOKEN_BUCKET));
    }

    @Test
    void aDirectorysOwnLimitsCarryTheirAlgorithmUnlessAThrottleCannotReserveInThem() {
        List<Bandwidth> ownWindow = List.of(Bandwidth.slidingWindow("minute", 50, Duration.ofMinutes(1)));
        TenantDirectory directory = new TenantDirectory() {
            @Override
            public Optional<String> planOf(String tenant) {
                return contractOf(tenant).map(TenantContract::plan);
            }

            @Override
            public Optional<TenantContract> contractOf(String tenant) {
                return switch (tenant) {
                    case "hooli" -> Optional.of(new TenantContract("free", ownWindow));
                    case "umbrella" -> Optional.of(new TenantContract("pro", ownWindow));
                    default -> Optional.empty();
                };
            }
        };
        QuotaControl control = filter(directory).control();
        assertThat(control.tenantLimits("hooli")).singleElement().satisfies(s -> {
            assertThat(s.algorithm()).isEqualTo(Algorithm.SLIDING_WINDOW);
            assertThat(s.capacity()).isEqualTo(50);
        });
        // on the throttled plan its own sliding window is refused (logged): it gets the plan's token bucket
        assertThat(control.tenantLimits("umbrella")).singleElement().satisfies(s -> {
            assertThat(s.algorithm()).isEqualTo(Algorithm.TOKEN_BUCKET);
            assertThat(s.capacity()).isEqualTo(200);
        });
    }
}

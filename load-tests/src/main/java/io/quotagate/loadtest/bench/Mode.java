package io.quotagate.loadtest.bench;

import io.quotagate.filter.servlet.QuotaFilter;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import jakarta.servlet.ServletException;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlets.DoSFilter;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;
import org.eclipse.jetty.util.thread.Scheduler;

import java.util.Arrays;
import java.util.Optional;

/**
 * What stands in front of the benchmark endpoint. Every limit is far above what two cores can serve,
 * so every request is admitted and the modes differ only by the filter's own cost.
 */
enum Mode {
    BARE("bare", 1),
    QUOTAGATE_1_TENANT("quotagate-1-tenant", 1),
    QUOTAGATE_10000_TENANTS("quotagate-10000-tenants", 10_000),
    JETTY_DOSFILTER("jetty-dosfilter", 1);

    /**
     * One plan whose single bandwidth no benchmark can empty: 10^12 units refilled over a day (so an
     * idle bucket stays cached between runs instead of being rebuilt), behind a small route table
     * like a real application's.
     */
    static final String PLANS_YAML = """
            plans:
              bench:
                limits:
                  - { capacity: 1000000000000, refill: 1000000000000, period: 1d }
            routes:
              - { name: ops, paths: ["/health", "/metrics"], limited: false }
              - { name: reports, methods: [GET], paths: ["/reports/*"], cost: 5 }
              - { name: items, methods: [GET], paths: ["/items/*"], cost: 1 }
            tenants:
              default-plan: bench
              max-tracked: 100000
            """;

    /** DoSFilter keeps a {@code long[maxRequestsPerSec]} per client: high, but not absurd. */
    static final int DOS_MAX_REQUESTS_PER_SEC = 1_000_000;

    private final String label;
    private final int tenants;

    Mode(String label, int tenants) {
        this.label = label;
        this.tenants = tenants;
    }

    /** The name in reports and JSON, e.g. {@code quotagate-1-tenant}. */
    String label() {
        return label;
    }

    /** How many distinct {@code X-Tenant-Id} values the load generator cycles through. */
    int tenants() {
        return tenants;
    }

    /**
     * The filter of this mode, or empty for {@link #BARE}.
     *
     * @param threadPrefix name prefix for any thread the filter starts, so its CPU counts as the server's
     */
    Optional<FilterHolder> filter(String threadPrefix) {
        return switch (this) {
            case BARE -> Optional.empty();
            case QUOTAGATE_1_TENANT, QUOTAGATE_10000_TENANTS -> {
                Plans plans = PlansFile.parse("bench-plans.yml", PLANS_YAML);
                yield Optional.of(new FilterHolder(QuotaFilter.builder().plans(plans).build()));
            }
            case JETTY_DOSFILTER -> {
                FilterHolder holder = new FilterHolder(new NamedSchedulerDoSFilter(threadPrefix + "dos-scheduler"));
                holder.setInitParameter("maxRequestsPerSec", Integer.toString(DOS_MAX_REQUESTS_PER_SEC));
                yield Optional.of(holder);
            }
        };
    }

    /** The mode with this label. */
    static Mode ofLabel(String label) {
        return Arrays.stream(values()).filter(m -> m.label.equals(label)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("unknown mode " + label));
    }

    /** DoSFilter with its timeout scheduler thread named like the server's, so its CPU is counted. */
    private static final class NamedSchedulerDoSFilter extends DoSFilter {
        private final String schedulerName;

        NamedSchedulerDoSFilter(String schedulerName) {
            this.schedulerName = schedulerName;
        }

        @Override
        protected Scheduler startScheduler() throws ServletException {
            try {
                Scheduler scheduler = new ScheduledExecutorScheduler(schedulerName, false);
                scheduler.start();
                return scheduler;
            } catch (Exception e) {
                throw new ServletException(e);
            }
        }
    }
}

package io.quotagate.filter.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.quotagate.filter.admission.Admission;

import java.util.Objects;

/**
 * Registers quotagate's meters (names in the README) with a Micrometer registry. Every meter reads
 * the filter's own state; the binder counts nothing itself.
 *
 * <ul>
 *   <li>{@value #REQUESTS} — function counter, tags {@code tenant} (bounded top-N, others
 *       {@code other}), {@code plan}, {@code route}, {@code outcome} ({@code allowed}|{@code rejected}),
 *       {@code reason};</li>
 *   <li>{@value #GLOBAL_CAPACITY} and {@value #GLOBAL_AVAILABLE} — gauges of the global quota's
 *       smallest capacity and current tokens, when a global quota is configured.</li>
 * </ul>
 */
public final class QuotaMeterBinder implements MeterBinder {
    /** Requests seen by the filter. */
    public static final String REQUESTS = "quotagate.requests";
    /** Capacity of the global quota (its smallest bandwidth). */
    public static final String GLOBAL_CAPACITY = "quotagate.global.capacity";
    /** Tokens available now in the global quota. */
    public static final String GLOBAL_AVAILABLE = "quotagate.global.available";

    private final RequestStatistics statistics;
    private final Admission admission;

    /**
     * @param statistics the filter's counters ({@code QuotaFilter.statistics()})
     * @param admission  the filter's admission core ({@code QuotaFilter.admission()})
     */
    public QuotaMeterBinder(RequestStatistics statistics, Admission admission) {
        this.statistics = Objects.requireNonNull(statistics, "statistics");
        this.admission = Objects.requireNonNull(admission, "admission");
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        statistics.onCell(cell -> FunctionCounter.builder(REQUESTS, cell, RequestStatistics.Cell::count)
                .description("Requests seen by the quota filter, by tenant (top-N, others as 'other'), plan, route, outcome and reason")
                .baseUnit("requests")
                .tag("tenant", cell.tenant())
                .tag("plan", cell.plan())
                .tag("route", cell.route())
                .tag("outcome", cell.outcome().tag())
                .tag("reason", cell.reason())
                .register(registry));
        if (admission.hasGlobalQuota()) {
            Gauge.builder(GLOBAL_CAPACITY, admission, a -> a.globalCapacity())
                    .description("Capacity of the global quota shared by all tenants (smallest bandwidth)")
                    .baseUnit("units")
                    .register(registry);
            Gauge.builder(GLOBAL_AVAILABLE, admission, a -> a.globalAvailableTokens())
                    .description("Units available now in the global quota")
                    .baseUnit("units")
                    .register(registry);
        }
    }
}

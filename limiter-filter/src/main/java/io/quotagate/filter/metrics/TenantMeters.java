package io.quotagate.filter.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quotagate.filter.status.ConcurrencyView;
import io.quotagate.filter.status.QuotaUsage;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.quotagate.filter.metrics.QuotaMeterBinder.INFLIGHT;
import static io.quotagate.filter.metrics.QuotaMeterBinder.INFLIGHT_DESCRIPTION;
import static io.quotagate.filter.metrics.QuotaMeterBinder.QUOTA_USAGE;
import static io.quotagate.filter.metrics.QuotaMeterBinder.QUOTA_USED;
import static io.quotagate.filter.metrics.QuotaMeterBinder.REQUESTS;

/**
 * The meters that come and go with the statistics' cells ({@link StatisticsView#onCell(java.util.function.Consumer,
 * java.util.function.Consumer)}): a {@value QuotaMeterBinder#REQUESTS} counter per cell, and per named tenant
 * its {@value QuotaMeterBinder#INFLIGHT} gauge in each concurrency group and its
 * {@value QuotaMeterBinder#QUOTA_USED} and {@value QuotaMeterBinder#QUOTA_USAGE} gauges per quota of the plan it is named under, registered with its
 * first cell and removed with its last. So the registry holds meters only for the tenants named now, however
 * often names change.
 *
 * <p>Called one at a time under the statistics' lock, so plain maps do.
 */
final class TenantMeters {
    private final MeterRegistry registry;
    private final QuotaSource source;
    private final ConcurrencyView concurrency;
    private final Set<String> groups;
    /** Per group, the tenant tags with their own in-flight gauge: the "other" gauge subtracts these. */
    private final Map<String, Set<String>> namedInflight;
    private final Map<StatisticsView.Cell, Meter> counters = new HashMap<>();
    private final Map<String, Integer> cellsOfTenant = new HashMap<>();
    private final Map<String, List<Meter>> gaugesOfTenant = new HashMap<>();

    TenantMeters(MeterRegistry registry, QuotaSource source, ConcurrencyView concurrency, Set<String> groups,
                 Map<String, Set<String>> namedInflight) {
        this.registry = registry;
        this.source = source;
        this.concurrency = concurrency;
        this.groups = groups;
        this.namedInflight = namedInflight;
    }

    /** A cell was created: its counter, and the tenant's gauges if it is the tenant's first cell. */
    void cellCreated(StatisticsView.Cell cell) {
        String tenant = cell.tenant();
        if (isTenantName(tenant) && cellsOfTenant.merge(tenant, 1, Integer::sum) == 1) {
            gaugesOfTenant.put(tenant, registerGauges(tenant, cell.plan()));
        }
        counters.put(cell, FunctionCounter.builder(REQUESTS, cell, StatisticsView.Cell::count)
                .description("Requests seen by the quota filter, by tenant (top-N by recent traffic, others as 'other'), "
                        + "plan, route, outcome and reason")
                .baseUnit("requests")
                .tag("tenant", tenant)
                .tag("plan", cell.plan())
                .tag("route", cell.route())
                .tag("outcome", cell.result().tag())
                .tag("reason", cell.reason())
                .register(registry));
    }

    /** A cell was removed: its counter goes, and the tenant's gauges with its last cell. */
    void cellRemoved(StatisticsView.Cell cell) {
        Meter counter = counters.remove(cell);
        if (counter != null) registry.remove(counter);
        String tenant = cell.tenant();
        if (isTenantName(tenant) && cellsOfTenant.merge(tenant, -1, Integer::sum) == 0) {
            cellsOfTenant.remove(tenant);
            // out of the named sets first, so that "other" counts the tenant before its own gauge goes
            for (String group : groups) namedInflight.get(group).remove(tenant);
            for (Meter gauge : gaugesOfTenant.remove(tenant)) registry.remove(gauge);
        }
    }

    private List<Meter> registerGauges(String tenant, String plan) {
        List<Meter> gauges = new ArrayList<>();
        for (String group : groups) {
            namedInflight.get(group).add(tenant);
            gauges.add(Gauge.builder(INFLIGHT, concurrency, c -> c.inflight(group, tenant))
                    .description(INFLIGHT_DESCRIPTION)
                    .tag("group", group).tag("tenant", tenant)
                    .register(registry));
        }
        // the quotas of the plan it is named under: read from the plans, never the store (under a lock)
        for (String quota : plan == null ? List.<String>of() : source.quotaNames(plan)) {
            gauges.add(Gauge.builder(QUOTA_USED, source, s -> quotaUsed(s, tenant, quota))
                    .description("Units a tenant used of a calendar quota in the current period "
                            + "(top-N tenants by recent traffic)")
                    .baseUnit("units")
                    .tag("tenant", tenant).tag("quota", quota)
                    .register(registry));
            gauges.add(Gauge.builder(QUOTA_USAGE, source, s -> quotaUsage(s, tenant, quota))
                    .description("Share of its calendar quota's limit a tenant used in the current period, "
                            + "1 when used up (top-N tenants by recent traffic)")
                    .baseUnit("ratio")
                    .tag("tenant", tenant).tag("quota", quota)
                    .register(registry));
        }
        return gauges;
    }

    /** Units used of a tenant's quota, NaN if it is no longer one of its quotas or cannot be read now. */
    private static double quotaUsed(QuotaSource source, String tenant, String quota) {
        QuotaUsage u = usage(source, tenant, quota);
        return u == null ? Double.NaN : u.used();
    }

    /** Units used over the limit of a tenant's own quota; NaN as {@link #quotaUsed}. */
    private static double quotaUsage(QuotaSource source, String tenant, String quota) {
        QuotaUsage u = usage(source, tenant, quota);
        return u == null ? Double.NaN : (double) u.used() / u.limit();
    }

    /** The tenant's use of the quota now; null if it is no longer one of its quotas or cannot be read now. */
    private static QuotaUsage usage(QuotaSource source, String tenant, String quota) {
        try {
            for (QuotaUsage u : source.tenantQuotas(tenant)) {
                if (u.name().equals(quota)) return u;
            }
        } catch (RuntimeException unreadable) {
            // a store that cannot be reached: no value rather than a failed scrape
        }
        return null;
    }

    /** A tag that names one tenant (not other/none/anonymous). */
    private static boolean isTenantName(String tag) {
        return !StatisticsView.isReserved(tag);
    }
}

package io.quotagate.tenant;

import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.CalendarQuota;

import java.time.ZoneId;
import java.util.List;
import java.util.Objects;

/**
 * What a tenant bought: its plan, and, for a tenant with a contract of its own, the limits that
 * replace the plan's (what {@code tenants.overrides} says in a plans file). A tenant directory
 * answers it ({@link TenantDirectory#contractOf}); the filter applies it as it applies the file.
 *
 * <p>A tenant's {@code zone} is where its plan's calendar quotas run (the tenant's day, week and month,
 * anchors included), instead of each quota's own zone. The tenant's own {@code quotas} keep the zones
 * they carry: a directory or file that reads them gives a quota that names no zone the tenant's
 * ({@link io.quotagate.plans.PlansFile#parseQuotas(String, String, ZoneId)}).
 *
 * @param plan   the plan's name: its concurrency caps, shadow and publish settings, and its limits
 *               unless {@code limits} replaces them
 * @param limits the tenant's own bandwidths, or empty for the plan's
 * @param quotas the tenant's own calendar quotas replacing its plan's, or null for the plan's (an empty
 *               list: none at all)
 * @param zone   the tenant's time zone, in which its plan's calendar quotas run; null for the quotas' own
 */
public record TenantContract(String plan, List<Bandwidth> limits, List<CalendarQuota> quotas, ZoneId zone) {
    public TenantContract {
        Objects.requireNonNull(plan, "plan");
        if (plan.isBlank()) throw new IllegalArgumentException("plan must not be blank");
        limits = List.copyOf(Objects.requireNonNull(limits, "limits"));
        quotas = quotas == null ? null : List.copyOf(quotas);
        zone = zone == null ? null : zone.normalized();
    }

    /** A tenant on {@code plan}, with its own bandwidths (empty: the plan's) and calendar quotas (null: the plan's). */
    public TenantContract(String plan, List<Bandwidth> limits, List<CalendarQuota> quotas) {
        this(plan, limits, quotas, null);
    }

    /** A tenant on {@code plan}, with its own bandwidths (empty: the plan's) and its plan's quotas. */
    public TenantContract(String plan, List<Bandwidth> limits) {
        this(plan, limits, null);
    }

    /** A tenant on {@code plan} with the plan's limits. */
    public static TenantContract onPlan(String plan) {
        return new TenantContract(plan, List.of());
    }

    /** This contract with the tenant in {@code zone} (null: none), its plan's quotas running in it. */
    public TenantContract withZone(ZoneId zone) {
        return new TenantContract(plan, limits, quotas, zone);
    }

    /**
     * The calendar quotas that count this tenant's requests: its own if it has some, else {@code planQuotas}
     * in its zone (as they are if it has none).
     */
    public List<CalendarQuota> quotasOver(List<CalendarQuota> planQuotas) {
        if (quotas != null) return quotas;
        if (zone == null) return planQuotas;
        return planQuotas.stream().map(q -> q.inZone(zone)).toList();
    }

    /** True if the tenant's calendar quotas are its own rather than its plan's. */
    public boolean hasOwnQuotas() {
        return quotas != null;
    }

    /** True if the tenant has limits of its own. */
    public boolean hasOwnLimits() {
        return !limits.isEmpty();
    }
}

package io.quotagate.tenant;

import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.CalendarQuota;

import java.util.List;
import java.util.Objects;

/**
 * What a tenant bought: its plan, and, for a tenant with a contract of its own, the limits that
 * replace the plan's (what {@code tenants.overrides} says in a plans file). A tenant directory
 * answers it ({@link TenantDirectory#contractOf}); the filter applies it as it applies the file.
 *
 * @param plan   the plan's name: its concurrency caps, shadow and publish settings, and its limits
 *               unless {@code limits} replaces them
 * @param limits the tenant's own bandwidths, or empty for the plan's
 * @param quotas the tenant's own calendar quotas replacing its plan's, or null for the plan's (an empty
 *               list: none at all)
 */
public record TenantContract(String plan, List<Bandwidth> limits, List<CalendarQuota> quotas) {
    public TenantContract {
        Objects.requireNonNull(plan, "plan");
        if (plan.isBlank()) throw new IllegalArgumentException("plan must not be blank");
        limits = List.copyOf(Objects.requireNonNull(limits, "limits"));
        quotas = quotas == null ? null : List.copyOf(quotas);
    }

    /** A tenant on {@code plan}, with its own bandwidths (empty: the plan's) and its plan's quotas. */
    public TenantContract(String plan, List<Bandwidth> limits) {
        this(plan, limits, null);
    }

    /** A tenant on {@code plan} with the plan's limits. */
    public static TenantContract onPlan(String plan) {
        return new TenantContract(plan, List.of());
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

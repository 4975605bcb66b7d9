package io.quotagate.filter.status;

import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.CalendarQuota;
import io.quotagate.tenant.TenantContract;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The runtime changes in force on top of the plans file: a replaced global quota, replaced plan
 * limits and calendar quotas, and tenants placed on a plan (with or without limits of their own). With a shared store
 * every instance holds the same ones (they live in the store's limits record).
 *
 * <p>A change of the plans file (a reload, or another instance publishing a different file) drops the
 * global and plan changes, since the file is the newer statement of those, and keeps the tenant
 * entries, which are data about customers rather than configuration.
 *
 * @param global  the global quota's bandwidths set at runtime (an empty list: removed), or empty for the file's
 * @param plans   plan → bandwidths set at runtime
 * @param tenants tenant → its contract set at runtime (replacing what the file or directory says)
 * @param quotas  plan → calendar quotas set at runtime (an empty list: the plan's removed)
 */
public record LimitOverrides(Optional<List<Bandwidth>> global, Map<String, List<Bandwidth>> plans,
                             Map<String, TenantContract> tenants, Map<String, List<CalendarQuota>> quotas) {
    /** No runtime change. */
    public static final LimitOverrides NONE = new LimitOverrides(Optional.empty(), Map.of(), Map.of(), Map.of());

    /** Changes without calendar quotas. */
    public LimitOverrides(Optional<List<Bandwidth>> global, Map<String, List<Bandwidth>> plans,
                          Map<String, TenantContract> tenants) {
        this(global, plans, tenants, Map.of());
    }

    public LimitOverrides {
        Map<String, List<CalendarQuota>> q = new TreeMap<>();
        Objects.requireNonNull(quotas, "quotas").forEach((name, list) -> q.put(name, List.copyOf(list)));
        quotas = java.util.Collections.unmodifiableMap(q);
        global = Objects.requireNonNull(global, "global").map(List::copyOf);
        Map<String, List<Bandwidth>> p = new TreeMap<>();
        Objects.requireNonNull(plans, "plans").forEach((name, limits) -> p.put(name, List.copyOf(limits)));
        plans = java.util.Collections.unmodifiableMap(p);
        tenants = java.util.Collections.unmodifiableMap(new TreeMap<>(Objects.requireNonNull(tenants, "tenants")));
    }

    /** True if nothing was changed at runtime. */
    public boolean isEmpty() {
        return global.isEmpty() && plans.isEmpty() && tenants.isEmpty() && quotas.isEmpty();
    }

    /** These with the global quota set (an empty list removes it). */
    public LimitOverrides withGlobal(List<Bandwidth> limits) {
        return new LimitOverrides(Optional.of(limits), plans, tenants, quotas);
    }

    /** These with one plan's limits set. */
    public LimitOverrides withPlan(String plan, List<Bandwidth> limits) {
        Map<String, List<Bandwidth>> p = new TreeMap<>(plans);
        p.put(plan, limits);
        return new LimitOverrides(global, p, tenants, quotas);
    }

    /** These with one plan's calendar quotas set (an empty list removes the plan's). */
    public LimitOverrides withPlanQuotas(String plan, List<CalendarQuota> planQuotas) {
        Map<String, List<CalendarQuota>> q = new TreeMap<>(quotas);
        q.put(plan, planQuotas);
        return new LimitOverrides(global, plans, tenants, q);
    }

    /** These with one tenant's contract set. */
    public LimitOverrides withTenant(String tenant, TenantContract contract) {
        Map<String, TenantContract> t = new TreeMap<>(tenants);
        t.put(tenant, Objects.requireNonNull(contract, "contract"));
        return new LimitOverrides(global, plans, t, quotas);
    }

    /** These without a runtime entry for the tenant (the file's or the directory's contract applies again). */
    public LimitOverrides withoutTenant(String tenant) {
        if (!tenants.containsKey(tenant)) return this;
        Map<String, TenantContract> t = new TreeMap<>(tenants);
        t.remove(tenant);
        return new LimitOverrides(global, plans, t, quotas);
    }

    /** What survives a change of the plans file: the tenant entries (the file restates plans and quotas). */
    public LimitOverrides forNewFile() {
        return new LimitOverrides(Optional.empty(), Map.of(), tenants);
    }
}

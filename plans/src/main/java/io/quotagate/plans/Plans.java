package io.quotagate.plans;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A loaded, validated plans file: the global quota, the plans, the routes and the tenant settings.
 * Immutable; build one with {@link PlansFile}.
 *
 * @param source   where it was loaded from (file name, for messages)
 * @param global   the quota shared by all tenants, if any
 * @param plans    plans by name
 * @param routes   route rules in match order
 * @param tenants  tenant resolution and assignment settings
 * @param groups   settings of the concurrency groups shared by all tenants ({@code groups:}), by name
 * @param shadow   true to put every plan (and the global quota) in shadow mode: nothing is refused,
 *                 requests that would be are counted and logged
 * @param store    where the buckets live (local by default, or Redis)
 */
public record Plans(String source, Optional<GlobalQuota> global, Map<String, Plan> plans,
                    List<RouteRule> routes, TenantSettings tenants, Map<String, GroupSettings> groups,
                    boolean shadow, StoreSettings store) {

    /** Plans without {@code groups:} settings (every group fails fast on the plans' caps), enforcing, local store. */
    public Plans(String source, Optional<GlobalQuota> global, Map<String, Plan> plans,
                 List<RouteRule> routes, TenantSettings tenants) {
        this(source, global, plans, routes, tenants, Map.of(), false, StoreSettings.local());
    }

    /** Plans that enforce their limits (no top-level shadow mode), local store. */
    public Plans(String source, Optional<GlobalQuota> global, Map<String, Plan> plans,
                 List<RouteRule> routes, TenantSettings tenants, Map<String, GroupSettings> groups) {
        this(source, global, plans, routes, tenants, groups, false, StoreSettings.local());
    }

    /** Plans with a local store. */
    public Plans(String source, Optional<GlobalQuota> global, Map<String, Plan> plans,
                 List<RouteRule> routes, TenantSettings tenants, Map<String, GroupSettings> groups, boolean shadow) {
        this(source, global, plans, routes, tenants, groups, shadow, StoreSettings.local());
    }

    public Plans {
        Objects.requireNonNull(store, "store");
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(global, "global");
        plans = Map.copyOf(plans);
        routes = List.copyOf(routes);
        Objects.requireNonNull(tenants, "tenants");
        groups = Map.copyOf(groups);
        if (!plans.containsKey(tenants.defaultPlan())) {
            throw new IllegalArgumentException("default plan " + tenants.defaultPlan() + " is not defined");
        }
    }

    /** A copy using another store (e.g. a Redis URI given on the command line). */
    public Plans withStore(StoreSettings store) {
        return new Plans(source, global, plans, routes, tenants, groups, shadow, store);
    }

    /** The plan of this name. */
    public Optional<Plan> plan(String name) {
        return Optional.ofNullable(plans.get(name));
    }

    /**
     * These plans with another global quota (empty: none), as set at runtime.
     *
     * @throws IllegalArgumentException if a route's cost exceeds one of the new capacities (such a
     *                                  request could never be admitted)
     */
    public Plans withGlobal(Optional<GlobalQuota> newGlobal) {
        Objects.requireNonNull(newGlobal, "global");
        newGlobal.ifPresent(g -> checkRouteCostsFit("global", g.limits()));
        return new Plans(source, newGlobal, plans, routes, tenants, groups, shadow, store);
    }

    /**
     * These plans with new limits for one plan (its other settings kept), as set at runtime.
     *
     * @throws IllegalArgumentException if the plan is unknown or a route's cost exceeds one of the
     *                                  new capacities
     */
    public Plans withPlanLimits(String planName, List<Bandwidth> limits) {
        Plan old = plans.get(planName);
        if (old == null) throw new IllegalArgumentException("unknown plan '" + planName + "', defined: " + plans.keySet());
        Plan changed = new Plan(planName, limits, old.concurrency(), old.publish(), old.shadow());
        checkRouteCostsFit("plans." + planName, changed.limits());
        Map<String, Plan> copy = new java.util.LinkedHashMap<>(plans);
        copy.put(planName, changed);
        return new Plans(source, global, copy, routes, tenants, groups, shadow, store);
    }

    private void checkRouteCostsFit(String owner, List<Bandwidth> limits) {
        for (RouteRule route : routes) {
            if (!route.limited()) continue;
            int i = firstLimitBelow(route.cost(), limits);
            if (i >= 0) {
                Bandwidth b = limits.get(i);
                throw new IllegalArgumentException("capacity " + b.capacity() + " of " + owner + " limit '" + b.name()
                        + "' is below the cost " + route.cost() + " of route '" + route.name()
                        + "': such requests could never be admitted");
            }
        }
    }

    /**
     * The index of the first of {@code limits} whose capacity is below {@code cost} (a request of that
     * cost could never be admitted), or -1 if the cost fits every bucket. The one rule behind every
     * "cost must fit the capacity" check, each caller keeping its own message.
     */
    static int firstLimitBelow(long cost, List<Bandwidth> limits) {
        for (int i = 0; i < limits.size(); i++) {
            if (cost > limits.get(i).capacity()) return i;
        }
        return -1;
    }

    /** The settings of a concurrency group; a group without {@code groups:} settings fails fast. */
    public GroupSettings group(String name) {
        GroupSettings g = groups.get(name);
        return g != null ? g : GroupSettings.failFast(name);
    }
}

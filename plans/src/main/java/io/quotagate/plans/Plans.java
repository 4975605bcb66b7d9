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
 * @param shadow   true to put every plan (and the global quota) in shadow mode: nothing is refused,
 *                 requests that would be are counted and logged
 */
public record Plans(String source, Optional<GlobalQuota> global, Map<String, Plan> plans,
                    List<RouteRule> routes, TenantSettings tenants, boolean shadow) {
    /** Plans that enforce their limits (no global shadow mode). */
    public Plans(String source, Optional<GlobalQuota> global, Map<String, Plan> plans,
                 List<RouteRule> routes, TenantSettings tenants) {
        this(source, global, plans, routes, tenants, false);
    }

    public Plans {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(global, "global");
        plans = Map.copyOf(plans);
        routes = List.copyOf(routes);
        Objects.requireNonNull(tenants, "tenants");
        if (!plans.containsKey(tenants.defaultPlan())) {
            throw new IllegalArgumentException("default plan " + tenants.defaultPlan() + " is not defined");
        }
    }

    /** The plan of this name. */
    public Optional<Plan> plan(String name) {
        return Optional.ofNullable(plans.get(name));
    }
}

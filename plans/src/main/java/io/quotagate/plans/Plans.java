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
 */
public record Plans(String source, Optional<GlobalQuota> global, Map<String, Plan> plans,
                    List<RouteRule> routes, TenantSettings tenants, Map<String, GroupSettings> groups) {

    /** Plans without {@code groups:} settings (every group fails fast on the plans' caps). */
    public Plans(String source, Optional<GlobalQuota> global, Map<String, Plan> plans,
                 List<RouteRule> routes, TenantSettings tenants) {
        this(source, global, plans, routes, tenants, Map.of());
    }

    public Plans {
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

    /** The plan of this name. */
    public Optional<Plan> plan(String name) {
        return Optional.ofNullable(plans.get(name));
    }

    /** The settings of a concurrency group; a group without {@code groups:} settings fails fast. */
    public GroupSettings group(String name) {
        GroupSettings g = groups.get(name);
        return g != null ? g : GroupSettings.failFast(name);
    }
}

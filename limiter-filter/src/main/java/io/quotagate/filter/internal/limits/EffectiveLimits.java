package io.quotagate.filter.internal.limits;

import io.quotagate.filter.status.LimitOverrides;
import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.CalendarQuota;
import io.quotagate.plans.GlobalQuota;
import io.quotagate.plans.Plans;
import io.quotagate.plans.RouteRule;
import io.quotagate.tenant.TenantContract;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The limits in force: an instance's own plans file, its limits part replaced by the {@link LimitsBase}
 * every instance agreed on (the file published last), then the runtime changes on top. The one place
 * where the three meet, so every surface (enforcement, metrics, Actuator, published fields) reads the
 * same result.
 *
 * <p>Routes are each instance's own (paths, methods, cost, group); only their own limits
 * ({@code routes[].limits}) come from the base, matched by route name: a limited route of this file
 * gets the base's limits of the route of its name, or none if the base has none for it; a route the
 * base names that this file does not have (or does not limit) is ignored ({@link #ignoredRoutes}).
 */
final class EffectiveLimits {
    private EffectiveLimits() {
    }

    /**
     * The plans in force.
     *
     * @param file      this instance's plans file (routes, resolvers, caps, flags)
     * @param base      the limits part every instance enforces (this file's own when it was published last)
     * @param overrides the runtime changes
     * @throws IllegalArgumentException naming what cannot be applied: a plan or tenant's plan this file does
     *                                  not define, limits below a route's cost, an invalid tenant id,
     *                                  limits per user where this file names no {@code tenants.users}
     */
    static Plans of(Plans file, LimitsBase base, LimitOverrides overrides) {
        Plans p = file;
        LimitsBase fileBase = LimitsBase.of(file);
        if (!base.equals(fileBase)) {
            for (Map.Entry<String, List<Bandwidth>> e : base.plans().entrySet()) {
                if (p.plan(e.getKey()).isEmpty()) {
                    throw new IllegalArgumentException("plan '" + e.getKey() + "' is not defined in " + file.source()
                            + " (defined: " + file.plans().keySet() + ")");
                }
                p = p.withPlanLimits(e.getKey(), e.getValue())
                        .withPlanQuotas(e.getKey(), base.quotas().getOrDefault(e.getKey(), List.of()))
                        .withPlanPerUser(e.getKey(), base.perUser().getOrDefault(e.getKey(), List.of()));
            }
            for (RouteRule route : file.routes()) {
                if (route.limited()) p = p.withRouteLimits(route.name(), base.routes().getOrDefault(route.name(), List.of()));
            }
            p = p.withGlobal(global(base.global()));
            if (!base.guests().equals(p.tenants().guests().limits())) p = p.withGuestLimits(base.guests());
        }
        for (Map.Entry<String, List<Bandwidth>> e : overrides.plans().entrySet()) {
            p = p.withPlanLimits(e.getKey(), e.getValue());
        }
        for (Map.Entry<String, List<CalendarQuota>> e : overrides.quotas().entrySet()) {
            p = p.withPlanQuotas(e.getKey(), e.getValue());
        }
        if (overrides.global().isPresent()) p = p.withGlobal(global(overrides.global().get()));
        Map<String, TenantContract> tenants = new TreeMap<>(base.tenants());
        tenants.putAll(overrides.tenants());
        if (!tenants.equals(fileBase.tenants())) {
            Map<String, String> assignments = new HashMap<>();
            Map<String, List<Bandwidth>> own = new HashMap<>();
            Map<String, List<CalendarQuota>> ownQuotas = new HashMap<>();
            Plans pz = p;
            tenants.forEach((tenant, c) -> {
                assignments.put(tenant, c.plan());
                if (c.hasOwnLimits()) own.put(tenant, c.limits());
                if (c.hasOwnQuotas()) {
                    ownQuotas.put(tenant, c.quotas());
                } else if (c.zone() != null) {
                    // the tenant's zone: its plan's quotas (as in force) counted in it, as its own
                    pz.plan(c.plan()).ifPresent(plan -> ownQuotas.put(tenant, c.quotasOver(plan.quotas())));
                }
            });
            p = p.withTenants(assignments, own, ownQuotas);
        }
        return p;
    }

    /**
     * The routes {@code base} gives limits to that this file does not have, or does not limit: their
     * limits apply on no request of this instance.
     */
    static Set<String> ignoredRoutes(Plans file, LimitsBase base) {
        Set<String> ignored = new TreeSet<>(base.routes().keySet());
        for (RouteRule route : file.routes()) {
            if (route.limited()) ignored.remove(route.name());
        }
        return ignored;
    }

    private static Optional<GlobalQuota> global(List<Bandwidth> limits) {
        return limits.isEmpty() ? Optional.empty() : Optional.of(new GlobalQuota(limits));
    }
}

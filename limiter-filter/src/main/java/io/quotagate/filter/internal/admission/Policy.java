package io.quotagate.filter.internal.admission;

import io.quotagate.filter.internal.route.Route;
import io.quotagate.filter.internal.route.RouteTable;
import io.quotagate.plans.Plans;
import io.quotagate.plans.RouteRule;
import io.quotagate.plans.Throttle;
import io.quotagate.tenant.TenantDirectory;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The policy in force: everything one decision reads — the plans, the route table, where each tenant
 * is placed, the bucket limits of every plan and the concurrency caps — built together and swapped as
 * one reference. A request reads the policy once and is decided, and later settled, by that one
 * object, so a reload that races with it can never show it the routes of one file and the limits of
 * another, nor leave it on a plan the new file dropped.
 *
 * <p>Immutable, and a description only: it holds no engine (the {@link Gate} decides, reprices and settles
 * under it). Built only by {@link Admission#policy} (through {@link Gate#policy}), which keeps the shared
 * buckets' tokens across a change.
 */
public final class Policy {
    private final Plans plans;
    private final RouteTable routes;
    private final TenantPlans placement;
    final Limits limits;
    final ConcurrencyCaps caps;
    /**
     * False if no request can have buckets beside its tenant's: no route has limits of its own and no
     * plan limits per user (own limits of tenants keep their plan's per-user limits). The gate then
     * skips looking for them, and the common request allocates nothing to ask.
     */
    final boolean scopedBuckets;
    /** Each route's own {@code throttle:}, by route name; empty if none has one. */
    private final Map<String, Throttle> routeThrottles;
    /** Each plan's {@code throttle:}, by plan name; empty if none has one. */
    private final Map<String, Throttle> planThrottles;
    private final LimitsReadout readout;

    Policy(Plans plans, TenantDirectory directory, Limits limits, LimitsReadout readout) {
        this.plans = Objects.requireNonNull(plans, "plans");
        this.routes = new RouteTable(plans.routes());
        this.limits = Objects.requireNonNull(limits, "limits");
        this.readout = Objects.requireNonNull(readout, "readout");
        this.placement = new TenantPlans(plans, directory, limits.contracts());
        this.caps = ConcurrencyCaps.of(plans);
        Map<String, Throttle> byRoute = new HashMap<>();
        for (RouteRule r : plans.routes()) r.throttle().ifPresent(t -> byRoute.put(r.name(), t));
        this.routeThrottles = Map.copyOf(byRoute);
        Map<String, Throttle> byPlan = new HashMap<>();
        plans.plans().forEach((name, p) -> p.throttle().ifPresent(t -> byPlan.put(name, t)));
        this.planThrottles = Map.copyOf(byPlan);
        this.scopedBuckets = !limits.routes().isEmpty()
                || limits.plans().values().stream().anyMatch(p -> p.perUser() != null)
                || limits.overrides().values().stream().anyMatch(p -> p.perUser() != null);
    }

    /** The plans this policy was built from. */
    public Plans plans() {
        return plans;
    }

    /**
     * The route of a request.
     *
     * @param method the HTTP method, upper case
     * @param path   the normalised path inside the application ({@link io.quotagate.filter.internal.route.RequestPath})
     */
    public Route route(String method, String path) {
        return routes.match(method, path);
    }

    /**
     * The throttle of a request of {@code route} by a tenant on {@code plan}: the route's own, else the
     * plan's; null if neither has one (then a request short of units is refused at once).
     */
    Throttle throttle(String route, String plan) {
        if (routeThrottles.isEmpty() && planThrottles.isEmpty()) return null; // the common policy: no lookup
        Throttle t = routeThrottles.get(route);
        return t != null || plan == null ? t : planThrottles.get(plan);
    }

    TenantPlans placement() {
        return placement;
    }

    /** This policy's limits as callers and responses see them: costs, published states, quotas' use. */
    LimitsReadout readout() {
        return readout;
    }
}

package io.quotagate.filter.admission;

import io.quotagate.filter.route.Route;
import io.quotagate.filter.route.RouteTable;
import io.quotagate.plans.Plan;
import io.quotagate.plans.Plans;
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
 * <p>Immutable. Built by {@link Gate#policy}, which keeps the shared buckets' tokens across a change.
 */
public final class Policy {
    private final Plans plans;
    private final RouteTable routes;
    private final TenantPlans placement;
    final Admission.Limits limits;
    /** plan → group → cap; a missing entry means the plan does not cap the group. */
    private final Map<String, Map<String, Integer>> caps;
    private final Map<String, Integer> guestCaps;

    Policy(Plans plans, TenantDirectory directory, Admission.Limits limits) {
        this.plans = Objects.requireNonNull(plans, "plans");
        this.routes = new RouteTable(plans.routes());
        this.placement = new TenantPlans(plans, directory, limits == null ? null : limits.contracts());
        this.limits = limits;
        Map<String, Map<String, Integer>> c = new HashMap<>();
        for (Plan p : plans.plans().values()) c.put(p.name(), Map.copyOf(p.concurrency()));
        this.caps = Map.copyOf(c);
        this.guestCaps = Map.copyOf(plans.tenants().guests().concurrency());
    }

    /** The plans this policy was built from. */
    public Plans plans() {
        return plans;
    }

    /**
     * The route of a request.
     *
     * @param method the HTTP method, upper case
     * @param path   the normalised path inside the application ({@link io.quotagate.filter.route.RequestPath})
     */
    public Route route(String method, String path) {
        return routes.match(method, path);
    }

    TenantPlans placement() {
        return placement;
    }

    /** The cap of {@code plan} on {@code group}, or null if the plan does not cap it. */
    Integer cap(String plan, String group) {
        Map<String, Integer> planCaps = caps.get(plan);
        return planCaps == null ? null : planCaps.get(group);
    }

    /** The cap all guests together have on {@code group}, or null for none. */
    Integer guestCap(String group) {
        return guestCaps.get(group);
    }
}

package io.quotagate.filter.internal.limits;

import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.CalendarQuota;
import io.quotagate.plans.GlobalQuota;
import io.quotagate.plans.Plan;
import io.quotagate.plans.Plans;
import io.quotagate.plans.RouteRule;
import io.quotagate.plans.ScopedLimit;
import io.quotagate.tenant.TenantContract;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The limits part of a plans file: what every instance sharing a store must agree on so that no
 * shared bucket is reconfigured back and forth (the global quota, the guest pool's bucket, each plan's
 * bandwidths, calendar quotas and per-user limits, the routes' own limits by route name, and the
 * tenants' plans and own limits). Routes themselves (paths, methods, cost, group), resolvers,
 * concurrency caps and the publish and shadow flags stay each instance's own.
 *
 * @param global  the global quota's bandwidths; empty for none
 * @param guests  the guest pool's bandwidths; empty for none
 * @param plans   plan → bandwidths
 * @param tenants tenant → contract ({@code tenants.assignments} and {@code tenants.overrides})
 * @param quotas  plan → its calendar quotas, only plans that have some
 * @param perUser plan → the bandwidths of each user's bucket ({@code per-user}), only plans that have some
 * @param routes  route name → its own limits ({@code routes[].limits}), only routes that have some
 */
record LimitsBase(List<Bandwidth> global, List<Bandwidth> guests, Map<String, List<Bandwidth>> plans,
                  Map<String, TenantContract> tenants, Map<String, List<CalendarQuota>> quotas,
                  Map<String, List<Bandwidth>> perUser, Map<String, List<ScopedLimit>> routes) {

    /** A base without per-user or route limits (formats 1 and 2). */
    LimitsBase(List<Bandwidth> global, List<Bandwidth> guests, Map<String, List<Bandwidth>> plans,
               Map<String, TenantContract> tenants, Map<String, List<CalendarQuota>> quotas) {
        this(global, guests, plans, tenants, quotas, Map.of(), Map.of());
    }

    LimitsBase {
        Map<String, List<Bandwidth>> u = new TreeMap<>();
        perUser.forEach((name, list) -> {
            if (!list.isEmpty()) u.put(name, List.copyOf(list));
        });
        perUser = Collections.unmodifiableMap(u);
        Map<String, List<ScopedLimit>> r = new TreeMap<>();
        routes.forEach((name, list) -> {
            if (!list.isEmpty()) r.put(name, List.copyOf(list));
        });
        routes = Collections.unmodifiableMap(r);
        Map<String, List<CalendarQuota>> q = new TreeMap<>();
        quotas.forEach((name, list) -> {
            if (!list.isEmpty()) q.put(name, List.copyOf(list));
        });
        quotas = Collections.unmodifiableMap(q);
        global = List.copyOf(global);
        guests = List.copyOf(guests);
        Map<String, List<Bandwidth>> p = new TreeMap<>();
        plans.forEach((name, limits) -> p.put(name, List.copyOf(limits)));
        plans = Collections.unmodifiableMap(p);
        tenants = Collections.unmodifiableMap(new TreeMap<>(tenants));
    }

    /** The limits part of these plans. */
    static LimitsBase of(Plans file) {
        Map<String, List<Bandwidth>> plans = new TreeMap<>();
        Map<String, List<CalendarQuota>> quotas = new TreeMap<>();
        Map<String, List<Bandwidth>> perUser = new TreeMap<>();
        for (Plan p : file.plans().values()) {
            plans.put(p.name(), p.limits());
            quotas.put(p.name(), p.quotas());
            perUser.put(p.name(), p.perUser());
        }
        Map<String, List<ScopedLimit>> routes = new TreeMap<>();
        for (RouteRule r : file.routes()) routes.put(r.name(), r.limits());
        Map<String, TenantContract> tenants = new TreeMap<>();
        Map<String, List<Bandwidth>> own = file.tenants().overrides();
        Map<String, List<CalendarQuota>> ownQuotas = file.tenants().overrideQuotas();
        file.tenants().assignments().forEach((tenant, plan) ->
                tenants.put(tenant, new TenantContract(plan, own.getOrDefault(tenant, List.of()), ownQuotas.get(tenant))));
        return new LimitsBase(file.global().map(GlobalQuota::limits).orElse(List.of()),
                file.tenants().guests().limits(), plans, tenants, quotas, perUser, routes);
    }
}

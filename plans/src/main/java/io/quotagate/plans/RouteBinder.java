package io.quotagate.plans;

import io.quotagate.plans.YamlNode.Mapping;
import io.quotagate.plans.YamlNode.Sequence;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

import static io.quotagate.plans.FieldCursor.NAME;

/** {@code routes:}: which requests, at which cost, in which concurrency group. */
final class RouteBinder {
    private static final Pattern METHOD = Pattern.compile("[A-Z]{1,16}");
    private static final Set<String> KEYS = Set.of("name", "methods", "paths", "cost", "group", "limited", "limits",
            "throttle");

    /** A route limit's keys: a limit's, and whose bucket it is. */
    private static final Set<String> ROUTE_LIMIT_KEYS;

    static {
        Set<String> keys = new HashSet<>(PlanBinder.LIMIT_KEYS);
        keys.add("per");
        ROUTE_LIMIT_KEYS = Set.copyOf(keys);
    }

    private final FieldCursor in;
    private final PlanBinder bandwidths;
    /** The line of the first route limit {@code per: user}, for the error of a file that names no user resolver. */
    int userScopeLine = -1;
    String userScopeField;

    RouteBinder(FieldCursor in, PlanBinder bandwidths) {
        this.in = in;
        this.bandwidths = bandwidths;
    }

    /** The routes in file order; none if {@code node} is null. A cost must fit every plan and the global quota. */
    List<RouteRule> routes(YamlNode node, Map<String, Plan> plans, Optional<GlobalQuota> global) {
        if (node == null) return List.of();
        Sequence seq = in.sequence(node, "routes");
        List<RouteRule> out = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (int i = 0; i < seq.items().size(); i++) {
            String f = "routes[" + i + "]";
            Mapping m = in.mapping(seq.items().get(i), f, KEYS);
            YamlNode nameNode = in.required(m, "name", f);
            String name = in.matching(nameNode, f + ".name", NAME);
            if (!names.add(name)) throw in.error(nameNode.line(), f + ".name", "duplicate route name '" + name + "'");
            RouteRule.Builder route = RouteRule.builder(name)
                    .methods(methods(m.entries().get("methods"), f + ".methods"))
                    .paths(paths(in.required(m, "paths", f), f + ".paths"));

            boolean limited = in.bool(m, "limited", f + ".limited", true);
            YamlNode costNode = m.entries().get("cost");
            YamlNode groupNode = m.entries().get("group");
            YamlNode limitsNode = m.entries().get("limits");
            YamlNode throttleNode = m.entries().get("throttle");
            if (!limited && (costNode != null || groupNode != null || limitsNode != null || throttleNode != null)) {
                YamlNode offending = costNode != null ? costNode : groupNode != null ? groupNode
                        : limitsNode != null ? limitsNode : throttleNode;
                throw in.error(offending.line(), f + (costNode != null ? ".cost" : groupNode != null ? ".group"
                                : limitsNode != null ? ".limits" : ".throttle"),
                        "a route with limited: false takes no cost, group, limits or throttle");
            }
            route.throttle(bandwidths.throttle(throttleNode, f + ".throttle"));
            if (costNode != null) {
                long cost = in.positive(costNode, f + ".cost", Long.MAX_VALUE);
                checkCostFits(cost, costNode.line(), f + ".cost", plans, global);
                route.cost(cost);
            }
            if (groupNode != null) route.group(in.matching(groupNode, f + ".group", NAME));
            if (limitsNode != null) {
                route.limits(scopedLimits(limitsNode, f + ".limits", costNode == null ? 1 : in.positive(costNode,
                        f + ".cost", Long.MAX_VALUE)));
            }
            out.add(route.limited(limited).build());
        }
        return out;
    }

    private Set<String> methods(YamlNode node, String field) {
        Set<String> methods = new LinkedHashSet<>();
        if (node == null) return methods;
        Sequence ms = in.sequence(node, field);
        for (int j = 0; j < ms.items().size(); j++) {
            String method = in.string(ms.items().get(j), field + "[" + j + "]");
            if (!METHOD.matcher(method).matches()) {
                throw in.error(ms.items().get(j).line(), field + "[" + j + "]",
                        "not an HTTP method: '" + method + "' (upper-case letters, e.g. GET)");
            }
            methods.add(method);
        }
        return methods;
    }

    private List<PathPattern> paths(YamlNode node, String field) {
        Sequence ps = in.sequence(node, field);
        if (ps.items().isEmpty()) throw in.error(ps.line(), field, "at least one path is required");
        List<PathPattern> paths = new ArrayList<>();
        for (int j = 0; j < ps.items().size(); j++) {
            YamlNode p = ps.items().get(j);
            try {
                paths.add(PathPattern.parse(in.string(p, field + "[" + j + "]")));
            } catch (IllegalArgumentException e) {
                throw in.error(p.line(), field + "[" + j + "]", e.getMessage());
            }
        }
        return paths;
    }

    /**
     * A route's {@code limits:} list ({@code - { per: tenant, capacity: 10, refill: 10, period: 1h }}):
     * the bandwidths of each {@code per} (default {@code tenant}) make one bucket; each capacity must
     * hold the route's cost.
     */
    private List<ScopedLimit> scopedLimits(YamlNode node, String field, long cost) {
        Sequence seq = in.sequence(node, field);
        if (seq.items().isEmpty()) throw in.error(seq.line(), field, "at least one limit is required");
        Map<ScopedLimit.Scope, List<Bandwidth>> byScope = new java.util.LinkedHashMap<>();
        Set<String> names = new HashSet<>();
        for (int i = 0; i < seq.items().size(); i++) {
            String f = field + "[" + i + "]";
            Mapping m = in.mapping(seq.items().get(i), f, ROUTE_LIMIT_KEYS);
            ScopedLimit.Scope per = in.choice(m, "per", f + ".per", ScopedLimit.Scope.TENANT, ScopedLimit.Scope.class);
            Bandwidth b = bandwidths.bandwidth(m, f, "b" + i, names);
            if (cost > b.capacity()) {
                throw in.error(m.entries().get("capacity").line(), f + ".capacity", "capacity " + b.capacity()
                        + " is below the route's cost " + cost + ": such a request could never be admitted");
            }
            if (per == ScopedLimit.Scope.USER && userScopeLine < 0) {
                userScopeLine = m.entries().containsKey("per") ? m.entries().get("per").line() : m.line();
                userScopeField = f + ".per";
            }
            byScope.computeIfAbsent(per, p -> new ArrayList<>()).add(b);
        }
        List<ScopedLimit> out = new ArrayList<>();
        byScope.forEach((per, limits) -> out.add(new ScopedLimit(per, limits)));
        return out;
    }

    /** A cost above a bucket's capacity could never be admitted: refuse it at startup. */
    private void checkCostFits(long cost, int line, String field, Map<String, Plan> plans,
                               Optional<GlobalQuota> global) {
        for (Plan plan : plans.values()) {
            int i = Plans.firstLimitBelow(cost, plan.limits());
            if (i >= 0) {
                long capacity = plan.limits().get(i).capacity();
                throw in.error(line, field, "cost " + cost + " exceeds the capacity " + capacity + " of plans."
                        + plan.name() + ".limits[" + i + "]: such a request could never be admitted");
            }
            int u = Plans.firstLimitBelow(cost, plan.perUser());
            if (u >= 0) {
                throw in.error(line, field, "cost " + cost + " exceeds the capacity " + plan.perUser().get(u).capacity()
                        + " of plans." + plan.name() + ".per-user.limits[" + u + "]: such a request could never be admitted");
            }
            int q = Plans.firstQuotaBelow(cost, plan.quotas());
            if (q >= 0) {
                throw in.error(line, field, "cost " + cost + " exceeds the limit " + plan.quotas().get(q).limit()
                        + " of plans." + plan.name() + ".quotas[" + q + "]: such a request could never be admitted");
            }
        }
        if (global.isPresent()) {
            List<Bandwidth> limits = global.get().limits();
            int i = Plans.firstLimitBelow(cost, limits);
            if (i >= 0) {
                throw in.error(line, field, "cost " + cost + " exceeds the capacity " + limits.get(i).capacity()
                        + " of global.limits[" + i + "]: such a request could never be admitted");
            }
        }
    }

    /** The groups the routes put requests in: the only groups a cap, a queue or a guest cap may name. */
    static Set<String> usedGroups(List<RouteRule> routes) {
        Set<String> used = new java.util.TreeSet<>();
        for (RouteRule r : routes) r.group().ifPresent(used::add);
        return used;
    }

    /** Refuses a setting for {@code group} if no route has that group: a typo that would silently cap nothing. */
    static void requireUsedGroup(FieldCursor in, Set<String> used, String group, int line, String field) {
        if (!used.contains(group)) {
            throw in.error(line, field, "no route has group '" + group + "'"
                    + (used.isEmpty() ? "" : ", groups in use: " + used));
        }
    }
}

package io.quotagate.filter.route;

import io.quotagate.plans.RouteRule;

import java.util.List;

/**
 * Decides which route a request belongs to: the first rule, in file order, whose method and path
 * match; {@link Route#DEFAULT} when none does. Built once; matching allocates nothing.
 */
public final class RouteTable {
    private final RouteRule[] rules;
    private final Route[] routes;

    /** A table of these rules, tried in order. */
    public RouteTable(List<RouteRule> rules) {
        this.rules = rules.toArray(RouteRule[]::new);
        this.routes = rules.stream().map(Route::of).toArray(Route[]::new);
    }

    /**
     * The route of a request.
     *
     * @param method HTTP method, upper case
     * @param path   the decoded path inside the application (no context path, no query)
     */
    public Route match(String method, String path) {
        for (int i = 0; i < rules.length; i++) {
            if (rules[i].matches(method, path)) return routes[i];
        }
        return Route.DEFAULT;
    }
}

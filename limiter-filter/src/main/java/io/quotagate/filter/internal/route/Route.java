package io.quotagate.filter.internal.route;

import io.quotagate.plans.RouteRule;

import java.util.Objects;
import java.util.Optional;

/**
 * What a matched request is: its route name, cost in units, concurrency group, and whether it is
 * limited at all.
 *
 * @param name    the route's name (metrics, logs)
 * @param cost    units per request
 * @param group   concurrency group, if capped
 * @param limited false for routes never limited
 */
public record Route(String name, long cost, Optional<String> group, boolean limited) {
    /** The route of a request no rule matches: limited, cost 1. */
    public static final Route DEFAULT = new Route("default", 1, Optional.empty(), true);

    public Route {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(group, "group");
    }

    static Route of(RouteRule rule) {
        return new Route(rule.name(), rule.cost(), rule.group(), rule.limited());
    }
}

package io.quotagate.plans;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A named set of limits a tenant is sized by (free, pro, enterprise...).
 *
 * @param name        the plan's name, as used in assignments
 * @param limits      the bandwidths of each tenant's bucket under this plan, at least one
 * @param concurrency the most requests of a route group in flight per tenant (group → cap)
 * @param publish     true to publish the limits to clients ({@code RateLimit-Policy} / {@code RateLimit}
 *                    fields on every response); false (default) keeps them hidden
 * @param shadow      true to refuse nothing: requests that would be refused are counted and logged
 */
public record Plan(String name, List<Bandwidth> limits, Map<String, Integer> concurrency,
                   boolean publish, boolean shadow) {
    /** A hidden, enforcing plan. */
    public Plan(String name, List<Bandwidth> limits, Map<String, Integer> concurrency) {
        this(name, limits, concurrency, false, false);
    }

    public Plan {
        Objects.requireNonNull(name, "name");
        limits = List.copyOf(limits);
        concurrency = Map.copyOf(concurrency);
        if (limits.isEmpty()) throw new IllegalArgumentException("plan " + name + " needs at least one limit");
    }

    /** The smallest capacity among the plan's bandwidths: no request may cost more. */
    public long smallestCapacity() {
        return limits.stream().mapToLong(Bandwidth::capacity).min().orElseThrow();
    }
}

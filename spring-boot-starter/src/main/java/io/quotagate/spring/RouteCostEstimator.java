package io.quotagate.spring;

import io.quotagate.filter.CostEstimator;

import java.util.Objects;

/**
 * A {@link CostEstimator} for one route of the plans file, as a bean: the starter hands every bean of this type
 * to {@code QuotaFilter.builder().costEstimator(route, estimator)}. Declare one bean per route; two for the same
 * route fail start-up.
 *
 * <pre>{@code
 * @Bean
 * RouteCostEstimator completionsCost() {
 *     return new RouteCostEstimator("completions", (request, body) -> tokens.estimate(body));
 * }
 * }</pre>
 *
 * @param route     the name of a route in the plans file ({@code routes[].name})
 * @param estimator prices that route's requests before they run
 */
public record RouteCostEstimator(String route, CostEstimator estimator) {
    public RouteCostEstimator {
        Objects.requireNonNull(route, "route");
        Objects.requireNonNull(estimator, "estimator");
    }
}

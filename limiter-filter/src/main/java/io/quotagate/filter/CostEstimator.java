package io.quotagate.filter;

import jakarta.servlet.http.HttpServletRequest;

/**
 * Computes a request's cost in units before it runs, for routes whose cost depends on the request
 * (an LLM-style endpoint: the prompt's tokens plus the most output tokens it asks for). Registered
 * per route name with {@link QuotaFilter.Builder#costEstimator}; the route's static {@code cost:}
 * is then not used.
 *
 * <p>The estimate is a <em>reservation</em>: it is taken from the buckets before the request runs,
 * and settled afterwards if the application reports the actual cost
 * ({@link ActualCost#report}). Reserve against a ceiling you control (for instance the
 * requested maximum output), so the settlement is usually a refund.
 *
 * <p>The estimator runs on the request thread once the request holds its concurrency slot and its
 * route's minimum {@code cost:} is reserved, with the body already read (bounded in size and time),
 * so it must be fast and must not call the application.
 */
@FunctionalInterface
public interface CostEstimator {

    /**
     * The request's cost in units, &gt; 0. A result of 0 or less is answered with {@code 400}
     * ({@code reason: invalid_cost}); a cost above what the tenant's plan can ever admit with
     * {@code 400} ({@code reason: cost_too_large}).
     *
     * @param request the request (its body already read: use {@code body})
     * @param body    the request body, at most {@link QuotaFilter.Builder#maxEstimatedBodyBytes} bytes
     * @throws InvalidCostInputException when the request cannot be priced because its input is wrong
     *                                   (malformed JSON, a missing or absurd field): answered with 400
     */
    long estimate(HttpServletRequest request, byte[] body);
}

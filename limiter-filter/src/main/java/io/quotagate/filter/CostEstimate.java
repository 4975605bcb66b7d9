package io.quotagate.filter;

import io.quotagate.filter.internal.admission.FailureLog;
import jakarta.servlet.http.HttpServletRequest;

import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * A request priced by its route's {@link CostEstimator}: the cost and the request to pass on (its
 * body replayed from memory), or the problem answered instead when the request cannot be priced.
 * Bad client input is always a 4xx, never a 500, and never reaches the buckets.
 *
 * @param cost    units, &gt; 0 and at most the plan's largest possible cost (when {@code problem} is null)
 * @param request the request to pass down the chain
 * @param problem  the answer to send instead, or null
 * @param bodyRead true if the body was read (and, with a problem, refused as input); false if the
 *                 request was refused before or while reading it (too large by its declared length,
 *                 too slow, broken)
 */
record CostEstimate(long cost, HttpServletRequest request, Problem problem, boolean bodyRead) {
    private static final System.Logger LOG = System.getLogger(CostEstimate.class.getName());
    /** The answer when the estimator failed (a bug of its own, or an {@link Error}): the server's fault. */
    static final Problem FAILED = new Problem(500, "internal_error", "The request could not be priced.", null, 0);

    /**
     * Reads the body and prices it. An estimator that fails otherwise than on the client's input (a plain
     * {@link RuntimeException}: its own bug) answers 500 {@code internal_error}, logged through
     * {@code failures}; an {@link Error} is thrown on (the caller answers, then lets it go on).
     */
    static CostEstimate of(HttpServletRequest request, CostEstimator estimator, BodyLimits limits, long maxCost,
                           String tenant, FailureLog failures) {
        byte[] body;
        try {
            body = CachedBodyRequest.read(request, limits);
        } catch (CachedBodyRequest.TooLarge e) {
            return refused(413, "body_too_large", "The request body is larger than " + limits.maxBytes() + " bytes.",
                    tenant, e.afterReading());
        } catch (CachedBodyRequest.TimedOut e) {
            return refused(408, "body_timeout", "The request body did not arrive within "
                    + limits.readTimeout().toMillis() + " ms.", tenant, false);
        } catch (IOException | UncheckedIOException e) {
            return refused(400, "invalid_request", "The request body could not be read.", tenant, false);
        }
        CachedBodyRequest replay = new CachedBodyRequest(request, body);
        long cost;
        try {
            cost = estimator.estimate(replay, body);
        } catch (InvalidCostInputException e) {
            String detail = e.getMessage() == null ? "The request cannot be priced." : e.getMessage();
            return refused(400, "invalid_request", detail, tenant, true);
        } catch (IllegalArgumentException | UncheckedIOException e) {
            // a parser's complaint about the client's input (NumberFormatException...): still the client's 400
            LOG.log(System.Logger.Level.DEBUG, "cost estimator refused the input", e);
            return refused(400, "invalid_request",
                    "The request cannot be priced: its body is not valid input for this route.", tenant, true);
        } catch (RuntimeException bug) {
            // the estimator's own failure, not the client's: a problem answer, never the container's error page
            failures.failed(" for " + request.getRequestURI(), bug);
            return new CostEstimate(0, null, FAILED.withTenant(tenant), true);
        }
        if (cost <= 0) {
            LOG.log(System.Logger.Level.WARNING, "cost estimator returned " + cost + " for " + request.getRequestURI()
                    + "; answered 400");
            return refused(400, "invalid_cost", "The request's cost must be a whole number of units > 0.",
                    tenant, true);
        }
        if (cost > maxCost) {
            return refused(400, "cost_too_large", "The request would cost " + cost
                    + " units; the most this plan can ever admit at once is " + maxCost + ".", tenant, true);
        }
        return new CostEstimate(cost, replay, null, true);
    }

    /**
     * Whether a refused request keeps what it was charged: every refusal but a 413 by declared length
     * (refused before a byte was read) and a 500 (the estimator failed: the server's fault). A body read
     * and refused as input made the server do the work; one too slow (408) or broken off held the route's
     * slot meanwhile.
     */
    boolean keepsCharge() {
        if (problem != null && problem.status() >= 500) return false; // the server failed: the client pays nothing
        return bodyRead || problem == null || problem.status() != 413;
    }

    /**
     * Whether part of the body is still unread: it was refused before or while being read (too slow,
     * broken), or found too large after reading past the limit (413).
     */
    boolean bodyLeftUnread() {
        return !bodyRead || problem != null && problem.status() == 413;
    }

    private static CostEstimate refused(int status, String reason, String detail, String tenant, boolean bodyRead) {
        return new CostEstimate(0, null, new Problem(status, reason, detail, tenant, 0), bodyRead);
    }
}

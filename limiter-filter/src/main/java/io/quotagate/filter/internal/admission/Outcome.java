package io.quotagate.filter.internal.admission;

import io.quotagate.filter.status.BandwidthStatus;
import io.quotagate.filter.store.StoreUnavailableException;

import java.util.List;

/**
 * What the {@link Gate} decided for a request: it may run, holding a {@link Ticket}, or it is
 * {@link Refused}, with nothing taken.
 */
public sealed interface Outcome permits Outcome.Refused, Outcome.Delayed, Ticket {

    /**
     * The request may run, but only after {@code delayNanos}: its units are reserved (its buckets went into
     * debt up to its {@code throttle}'s max-delay), so it must not run sooner, and it is not charged again
     * when it resumes. The {@link #ticket} holds what it holds while it waits (the units, a concurrency slot
     * of a capped route); closing it without running gives them back, as for any ticket.
     *
     * @param ticket     the admitted request's ticket ({@link Ticket#delayNanos()} &gt; 0)
     * @param delayNanos how long it must wait, &gt; 0 and at most the throttle's max-delay
     * @param throttle   the throttle that delayed it (its queue bounds the tenant's delayed requests)
     */
    record Delayed(Ticket ticket, long delayNanos, io.quotagate.plans.Throttle throttle) implements Outcome {
        public Delayed {
            java.util.Objects.requireNonNull(ticket, "ticket");
            java.util.Objects.requireNonNull(throttle, "throttle");
            if (delayNanos <= 0) throw new IllegalArgumentException("delayNanos must be > 0, was " + delayNanos);
        }
    }

    /**
     * The request must not run; nothing is held for it.
     *
     * @param status            the HTTP status to answer (400, 401, 403, 408, 413, 429, 500, 503)
     * @param reason            the machine-readable reason ({@code tenant_rate}, {@code unknown_tenant}...)
     * @param detail            a sentence for the client; never echoes unvalidated input
     * @param caller            who was refused; null before a valid tenant or client key was known
     * @param retryAfterSeconds the {@code Retry-After} delay in whole seconds, or 0 for none
     * @param limits            for a 429 of a plan that publishes its limits: the state of each of the
     *                          request's buckets (its tenant's, its calendar quotas, then those beside it: per
     *                          user, the route's own) as the refusing store operation left them (its probe:
     *                          nothing is read again), for the {@code RateLimit} fields and
     *                          {@code violated-policies}; empty otherwise (nothing published)
     */
    record Refused(int status, String reason, String detail, Caller caller, long retryAfterSeconds,
                   List<BandwidthStatus> limits) implements Outcome {

        public Refused {
            limits = limits == null ? List.of() : List.copyOf(limits);
        }

        /** A refusal that publishes no limits. */
        public Refused(int status, String reason, String detail, Caller caller, long retryAfterSeconds) {
            this(status, reason, detail, caller, retryAfterSeconds, List.of());
        }

        /** The 429 of a refused request, with the published state of its buckets. */
        static Outcome.Refused tooMany(Rejection rejected, Caller caller, List<BandwidthStatus> limits) {
            Outcome.Refused refused = tooMany(rejected, caller);
            return new Outcome.Refused(refused.status, refused.reason, refused.detail, caller,
                    refused.retryAfterSeconds, limits);
        }

        /** The 429 of a refused request. */
        static Outcome.Refused tooMany(Rejection rejected, Caller caller) {
            long seconds = rejected.retryAfterSeconds();
            String detail = switch (rejected.reason()) {
                case TENANT_RATE -> "The tenant's rate limit is exhausted; retry after " + seconds + " s.";
                case GUEST_RATE -> "The quota shared by tenants without a plan of their own is exhausted; retry after "
                        + seconds + " s.";
                case GLOBAL_RATE -> "The API's shared quota is exhausted; retry after " + seconds + " s.";
                case CONCURRENCY -> "Too many requests of this kind are running at once; retry after " + seconds + " s.";
                case QUOTA -> "The tenant's quota '" + rejected.limit() + "' is used up until it resets; retry after "
                        + seconds + " s.";
                case USER_RATE -> "This user's share of the tenant's rate limit (per-user) is exhausted; retry after "
                        + seconds + " s.";
                case ROUTE_RATE, ROUTE_USER_RATE, ROUTE_ADDRESS_RATE -> "The route's limit '" + rejected.limit()
                        + "' is exhausted; retry after " + seconds + " s.";
            };
            return new Outcome.Refused(429, rejected.reason().code(), detail, caller, seconds);
        }

        /** The 503 of {@code store.on-failure: closed}: refuse rather than admit unchecked. */
        static Outcome.Refused unavailable(StoreUnavailableException unavailable, Caller caller) {
            return new Outcome.Refused(503, "store_unavailable", "The quota store is unavailable; retry after "
                    + unavailable.retryAfterSeconds() + " s.", caller, unavailable.retryAfterSeconds());
        }
    }
}

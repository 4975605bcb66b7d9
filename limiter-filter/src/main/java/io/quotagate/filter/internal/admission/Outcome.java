package io.quotagate.filter.internal.admission;

import io.quotagate.filter.status.BandwidthStatus;
import io.quotagate.filter.status.Reason;
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
     * @param reason            the wire form of why ({@code tenant_rate}, {@code unknown_tenant}...): the problem
     *                          body's {@code reason} and the metrics' tag; for a refusal by a limit, {@code rate}'s
     *                          {@link Reason#code() code}
     * @param detail            a sentence for the client; never echoes unvalidated input
     * @param caller            who was refused; null before a valid tenant or client key was known
     * @param retryAfterSeconds the {@code Retry-After} delay in whole seconds, or 0 for none
     * @param limits            for a 429 of a plan that publishes its limits: the state of each of the
     *                          request's buckets (its tenant's, its calendar quotas, then those beside it: per
     *                          user, the route's own) as the refusing store operation left them (its probe:
     *                          nothing is read again), for the {@code RateLimit} fields and
     *                          {@code violated-policies}; empty otherwise (nothing published)
     * @param rate              which limit refused (a bucket or a concurrency cap), as a value: what answers,
     *                          statistics and events decide on; null for a refusal by no limit (a bad
     *                          request, an unknown tenant, a store outage, a full throttle queue...)
     */
    record Refused(int status, String reason, String detail, Caller caller, long retryAfterSeconds,
                   List<BandwidthStatus> limits, Reason rate) implements Outcome {

        public Refused {
            limits = limits == null ? List.of() : List.copyOf(limits);
            if (rate != null && !rate.code().equals(reason)) {
                throw new IllegalArgumentException("reason " + reason + " is not " + rate.code());
            }
        }

        /** A refusal by no limit, publishing the state of the request's buckets ({@code limits}). */
        public Refused(int status, String reason, String detail, Caller caller, long retryAfterSeconds,
                       List<BandwidthStatus> limits) {
            this(status, reason, detail, caller, retryAfterSeconds, limits, null);
        }

        /** A refusal by no limit, publishing nothing. */
        public Refused(int status, String reason, String detail, Caller caller, long retryAfterSeconds) {
            this(status, reason, detail, caller, retryAfterSeconds, List.of(), null);
        }

        /** True for a 429 of a bucket beside the tenant's (a user's share, a route's own): see {@link Reason#scope()}. */
        public boolean byScopedBucket() {
            return rate != null && rate.scope() != null;
        }

        /** The 429 of a refused request, with the published state of its buckets (null or empty: none). */
        static Outcome.Refused tooMany(Rejection rejected, Caller caller, List<BandwidthStatus> limits) {
            long seconds = rejected.retryAfterSeconds();
            Reason rate = rejected.reason();
            return new Outcome.Refused(429, rate.code(), rate.detail(rejected.limit(), seconds), caller, seconds,
                    limits, rate);
        }

        /** The 429 of a refused request. */
        static Outcome.Refused tooMany(Rejection rejected, Caller caller) {
            return tooMany(rejected, caller, null);
        }

        /** The 503 of {@code store.on-failure: closed}: refuse rather than admit unchecked. */
        static Outcome.Refused unavailable(StoreUnavailableException unavailable, Caller caller) {
            return new Outcome.Refused(503, "store_unavailable", "The quota store is unavailable; retry after "
                    + unavailable.retryAfterSeconds() + " s.", caller, unavailable.retryAfterSeconds());
        }
    }
}

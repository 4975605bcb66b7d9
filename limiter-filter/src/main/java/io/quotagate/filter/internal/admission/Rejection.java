package io.quotagate.filter.internal.admission;

import io.quotagate.filter.status.Reason;
import io.quotagate.filter.status.RetryAfter;
import java.util.Objects;

/**
 * Why a bucket (or a concurrency cap) refused a request and for how long, inside the gate: the answer of
 * one store operation's probe, made into the request's {@link Outcome.Refused} (or, in shadow mode, only
 * counted and logged). Nothing was taken for it.
 *
 * @param reason      which bucket refused (the one with the longest wait)
 * @param nanosToWait how long until the same request would be admitted, if nothing else consumed
 * @param limit       the name of the limit that refused (a calendar quota, a route's own), else null
 * @param remaining   for a plan that publishes its limits, each bandwidth of the tenant's bucket as the refusing
 *                    operation left it (its probe); null otherwise
 */
record Rejection(Reason reason, long nanosToWait, String limit, long[] remaining) implements Charged {
    Rejection {
        Objects.requireNonNull(reason, "reason");
    }

    /** A refusal by a bucket or a concurrency cap. */
    Rejection(Reason reason, long nanosToWait) {
        this(reason, nanosToWait, null, null);
    }

    /** A refusal by the limit named {@code limit}. */
    Rejection(Reason reason, long nanosToWait, String limit) {
        this(reason, nanosToWait, limit, null);
    }

    /** This refusal, with the tenant's bucket's published remainders (null: none). */
    Rejection publishing(long[] remaining) {
        return remaining == null ? this : new Rejection(reason, nanosToWait, limit, remaining);
    }

    /** {@code Retry-After} in whole seconds: {@link #nanosToWait} rounded up, at least 1. */
    long retryAfterSeconds() {
        return RetryAfter.seconds(nanosToWait);
    }
}

package io.quotagate.filter.admission;

import java.util.Objects;

/** The outcome of {@link Admission#admit}: the request may run, or it is refused for a while. */
public sealed interface Decision permits Decision.Admitted, Decision.Rejected {

    /** The request may run; its cost has been taken from every bucket. */
    record Admitted() implements Decision {
        static final Admitted INSTANCE = new Admitted();
    }

    /**
     * The request is refused and nothing was taken from any bucket.
     *
     * @param reason      which bucket refused (the one with the longest wait)
     * @param nanosToWait how long until the same request would be admitted, if nothing else consumed
     */
    record Rejected(Reason reason, long nanosToWait) implements Decision {
        public Rejected {
            Objects.requireNonNull(reason, "reason");
        }

        /** {@code Retry-After} in whole seconds: {@link #nanosToWait} rounded up, at least 1. */
        public long retryAfterSeconds() {
            return RetryAfter.seconds(nanosToWait);
        }
    }
}

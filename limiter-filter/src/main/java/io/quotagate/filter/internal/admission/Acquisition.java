package io.quotagate.filter.internal.admission;

import io.quotagate.filter.status.RetryAfter;
import java.util.Objects;

/** The outcome of {@link ConcurrencyLimits#acquire}: a slot, or a refusal. */
public sealed interface Acquisition permits Acquisition.Granted, Acquisition.Refused {

    /** The request holds a slot of its group until it gives the permit back. */
    record Granted(Permit permit) implements Acquisition {
        public Granted {
            Objects.requireNonNull(permit, "permit");
        }
    }

    /**
     * No slot: the tenant's cap or the group's cap is reached (and the queue, if any, is full or the
     * wait in it timed out).
     *
     * @param group       the route's concurrency group
     * @param nanosToWait the estimated time until a slot frees: for a tenant at its own cap, until its
     *                    oldest running request of the group is expected to end; otherwise the group's
     *                    average request duration (see {@link GroupLimiter})
     * @param timedOut    true if the request waited in the group's queue for the whole max-wait
     */
    record Refused(String group, long nanosToWait, boolean timedOut) implements Acquisition {
        public Refused {
            Objects.requireNonNull(group, "group");
        }

        /** {@code Retry-After} in whole seconds: {@link #nanosToWait} rounded up, at least 1. */
        public long retryAfterSeconds() {
            return RetryAfter.seconds(nanosToWait);
        }

    }
}

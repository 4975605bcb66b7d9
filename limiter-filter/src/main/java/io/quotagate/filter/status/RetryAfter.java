package io.quotagate.filter.status;

/** Turns a wait in nanoseconds into an RFC 9110 {@code Retry-After} delay. */
public final class RetryAfter {
    private static final long NANOS_PER_SECOND = 1_000_000_000L;

    private RetryAfter() {
    }

    /**
     * Whole seconds, rounded up so that a client waiting exactly this long finds the request
     * admissible, and never below 1 (a {@code Retry-After: 0} invites an immediate retry storm).
     */
    public static long seconds(long nanosToWait) {
        if (nanosToWait <= NANOS_PER_SECOND) return 1;
        long whole = nanosToWait / NANOS_PER_SECOND;
        return nanosToWait % NANOS_PER_SECOND == 0 ? whole : whole + 1;
    }
}

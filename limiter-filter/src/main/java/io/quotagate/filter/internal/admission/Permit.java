package io.quotagate.filter.internal.admission;

/**
 * A slot of a concurrency group held by one request (see {@link ConcurrencyLimits}). Give it back
 * exactly once when the request really ends; both methods are idempotent and thread-safe, so every
 * end-of-request path may call them: the first call frees the slot, later calls do nothing.
 */
public interface Permit {
    /**
     * The request ran and has ended: frees the slot, hands it to the oldest waiter that may take it,
     * and feeds the request's duration into the group's {@code Retry-After} estimate.
     */
    void release();

    /**
     * The request never ran (the token buckets refused it): frees the slot like {@link #release()}
     * but does not count as a completed request in the {@code Retry-After} estimate.
     */
    void cancel();

    /**
     * The request waits {@code nanos} before it runs (a {@code throttle:} delayed it, holding this slot):
     * an adaptive group's limit reads its run time from the end of that wait, since a wait the tenant
     * earned by sending too fast says nothing about the backend. Called before the request runs.
     */
    default void delayedBy(long nanos) {
    }

    /** The group this permit belongs to. */
    String group();
}

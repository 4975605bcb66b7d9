package io.quotagate.filter.status;

/**
 * Told how long requests waited in a concurrency group's queue (for a {@code quotagate.queue.wait}
 * timer). Called on the request's thread after the wait, outside every lock; keep it cheap and never
 * throw.
 */
@FunctionalInterface
public interface ConcurrencyListener {
    /** A listener that ignores everything. */
    ConcurrencyListener NONE = (group, tenant, waitedNanos, admitted) -> { };

    /**
     * A request that found no free slot waited in the group's queue.
     *
     * @param group       the concurrency group
     * @param tenant      the tenant key the request was counted under
     * @param waitedNanos how long it waited (real time)
     * @param admitted    true if it got a slot, false if it timed out (it is then refused with 429)
     */
    void queueWait(String group, String tenant, long waitedNanos, boolean admitted);
}

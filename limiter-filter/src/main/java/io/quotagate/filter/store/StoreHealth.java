package io.quotagate.filter.store;

/**
 * What a store shared by several instances tells about itself: whether its backend answers, and
 * how often this instance had to decide alone. The metrics binder reads this view, never a
 * concrete store; a local store has none ({@link BucketStore#health()} is empty).
 */
public interface StoreHealth {

    /** Whether buckets are in the shared backend right now (false during an outage, while answering locally). */
    boolean available();

    /** Outages seen since start: each time this instance switched from the backend to local buckets. */
    long outages();

    /**
     * Bucket operations answered from local buckets since start: during outages, and single
     * operations the backend could not settle (such as compare-and-swap retries that ran out).
     */
    long fallbackDecisions();

    /** Instances sharing the store (the last known number while the backend is unreachable). */
    int instanceCount();

    /**
     * Whether the backend keeps its data on disk, so that a restart keeps the calendar quotas' counts:
     * {@value #PERSISTENT} if it does, {@value #NOT_PERSISTENT} if it keeps nothing (a restart loses every
     * count; the instances then rebuild the counters they saw), {@value #PERSISTENCE_UNKNOWN} if it cannot
     * tell (a managed Redis that refuses {@code CONFIG}, or not asked yet). The default cannot tell.
     */
    default int persistence() {
        return PERSISTENCE_UNKNOWN;
    }

    /** {@link #persistence()}: the backend keeps its data on disk (snapshots or an append-only file). */
    int PERSISTENT = 1;
    /** {@link #persistence()}: the backend keeps nothing on disk. */
    int NOT_PERSISTENT = 0;
    /** {@link #persistence()}: unknown. */
    int PERSISTENCE_UNKNOWN = -1;
}

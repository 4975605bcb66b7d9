package io.quotagate.filter.store;

/**
 * One token bucket as the admission core uses it: the few operations it needs, whatever holds the
 * state (this JVM, Redis, or this instance's share while Redis is unreachable). Every operation
 * applies to all bandwidths of the bucket's {@link BucketLimits} at once.
 *
 * <p>Implementations are thread-safe; a caller may keep a bucket (as the admission core keeps the
 * global one) and call it from any thread. The hot path is {@link #tryTake}, which allocates
 * nothing in the local implementation; the wait is computed only for a refusal.
 */
public interface QuotaBucket {

    /** Takes {@code units} from every bandwidth, or nothing if any of them holds fewer. */
    boolean tryTake(long units);

    /**
     * Takes {@code units} from every bandwidth, or nothing, and says how long a refused request must wait:
     * bucket4j's consumption probe. A store that keeps its buckets elsewhere answers both in one operation
     * (Redis: one script call), so a refusal never asks the store again for its Retry-After.
     *
     * @return 0 if taken; else the nanoseconds until {@code units} would fit (at least 1;
     *         {@link Long#MAX_VALUE} if they never will: more than a bandwidth's capacity)
     */
    default long take(long units) {
        return tryTake(units) ? 0 : Math.max(1, nanosToWait(units));
    }

    /** Nanoseconds until {@link #tryTake}{@code (units)} would succeed; 0 if it would now. Takes nothing. */
    long nanosToWait(long units);

    /** Gives {@code units} back to every bandwidth, each capped at its capacity. */
    void refund(long units);

    /** Takes {@code units} even if they are not there: the bandwidths may go into debt. */
    void forceTake(long units);

    /** Units available now: the smallest over the bandwidths (negative while in debt). */
    long available();

    /** Units available now in each bandwidth, in the order of the bucket's {@link BucketLimits}. */
    long[] availablePerBandwidth();

    /**
     * Units in each bandwidth as the bucket's latest operation (from any thread) left them, for publishing
     * a request's remaining units: a store whose every operation already tells the bucket's state (Redis)
     * answers from that without asking again; the default reads it ({@link #availablePerBandwidth()}).
     */
    default long[] notedPerBandwidth() {
        return availablePerBandwidth();
    }
}

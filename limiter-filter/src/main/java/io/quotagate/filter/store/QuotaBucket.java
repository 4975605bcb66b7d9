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

    /**
     * Takes {@code units} now if they are there, or if they arrive within {@code maxWaitNanos}: then the
     * bandwidths go into debt, and the request waits before it runs (bucket4j's reservation,
     * {@code asScheduler().tryConsume(units, maxWait, scheduler)}); otherwise takes nothing. Nothing is
     * taken again when the request resumes: this is its charge, given back with {@link #refund} if it
     * never runs.
     *
     * <p>The default takes ({@link #take}) and, on a refusal whose wait is within {@code maxWaitNanos},
     * takes into debt ({@link #forceTake}): two steps, so a take of another thread between them makes this
     * request's wait shorter than the debt it leaves (the debt is real: the bucket's rate still holds, the
     * next requests wait for it). A store that can decide in one step overrides it (local: under the
     * bucket's monitor; Redis: in the script).
     *
     * @param maxWaitNanos the longest wait accepted, &gt;= 0 (0: as {@link #take})
     * @return 0 if taken without a wait; a wait &lt;= {@code maxWaitNanos} if taken with that wait; a wait
     *         &gt; {@code maxWaitNanos} (as {@link #take} tells it) if nothing was taken
     */
    default long reserve(long units, long maxWaitNanos) {
        long wait = take(units);
        if (wait == 0 || wait > maxWaitNanos) return wait;
        forceTake(units);
        return wait;
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
     * Units in each bandwidth as the bucket's latest operation left them, for a store's own
     * {@link BucketStore#takeAll} to put in its {@link Probe} right after the operation: a bucket whose every
     * operation already tells its state (Redis) answers from that without asking again; the default reads
     * it ({@link #availablePerBandwidth()}). Admission never calls it: it reads the probe.
     */
    default long[] notedPerBandwidth() {
        return availablePerBandwidth();
    }
}

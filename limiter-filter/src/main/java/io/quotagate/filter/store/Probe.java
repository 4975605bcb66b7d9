package io.quotagate.filter.store;

/**
 * What one store operation on a request's buckets found, for all of them at once: whether they took the
 * units, each one's wait, and each one's units left per bandwidth, as bucket4j's
 * {@code ConsumptionProbe} tells them for one bucket. A refusal's {@code Retry-After} and published
 * fields come from this value, so no refusal asks the store again.
 *
 * <p>The arrays belong to the caller that received the probe; no store keeps or reuses them.
 *
 * @param taken     true if every bucket took the units (for a reservation: with a wait within its maximum)
 * @param waits     per bucket, in the order asked: when refused, its wait for the units (0 for one that
 *                  could take them; {@link Long#MAX_VALUE} for never); when taken, its delay (0 without a
 *                  wait, always 0 for {@link BucketStore#takeAll})
 * @param remaining per bucket, the units in each of its bandwidths (in the order of its
 *                  {@link BucketLimits}) as this operation left them (negative in debt; an element may be
 *                  null for a bucket the operation could not tell); null if the caller did not ask for them,
 *                  unless the store had them anyway (Redis: in its reply)
 */
public record Probe(boolean taken, long[] waits, long[][] remaining) {

    /** The longest of the waits: a refused request's wait until every bucket can take it, a taken one's delay. */
    public long longestWait() {
        long longest = 0;
        for (long w : waits) longest = Math.max(longest, w);
        return longest;
    }
}

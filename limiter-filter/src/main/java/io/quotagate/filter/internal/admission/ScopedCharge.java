package io.quotagate.filter.internal.admission;

import io.quotagate.filter.status.BandwidthStatus;
import io.quotagate.filter.status.Reason;
import io.quotagate.filter.store.BucketLimits;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.store.Probe;
import io.quotagate.filter.store.QuotaBucket;

import java.util.List;

/**
 * The buckets a request is charged in beside its tenant's: its plan's bucket of the user
 * ({@code per-user}) and its route's own ({@code routes[].limits}, per tenant, user or client
 * address). Made only for a request that has such buckets, so other requests allocate nothing.
 *
 * <p>{@link #take} takes the units from all of them or none (one operation of the store); the refusal
 * is the one among all the refusing buckets that waits longest, so a client that waits that long finds
 * every one of them able to take it. Confined to the deciding thread until
 * {@link #refund}, which may run later on any thread (the buckets are thread-safe).
 */
final class ScopedCharge {
    /** Not a charge: the request named a user whose id is not valid (a 400, nothing taken). */
    static final ScopedCharge INVALID_USER = new ScopedCharge();

    private final QuotaBucket[] buckets = new QuotaBucket[4];
    private final BucketLimits[] limits = new BucketLimits[4];
    private final Reason[] reasons = new Reason[4];
    private final String[] names = new String[4];
    private final String[] policies = new String[4];
    private final String[] partitions = new String[4];
    /**
     * What each bucket held per bandwidth after this request's latest store operation on them (its own probe,
     * kept for its response's fields when its plan publishes), null before one.
     */
    private final long[][] remaining = new long[4][];
    private int size;
    private long charged;
    /** The smallest capacity of all the buckets: the largest cost they can ever take. */
    private long smallestCapacity = Long.MAX_VALUE;

    /**
     * Adds a bucket to charge, at {@code limits}; {@code name} names its limit in a refusal, {@code policy}
     * its bandwidths' published names ({@code <policy>.<bandwidth>}), {@code partition} their {@code pk}
     * (null for none).
     */
    void add(QuotaBucket bucket, BucketLimits limits, Reason reason, String name, String policy, String partition) {
        smallestCapacity = Math.min(smallestCapacity, limits.smallestCapacity());
        buckets[size] = bucket;
        this.limits[size] = limits;
        reasons[size] = reason;
        names[size] = name;
        policies[size] = policy;
        partitions[size] = partition;
        size++;
    }

    /**
     * Adds the state of every bandwidth of these buckets to {@code out}, as this request's latest operation on
     * them left them (its own probe: on Redis, the tokens its reply showed; no bucket is read again).
     */
    void published(List<BandwidthStatus> out) {
        for (int i = 0; i < size; i++) LimitsReadout.statuses(remaining[i], limits[i], policies[i], partitions[i], out);
    }

    /** Notes what the request's probe said of these buckets, at {@code from[at..at+size())} (null: nothing). */
    void noted(long[][] from, int at) {
        for (int i = 0; i < size; i++) remaining[i] = from == null ? null : from[at + i];
    }

    /**
     * Takes {@code cost} from every bucket, or from none: one operation of the store (on Redis one round
     * trip), which also gives each bucket's wait when it refuses.
     *
     * @param publish true to note each bucket's remainder from the same operation (a plan that publishes)
     * @return null if every bucket took it; otherwise the longest refusal, nothing held
     */
    Rejection take(BucketStore store, long cost, boolean publish) {
        Probe probe = store.takeAll(buckets, size, cost, publish);
        if (publish) noted(probe.remaining(), 0);
        if (probe.taken()) {
            charged = cost;
            return null;
        }
        return longest(null, probe.waits());
    }

    /** {@code refusal} (null for none), or the bucket's refusal with the longest of {@code waits} if longer. */
    private Rejection longest(Rejection refusal, long[] waits) {
        return longest(refusal, waits, 0);
    }

    /**
     * {@code refusal} (null for none), or the refusal of one of these buckets if it waits longer, their waits
     * at {@code waits[from..from+size())}.
     */
    Rejection longest(Rejection refusal, long[] waits, int from) {
        for (int i = 0; i < size; i++) {
            long wait = waits[from + i];
            if (wait > 0 && (refusal == null || wait > refusal.nanosToWait())) {
                refusal = new Rejection(reasons[i], wait, names[i]);
            }
        }
        return refusal;
    }

    /**
     * {@code refusal}, or the refusal of one of these buckets for {@code cost} now if it waits longer;
     * nothing is taken (one operation of the store, which also tells each bucket's remainder if {@code publish}).
     */
    Rejection longerOf(BucketStore store, Rejection refusal, long cost, boolean publish) {
        Probe probe = store.waits(buckets, size, cost, publish);
        if (publish) noted(probe.remaining(), 0);
        return longest(refusal, probe.waits());
    }

    /** The largest cost these buckets can ever take at once. */
    long smallestCapacity() {
        return smallestCapacity;
    }

    /** How many buckets. */
    int size() {
        return size;
    }

    /** Puts the buckets at {@code into[at..]}; returns the index after the last. */
    int addTo(QuotaBucket[] into, int at) {
        System.arraycopy(buckets, 0, into, at, size);
        return at + size;
    }

    /** Notes that {@code cost} was taken from every bucket (by the request's one store operation). */
    void charged(long cost) {
        charged = cost;
    }

    /** Gives back up to what was charged (a request that did not run, or used less). */
    void refund(long units) {
        long back = Math.min(units, charged);
        if (back <= 0) return;
        charged -= back;
        for (int i = 0; i < size; i++) buckets[i].refund(back);
    }
}

package io.quotagate.filter.store;

import io.quotagate.plans.Algorithm;
import io.quotagate.plans.Bandwidth;

import java.util.List;
import java.util.Objects;

/**
 * The limits a bucket enforces: a plan's bandwidths (or the global quota's, or a tenant override's), each
 * with its {@link Algorithm}, described in quotagate's own types only (no store's types: each store builds
 * what it needs from the bandwidths).
 *
 * <p><b>Identity matters.</b> The admission core builds one instance per plan and keeps it as long
 * as the plan's limits do not change, so a store may tell "these limits are what this bucket already
 * has" by identity, on the hot path, and move a bucket to new limits only when handed another
 * instance. {@link #equals} compares content (two files with the same limits).
 *
 * <p>{@link #initial()} tells a shared store whether it may skip moving a bucket it has not seen yet:
 * the limits the filter started with are the ones every bucket it creates gets, so only after a
 * change of limits (any reload replaces the initial instances, see {@link #next}) must a bucket
 * that already exists in the shared store be moved.
 *
 * <p><b>Moving to other limits</b> keeps what was spent, bandwidth by bandwidth (matched by name): a
 * bandwidth keeps its units left, capped at its new capacity (a debt stays a debt); a bandwidth that did
 * not exist before starts full. So raising a quota gives nobody an instant extra burst, lowering it takes
 * effect at once, and a tenant that just emptied its bucket cannot escape the wait through a change of
 * limits. When a bandwidth's algorithm changes, its units left carry over as the new algorithm counts them
 * (see docs/algorithms.md): a token bucket's {@code tokens} and a GCRA cell's theoretical arrival time are
 * the same thing ({@code TAT = now + (capacity − tokens) × period / refill}); to a sliding window, the units
 * spent ({@code capacity − tokens}) count in the current window; from a sliding window, the units its
 * current window counts are spent.
 */
public final class BucketLimits {
    /** Sub-windows a sliding window's period is split into (see {@link #slotNanos}). */
    static final int SLOTS = 10;

    private final List<Bandwidth> bandwidths;
    private final long smallestCapacity;
    private final boolean initial;
    /**
     * Per bandwidth, in order: capacity, refill tokens, refill period in nanoseconds (the local bucket's
     * arithmetic); never written after construction. Shared by the instances {@link #next} makes of the
     * same bandwidths, so its identity tells a local bucket that its state needs no change.
     */
    final long[] lanes;
    /** Per bandwidth, its algorithm; null when every one is a token bucket (the local bucket's fast path). */
    final Algorithm[] algorithms;
    /**
     * Per bandwidth, where a sliding window's sub-window counters start in a local bucket's array of further
     * state ({@code -1} for other algorithms); null when there is no sliding window.
     */
    final int[] windowAt;
    /** The length of a local bucket's array of further state (further bandwidths, sliding windows' counters). */
    final int moreLength;

    private BucketLimits(List<Bandwidth> bandwidths, long[] lanes, boolean initial) {
        this.bandwidths = bandwidths;
        this.initial = initial;
        int n = bandwidths.size();
        long min = Long.MAX_VALUE;
        boolean fill = lanes == null;
        long[] l = fill ? new long[3 * n] : lanes;
        Algorithm[] algorithms = new Algorithm[n];
        boolean tokenBucketsOnly = true;
        boolean windows = false;
        for (int i = 0; i < n; i++) {
            Bandwidth b = bandwidths.get(i);
            min = Math.min(min, b.capacity());
            if (fill) {
                l[3 * i] = b.capacity();
                l[3 * i + 1] = b.refill();
                l[3 * i + 2] = b.period().toNanos();
            }
            algorithms[i] = b.algorithm();
            tokenBucketsOnly &= b.algorithm() == Algorithm.TOKEN_BUCKET;
            windows |= b.algorithm() == Algorithm.SLIDING_WINDOW;
        }
        int more = 3 * (n - 1);
        int[] at = windows ? new int[n] : null;
        if (windows) {
            for (int i = 0; i < n; i++) {
                if (algorithms[i] != Algorithm.SLIDING_WINDOW) {
                    at[i] = -1;
                    continue;
                }
                at[i] = more;
                more += 2 + SLOTS; // the newest sub-window's number, then SLOTS + 1 counters
            }
        }
        this.smallestCapacity = min;
        this.lanes = l;
        this.algorithms = tokenBucketsOnly ? null : algorithms;
        this.windowAt = at;
        this.moreLength = more;
    }

    /**
     * The limits a filter starts with ({@link #initial()} true).
     *
     * @param bandwidths at least one; a request must fit in all of them
     * @return the limits
     */
    public static BucketLimits of(List<Bandwidth> bandwidths) {
        return new BucketLimits(checked(bandwidths), null, true);
    }

    /**
     * The limits after a change of limits (a reload, a runtime change): this very instance if the
     * bandwidths are the same and it is not {@link #initial()}; an instance sharing this one's
     * arithmetic but no longer initial if the bandwidths are the same (so local buckets stay
     * untouched and shared ones are checked once); new limits otherwise.
     *
     * @param previous   the instance in force before the change, or null
     * @param bandwidths at least one; a request must fit in all of them
     * @return the limits
     */
    public static BucketLimits next(BucketLimits previous, List<Bandwidth> bandwidths) {
        if (previous == null || !previous.bandwidths.equals(bandwidths)) {
            return new BucketLimits(checked(bandwidths), null, false);
        }
        return previous.initial ? new BucketLimits(previous.bandwidths, previous.lanes, false) : previous;
    }

    private static List<Bandwidth> checked(List<Bandwidth> bandwidths) {
        List<Bandwidth> copy = List.copyOf(Objects.requireNonNull(bandwidths, "bandwidths"));
        if (copy.isEmpty()) throw new IllegalArgumentException("a bucket needs at least one bandwidth");
        return copy;
    }

    /**
     * The bandwidths, in the order {@link QuotaBucket#availablePerBandwidth()} reports them.
     *
     * @return the bandwidths, immutable
     */
    public List<Bandwidth> bandwidths() {
        return bandwidths;
    }

    /**
     * The smallest capacity: the largest cost a bucket of these limits can ever take.
     *
     * @return the smallest capacity
     */
    public long smallestCapacity() {
        return smallestCapacity;
    }

    /**
     * True for limits the filter started with, before any change of limits.
     *
     * @return whether these are the starting limits
     */
    public boolean initial() {
        return initial;
    }

    /**
     * True if every bandwidth is a {@link Algorithm#TOKEN_BUCKET}.
     *
     * @return whether only token buckets count here
     */
    public boolean tokenBucketsOnly() {
        return algorithms == null;
    }

    /**
     * True if a request can be reserved (taken into debt, to run after a wait: a {@code throttle}) on these
     * limits: not with a {@link Algorithm#SLIDING_WINDOW} bandwidth, which counts what was admitted in a
     * window and has no debt to pay back; the token bucket and GCRA can.
     *
     * @return whether a reservation is possible
     */
    public boolean canReserve() {
        return windowAt == null;
    }

    /**
     * Nanoseconds after which {@code units} spent now in bandwidth {@code index} are back, at the latest,
     * however the bucket is used meanwhile: a token bucket's and a GCRA cell's refill time for them; a
     * sliding window's period plus one sub-window (its counters are per sub-window: a unit counted now
     * leaves the window at most that long after). What a published reset is computed from.
     *
     * @param index a bandwidth's place in {@link #bandwidths()}
     * @param units units spent, &gt;= 0
     * @return the nanoseconds, {@link Long#MAX_VALUE} if past a long
     */
    public long nanosToReturn(int index, long units) {
        if (units <= 0) return 0;
        Bandwidth b = bandwidths.get(index);
        if (b.algorithm() == Algorithm.SLIDING_WINDOW) {
            long period = b.period().toNanos();
            return period + slotNanos(period);
        }
        double nanos = (double) units * b.period().toNanos() / b.refill();
        return nanos >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) Math.ceil(nanos);
    }

    /**
     * The length of a sliding window's sub-window: its period divided by {@link #SLOTS}, rounded up, so that
     * {@code SLOTS} sub-windows cover at least a period.
     */
    static long slotNanos(long periodNanos) {
        return (periodNanos + SLOTS - 1) / SLOTS;
    }

    /** The same bandwidths (whether initial or not). */
    @Override
    public boolean equals(Object o) {
        return o instanceof BucketLimits other && bandwidths.equals(other.bandwidths);
    }

    @Override
    public int hashCode() {
        return bandwidths.hashCode();
    }

    @Override
    public String toString() {
        return "BucketLimits" + bandwidths + (initial ? "" : " (changed since start)");
    }
}

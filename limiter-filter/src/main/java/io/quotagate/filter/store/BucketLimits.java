package io.quotagate.filter.store;

import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.TokensInheritanceStrategy;
import io.quotagate.plans.Bandwidth;

import java.util.List;
import java.util.Objects;

/**
 * The limits a bucket enforces: a plan's bandwidths (or the global quota's, or a tenant override's),
 * with the bucket4j configuration built once for the stores.
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
 */
public final class BucketLimits {
    /**
     * How a bucket keeps its tokens when its limits change: {@code AS_IS}. Each bandwidth keeps the
     * tokens it has (matched by name), capped at its new capacity; a debt stays a debt; a bandwidth
     * that did not exist before starts full. So raising a quota gives nobody an instant extra burst
     * (the bucket refills up to the new capacity at the new rate), lowering it takes effect at once,
     * and a tenant that just emptied its bucket cannot escape the wait through a configuration
     * change. {@code PROPORTIONALLY} would scale a debt too, {@code RESET} would refill everybody.
     */
    public static final TokensInheritanceStrategy INHERITANCE = TokensInheritanceStrategy.AS_IS;

    private final List<Bandwidth> bandwidths;
    private final BucketConfiguration configuration;
    private final long smallestCapacity;
    private final boolean initial;
    /** Per bandwidth, in order: capacity, refill tokens, refill period in nanoseconds (the local bucket's arithmetic); never written after construction. */
    final long[] lanes;

    private BucketLimits(List<Bandwidth> bandwidths, BucketConfiguration configuration, boolean initial) {
        this.bandwidths = bandwidths;
        this.configuration = configuration;
        this.initial = initial;
        long min = Long.MAX_VALUE;
        long[] l = new long[3 * bandwidths.size()];
        for (int i = 0; i < bandwidths.size(); i++) {
            Bandwidth b = bandwidths.get(i);
            min = Math.min(min, b.capacity());
            l[3 * i] = b.capacity();
            l[3 * i + 1] = b.refill();
            l[3 * i + 2] = b.period().toNanos();
        }
        this.smallestCapacity = min;
        this.lanes = l;
    }

    /**
     * The limits a filter starts with ({@link #initial()} true).
     *
     * @param bandwidths at least one; a request must fit in all of them
     */
    public static BucketLimits of(List<Bandwidth> bandwidths) {
        List<Bandwidth> copy = List.copyOf(bandwidths);
        if (copy.isEmpty()) throw new IllegalArgumentException("a bucket needs at least one bandwidth");
        return new BucketLimits(copy, configuration(copy), true);
    }

    /**
     * The limits after a change of limits (a reload, a runtime change): this very instance if the
     * bandwidths are the same and it is not {@link #initial()}; an instance sharing this one's
     * configuration but no longer initial if the bandwidths are the same (so local buckets stay
     * untouched and shared ones are checked once); new limits otherwise.
     *
     * @param previous the instance in force before the change, or null
     */
    public static BucketLimits next(BucketLimits previous, List<Bandwidth> bandwidths) {
        if (previous == null || !previous.bandwidths.equals(bandwidths)) {
            List<Bandwidth> copy = List.copyOf(bandwidths);
            if (copy.isEmpty()) throw new IllegalArgumentException("a bucket needs at least one bandwidth");
            return new BucketLimits(copy, configuration(copy), false);
        }
        return previous.initial ? new BucketLimits(previous.bandwidths, previous.configuration, false) : previous;
    }

    /** The bandwidths, in the order {@link QuotaBucket#availablePerBandwidth()} reports them. */
    public List<Bandwidth> bandwidths() {
        return bandwidths;
    }

    /** The smallest capacity: the largest cost a bucket of these limits can ever take. */
    public long smallestCapacity() {
        return smallestCapacity;
    }

    /** True for limits the filter started with, before any change of limits. */
    public boolean initial() {
        return initial;
    }

    /** The bucket4j configuration of these bandwidths (greedy refill: tokens arrive smoothly), built once. */
    public BucketConfiguration configuration() {
        return configuration;
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

    private static BucketConfiguration configuration(List<Bandwidth> limits) {
        var builder = BucketConfiguration.builder();
        for (Bandwidth b : Objects.requireNonNull(limits, "bandwidths")) {
            builder.addLimit(l -> l.capacity(b.capacity()).refillGreedy(b.refill(), b.period()).id(b.name()));
        }
        return builder.build();
    }
}

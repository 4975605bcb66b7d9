package io.quotagate.plans;

import java.time.Duration;
import java.util.Objects;

/**
 * One limit of a bucket, counted by its {@link Algorithm}: for a token bucket (the default), at most
 * {@code capacity} units at once, refilled smoothly at {@code refill} units per {@code period}; for
 * {@link Algorithm#GCRA}, the same admissions kept as one timestamp ({@code capacity} the burst,
 * {@code refill} per {@code period} the rate); for {@link Algorithm#SLIDING_WINDOW}, at most {@code capacity}
 * units in any {@code period} ({@code refill} is {@code capacity}: build one with {@link #slidingWindow}).
 *
 * <p>A plan usually has several: a burst ({@code capacity: 200, refill: 100, period: 10s}) and a
 * daily budget ({@code capacity: 100000, refill: 100000, period: 1d}); a request must fit in all of
 * them. {@code refill} may exceed {@code capacity} (a bucket that refills in less than its period).
 *
 * @param name     a short label used in published headers and metrics ({@code b0}, {@code b1}...
 *                 when the file gives none): {@code [a-z][a-z0-9_-]{0,31}}, so it is safe in a header
 * @param capacity the most units the bucket holds, &gt; 0
 * @param refill   units added per period, &gt; 0
 * @param period   the refill period, &gt; 0 and at most 10 years ({@code 3650d}: nanosecond arithmetic
 *                 on it never overflows)
 * @param algorithm how the limit counts ({@link Algorithm#TOKEN_BUCKET} unless written); a
 *                 {@link Algorithm#SLIDING_WINDOW} limit admits at most {@code capacity} in any {@code period}
 *                 and has {@code refill == capacity}
 */
public record Bandwidth(String name, long capacity, long refill, Duration period, Algorithm algorithm) {
    public Bandwidth {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(period, "period");
        Objects.requireNonNull(algorithm, "algorithm");
        if (capacity <= 0) throw new IllegalArgumentException("capacity must be > 0, was " + capacity);
        if (refill <= 0) throw new IllegalArgumentException("refill must be > 0, was " + refill);
        if (period.isZero() || period.isNegative()) {
            throw new IllegalArgumentException("period must be > 0, was " + period);
        }
        if (period.compareTo(PlansFile.MAX_PERIOD) > 0) {
            throw new IllegalArgumentException("period must be at most " + PlansFile.MAX_PERIOD.toDays()
                    + "d (10 years), was " + period);
        }
        if (algorithm == Algorithm.SLIDING_WINDOW && refill != capacity) {
            throw new IllegalArgumentException("a sliding window takes no refill of its own (it admits at most capacity in"
                    + " any period): refill must equal capacity " + capacity + ", was " + refill);
        }
        if (!FieldCursor.NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("name must be 1-32 characters of a-z 0-9 _ - starting with a letter, was '"
                    + name + "'");
        }
    }

    /** A token bucket's limit ({@link Algorithm#TOKEN_BUCKET}). */
    public Bandwidth(String name, long capacity, long refill, Duration period) {
        this(name, capacity, refill, period, Algorithm.TOKEN_BUCKET);
    }

    /**
     * A GCRA limit: the same admissions as a token bucket of burst {@code burst} refilled at {@code rate} units per
     * {@code period}, kept as one timestamp per key.
     */
    public static Bandwidth gcra(String name, long burst, long rate, Duration period) {
        return new Bandwidth(name, burst, rate, period, Algorithm.GCRA);
    }

    /** A sliding-window limit: at most {@code capacity} units in any {@code period}, whichever window is looked at. */
    public static Bandwidth slidingWindow(String name, long capacity, Duration period) {
        return new Bandwidth(name, capacity, capacity, period, Algorithm.SLIDING_WINDOW);
    }

    /** Nanoseconds an empty bucket of this bandwidth needs to be full again. */
    public long nanosToFill() {
        // capacity / refill periods, computed in double to stay clear of long overflow for 1d periods
        double nanos = (double) capacity * period.toNanos() / refill;
        return nanos >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) Math.ceil(nanos);
    }
}

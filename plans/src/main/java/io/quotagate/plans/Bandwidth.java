package io.quotagate.plans;

import java.time.Duration;
import java.util.Objects;

/**
 * One limit of a token bucket: at most {@code capacity} units at once, refilled smoothly at
 * {@code refill} units per {@code period}.
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
        if (!FieldCursor.NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("name must be 1-32 characters of a-z 0-9 _ - starting with a letter, was '"
                    + name + "'");
        }
    }

    /** A token bucket's limit ({@link Algorithm#TOKEN_BUCKET}). */
    public Bandwidth(String name, long capacity, long refill, Duration period) {
        this(name, capacity, refill, period, Algorithm.TOKEN_BUCKET);
    }

    /** Nanoseconds an empty bucket of this bandwidth needs to be full again. */
    public long nanosToFill() {
        // capacity / refill periods, computed in double to stay clear of long overflow for 1d periods
        double nanos = (double) capacity * period.toNanos() / refill;
        return nanos >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) Math.ceil(nanos);
    }
}

package io.quotagate.filter.internal.admission;

import java.util.concurrent.atomic.AtomicLong;

/**
 * An exponentially weighted moving average of request durations (nanoseconds), lock-free.
 * Each completed request moves the average {@value #WEIGHT} of the way towards its own duration,
 * so the estimate follows a change of workload within about ten requests while one outlier moves it
 * by only a fifth.
 */
final class DurationAverage {
    static final double WEIGHT = 0.2;

    /** The average as {@link Double#doubleToRawLongBits} bits; a negative value means no sample yet. */
    private final AtomicLong bits = new AtomicLong(Double.doubleToRawLongBits(-1));

    void add(long nanos) {
        double sample = Math.max(0, nanos);
        long current;
        long next;
        do {
            current = bits.get();
            double avg = Double.longBitsToDouble(current);
            next = Double.doubleToRawLongBits(avg < 0 ? sample : avg + WEIGHT * (sample - avg));
        } while (!bits.compareAndSet(current, next));
    }

    /** The average, or {@code ifEmpty} before the first sample. */
    long nanos(long ifEmpty) {
        double avg = Double.longBitsToDouble(bits.get());
        return avg < 0 ? ifEmpty : (long) Math.ceil(avg);
    }
}

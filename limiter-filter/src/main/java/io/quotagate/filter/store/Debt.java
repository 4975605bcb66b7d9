package io.quotagate.filter.store;

import java.util.function.LongConsumer;

/**
 * Taking into debt on a bucket4j bucket ({@link QuotaBucket#forceTake}), local or remote. bucket4j refuses
 * a debt whose refill would outlast a long of nanoseconds (292 years): {@code consumeIgnoringRateLimits}
 * throws a plain {@link IllegalArgumentException} and leaves the bucket as it was. Passed on, that
 * exception would reach the request, or, on Redis, pass for an unreadable value whose key is then
 * replaced by a full bucket. {@link #take} takes the most that fits instead: the bucket waits centuries
 * either way.
 */
public final class Debt {
    private Debt() {
    }

    /**
     * Takes {@code units} through {@code consumeIgnoringRateLimits}; if bucket4j refuses that much debt,
     * the most it accepts, in halving chunks (at most about 126 calls, on a refusal only).
     *
     * @param units                    the units to take (none if not positive)
     * @param consumeIgnoringRateLimits bucket4j's operation of that name on the bucket
     */
    public static void take(long units, LongConsumer consumeIgnoringRateLimits) {
        long left = units;
        long chunk = units;
        while (left > 0 && chunk > 0) {
            long c = Math.min(chunk, left);
            try {
                consumeIgnoringRateLimits.accept(c);
                left -= c;
            } catch (IllegalArgumentException overflow) {
                // BucketExceptions.reservationOverflow: of exactly this class, the bucket unchanged
                if (overflow.getClass() != IllegalArgumentException.class) throw overflow;
                chunk = c / 2;
            }
        }
    }
}

package io.quotagate.filter.store;

import java.util.function.LongConsumer;
import java.util.function.LongPredicate;

/**
 * Taking into debt ({@link QuotaBucket#forceTake}), local or remote. A bucket refuses a debt whose refill
 * would outlast a long of nanoseconds (292 years): bucket4j's {@code consumeIgnoringRateLimits} throws a
 * plain {@link IllegalArgumentException} and leaves the bucket as it was, the local bucket answers false.
 * Passed on, that exception would reach the request, or, on Redis, pass for an unreadable value whose key
 * is then replaced by a full bucket. {@link #take} takes the most that fits instead: the bucket waits
 * centuries either way.
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
        takeWhere(units, c -> {
            try {
                consumeIgnoringRateLimits.accept(c);
                return true;
            } catch (IllegalArgumentException overflow) {
                // BucketExceptions.reservationOverflow: of exactly this class, the bucket unchanged
                if (overflow.getClass() != IllegalArgumentException.class) throw overflow;
                return false;
            }
        });
    }

    /**
     * As {@link #take}, through an operation that answers false (taking nothing) where bucket4j's throws.
     *
     * @param units the units to take (none if not positive)
     * @param force takes its argument into debt and answers true, or takes nothing and answers false
     */
    static void takeWhere(long units, LongPredicate force) {
        long left = units;
        long chunk = units;
        while (left > 0 && chunk > 0) {
            long c = Math.min(chunk, left);
            if (force.test(c)) left -= c;
            else chunk = c / 2;
        }
    }
}

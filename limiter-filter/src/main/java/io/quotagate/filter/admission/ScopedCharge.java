package io.quotagate.filter.admission;

import io.quotagate.filter.store.QuotaBucket;

/**
 * The buckets a request is charged in beside its tenant's: its plan's bucket of the user
 * ({@code per-user}) and its route's own ({@code routes[].limits}, per tenant, user or client
 * address). Made only for a request that has such buckets, so other requests allocate nothing.
 *
 * <p>{@link #take} takes the units from each in turn; if one refuses, those already taken go back
 * and the refusal is the one among all the refusing buckets that waits longest, so a client that
 * waits that long finds every one of them able to take it. Confined to the deciding thread until
 * {@link #refund}, which may run later on any thread (the buckets are thread-safe).
 */
final class ScopedCharge {
    /** Not a charge: the request named a user whose id is not valid (a 400, nothing taken). */
    static final ScopedCharge INVALID_USER = new ScopedCharge();

    private final QuotaBucket[] buckets = new QuotaBucket[4];
    private final Reason[] reasons = new Reason[4];
    private final String[] names = new String[4];
    private int size;
    private long charged;

    /** Adds a bucket to charge; {@code name} names its limit in a refusal. */
    void add(QuotaBucket bucket, Reason reason, String name) {
        buckets[size] = bucket;
        reasons[size] = reason;
        names[size] = name;
        size++;
    }

    /**
     * Takes {@code cost} from every bucket, or from none.
     *
     * @return null if every bucket took it; otherwise the longest refusal, nothing held
     */
    Decision.Rejected take(long cost) {
        int taken = 0;
        Decision.Rejected refusal = null;
        try {
            for (int i = 0; i < size; i++) {
                if (refusal == null && buckets[i].tryTake(cost)) {
                    taken++;
                    continue;
                }
                // refused, or after a refusal: only read, for the longest wait
                long wait = buckets[i].nanosToWait(cost);
                if (refusal == null || wait > refusal.nanosToWait()) refusal = new Decision.Rejected(reasons[i], wait, names[i]);
            }
        } catch (RuntimeException | Error storeFailure) {
            giveBack(taken, cost, storeFailure);
            throw storeFailure;
        }
        if (refusal != null) {
            giveBack(taken, cost, null);
            return refusal;
        }
        charged = cost;
        return null;
    }

    /** {@code refusal}, or the refusal of one of these buckets that would wait longer for {@code cost}; nothing taken. */
    Decision.Rejected longest(Decision.Rejected refusal, long cost) {
        for (int i = 0; i < size; i++) {
            long wait = buckets[i].nanosToWait(cost);
            if (wait > refusal.nanosToWait()) refusal = new Decision.Rejected(reasons[i], wait, names[i]);
        }
        return refusal;
    }

    /** Gives back up to what was charged (a request that did not run, or used less). */
    void refund(long units) {
        long back = Math.min(units, charged);
        if (back <= 0) return;
        charged -= back;
        for (int i = 0; i < size; i++) buckets[i].refund(back);
    }

    private void giveBack(int taken, long cost, Throwable failure) {
        for (int i = 0; i < taken; i++) {
            try {
                buckets[i].refund(cost);
            } catch (RuntimeException alsoFailed) {
                if (failure == null) throw alsoFailed;
                failure.addSuppressed(alsoFailed);
            }
        }
    }
}

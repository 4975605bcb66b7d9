package io.quotagate.filter.store;

import io.github.bucket4j.TimeMeter;
import io.quotagate.plans.Algorithm;

import java.math.BigInteger;
import java.util.Arrays;

/**
 * A local {@link QuotaBucket}: bucket4j's greedy-refill arithmetic ({@code BucketState64BitsInteger}: whole
 * tokens, the fraction of the next one carried as a rounding error in nanoseconds), every operation under
 * the bucket's own monitor. {@code MonitorBucketTest} checks each operation against bucket4j's
 * {@code SynchronizedBucket}, which stays the reference.
 *
 * <p><b>Why not bucket4j's own bucket.</b> Its state lives in two more objects (a state object and its
 * {@code long[]}), each a dependent cache miss once thousands of tenants rotate; here the first bandwidth's
 * state is fields of the bucket itself, so a decision touches the bucket and nothing behind it (further
 * bandwidths, rarer, share one array). bucket4j's {@code SynchronizedBucket} also locks a separate
 * {@code ReentrantLock}, two more cold objects ({@code BucketSynchronizationBenchmark}). The clock is read
 * once per operation, under the monitor, so the times one bucket sees never go backwards, and a refusal's
 * wait is that of the very state that refused. One exception, the request path's take: the store reads
 * the clock before its lookup ({@link #take(long, long)}), where the read's latency overlaps the lookup's
 * cache misses instead of following them.
 *
 * <p><b>Other algorithms.</b> Limits with a {@link Algorithm#GCRA} or {@link Algorithm#SLIDING_WINDOW}
 * bandwidth take another path, chosen once per operation by one field of the limits ({@code algorithms},
 * null for token buckets only: the token bucket's path is the same as before). A GCRA lane keeps its
 * theoretical arrival time in the lane's time field, exact to a {@code 1/refill} of a nanosecond (the
 * fraction in the lane's third field); a sliding window's lane keeps {@link BucketLimits#SLOTS} + 1
 * sub-window counters and the newest sub-window's number in the array of further state. See
 * docs/algorithms.md for the arithmetic and {@code AlgorithmReferenceTest} for the reference models.
 */
class MonitorBucket implements QuotaBucket {
    /** Per bandwidth: time of the last refill, tokens (negative in debt), the next token's part in nanoseconds. */
    private static final int REFILLED = 0;
    private static final int SIZE = 1;
    private static final int ERROR = 2;

    /** The limits this bucket is at; read without the monitor by the store's lookup (identity check). */
    private volatile BucketLimits limits;
    private final TimeMeter time;
    /** The first bandwidth's state: fields, so a decision reads no other object. */
    private long refilled0;
    private long size0;
    private long error0;
    /** The further bandwidths' state, three longs each (REFILLED, SIZE, ERROR); null with one bandwidth. */
    private long[] more;

    MonitorBucket(BucketLimits limits, TimeMeter time) {
        this.limits = limits;
        this.time = time;
        long now = time.currentTimeNanos();
        long[] lanes = limits.lanes;
        more = limits.moreLength > 0 ? new long[limits.moreLength] : null;
        for (int i = 0, n = lanes.length / 3; i < n; i++) {
            set(i, REFILLED, now);
            set(i, SIZE, lanes[3 * i]); // starts full
        }
        if (limits.algorithms != null) startOthers(limits, now);
    }

    /** GCRA lanes: arrival time now (full); sliding windows: empty, the newest sub-window the current one. */
    private void startOthers(BucketLimits limits, long now) {
        for (int i = 0; i < limits.algorithms.length; i++) {
            if (limits.algorithms[i] == Algorithm.TOKEN_BUCKET) continue;
            set(i, REFILLED, now);
            set(i, SIZE, 0);
            set(i, ERROR, 0);
            if (limits.algorithms[i] == Algorithm.SLIDING_WINDOW) {
                int w = limits.windowAt[i];
                Arrays.fill(more, w, w + 2 + BucketLimits.SLOTS, 0);
                more[w] = Math.floorDiv(now, BucketLimits.slotNanos(limits.lanes[3 * i + 2]));
            }
        }
    }

    /** The limits this bucket was built with or last moved to. */
    BucketLimits limits() {
        return limits;
    }

    /**
     * Moves the bucket to {@code next}, keeping its tokens ({@link BucketLimits}
     * {@code AS_IS}): each bandwidth of {@code next} takes the state of the bandwidth of the same name,
     * its tokens capped at the new capacity; one without a namesake starts full.
     *
     * @return true if the bandwidths changed (so an idle bucket may need longer to be full)
     */
    synchronized boolean moveTo(BucketLimits next) {
        BucketLimits current = limits;
        if (current == next) return false;
        // limits equal to the current ones may come as another instance sharing the arithmetic
        boolean replace = current.lanes != next.lanes;
        if (replace) {
            long now = time.currentTimeNanos();
            if (current.algorithms == null && next.algorithms == null) replace(current, next, now);
            else replaceOthers(current, next, now);
        }
        limits = next;
        return replace;
    }

    private void replace(BucketLimits current, BucketLimits next, long now) {
        refill(current.lanes, now);
        int n = next.bandwidths().size();
        long[] state = new long[3 * n];
        for (int i = 0; i < n; i++) {
            long capacity = next.lanes[3 * i];
            int old = indexOfName(current, next.bandwidths().get(i).name());
            if (old < 0) {
                state[3 * i + REFILLED] = now;
                state[3 * i + SIZE] = capacity;
                continue;
            }
            state[3 * i + REFILLED] = get(old, REFILLED);
            long size = get(old, SIZE);
            if (size >= capacity) {
                state[3 * i + SIZE] = capacity;
                continue;
            }
            state[3 * i + SIZE] = size;
            // as bucket4j: the scale is truncated to a whole number before it scales the error
            double scale = (double) next.lanes[3 * i + 2] / (double) current.lanes[3 * old + 2];
            long error = (long) scale * get(old, ERROR);
            state[3 * i + ERROR] = Math.min(error, next.lanes[3 * i + 2] - 1);
        }
        more = n > 1 ? Arrays.copyOfRange(state, 3, 3 * n) : null;
        refilled0 = state[REFILLED];
        size0 = state[SIZE];
        error0 = state[ERROR];
    }

    private static int indexOfName(BucketLimits limits, String name) {
        for (int j = 0; j < limits.bandwidths().size(); j++) {
            if (limits.bandwidths().get(j).name().equals(name)) return j;
        }
        return -1;
    }

    @Override
    public synchronized boolean tryTake(long units) {
        positive(units);
        BucketLimits l = limits;
        if (l.algorithms != null) return takeOthers(l, units, time.currentTimeNanos()) == 0;
        long[] lanes = l.lanes;
        refill(lanes, time.currentTimeNanos());
        if (units > minSize(lanes)) return false;
        consume(lanes, units);
        return true;
    }

    /** Takes, or says the wait, under one hold of the monitor: the wait is that of the state that refused. */
    @Override
    public synchronized long take(long units) {
        return takeAt(units, time.currentTimeNanos());
    }

    /**
     * As {@link #take(long)} at {@code now}: a time of this bucket's clock that the caller read before it
     * looked the bucket up ({@link LocalBucketStore#take}). A time before the bucket's last refill refills
     * nothing: the bucket decides on its later state, so its times still never go backwards, and a
     * refusal's wait counts from that state's time, no later than the answer that states it.
     */
    synchronized long take(long units, long now) {
        return takeAt(units, now);
    }

    private long takeAt(long units, long now) {
        positive(units);
        BucketLimits l = limits;
        if (l.algorithms != null) return takeOthers(l, units, now);
        long[] lanes = l.lanes;
        refill(lanes, now);
        if (units > minSize(lanes)) return Math.max(1, delay(lanes, units, true));
        consume(lanes, units);
        return 0;
    }

    /** Takes, into debt if the wait is short enough, or says the wait: one hold of the monitor, so no take slips in. */
    @Override
    public synchronized long reserve(long units, long maxWaitNanos) {
        positive(units);
        BucketLimits l = limits;
        if (l.algorithms != null) return reserveOthers(l, units, maxWaitNanos, time.currentTimeNanos());
        long[] lanes = l.lanes;
        refill(lanes, time.currentTimeNanos());
        if (units <= minSize(lanes)) {
            consume(lanes, units);
            return 0;
        }
        long wait = Math.max(1, delay(lanes, units, true));
        if (wait <= maxWaitNanos) Debt.takeWhere(units, u -> intoDebt(lanes, u));
        return wait;
    }

    /** Read now: a local read costs no more than a note would. */
    @Override
    public synchronized long[] notedPerBandwidth() {
        return availablePerBandwidth();
    }

    @Override
    public synchronized long nanosToWait(long units) {
        positive(units);
        BucketLimits l = limits;
        if (l.algorithms != null) {
            long now = time.currentTimeNanos();
            advance(l, now);
            return units <= minOthers(l, now) ? 0 : delayOthers(l, units, true, now);
        }
        long[] lanes = l.lanes;
        refill(lanes, time.currentTimeNanos());
        return units <= minSize(lanes) ? 0 : delay(lanes, units, true);
    }

    /** Gives {@code units} back to every bandwidth, each capped at its capacity. */
    @Override
    public synchronized void refund(long units) {
        positive(units);
        BucketLimits l = limits;
        if (l.algorithms != null) {
            refundOthers(l, units, time.currentTimeNanos());
            return;
        }
        long[] lanes = l.lanes;
        refill(lanes, time.currentTimeNanos());
        for (int i = 0, n = lanes.length / 3; i < n; i++) {
            long capacity = lanes[3 * i];
            long size = get(i, SIZE);
            long sum = size + units;
            if (sum >= capacity || sum < size) fill(i, capacity);
            else set(i, SIZE, sum);
        }
    }

    /** Takes into debt if need be; a debt of centuries is taken as far as a long of nanoseconds counts it ({@link Debt}). */
    @Override
    public synchronized void forceTake(long units) {
        if (units <= 0) return; // nothing to take
        BucketLimits l = limits;
        if (l.algorithms != null) {
            long now = time.currentTimeNanos();
            advance(l, now);
            Debt.takeWhere(units, u -> intoDebtOthers(l, u, now));
            return;
        }
        long[] lanes = l.lanes;
        refill(lanes, time.currentTimeNanos());
        Debt.takeWhere(units, u -> intoDebt(lanes, u));
    }

    @Override
    public synchronized long available() {
        BucketLimits l = limits;
        if (l.algorithms != null) {
            long now = time.currentTimeNanos();
            advance(l, now);
            return minOthers(l, now);
        }
        long[] lanes = l.lanes;
        refill(lanes, time.currentTimeNanos());
        return minSize(lanes);
    }

    @Override
    public synchronized long[] availablePerBandwidth() {
        BucketLimits l = limits;
        if (l.algorithms != null) {
            long now = time.currentTimeNanos();
            advance(l, now);
            long[] left = new long[l.algorithms.length];
            for (int i = 0; i < left.length; i++) left[i] = left(l, i, now);
            return left;
        }
        long[] lanes = l.lanes;
        refill(lanes, time.currentTimeNanos());
        long[] sizes = new long[lanes.length / 3];
        for (int i = 0; i < sizes.length; i++) sizes[i] = get(i, SIZE);
        return sizes;
    }

    @Override
    public synchronized String toString() {
        long[] state = new long[limits.lanes.length];
        for (int i = 0; i < state.length; i++) state[i] = get(i / 3, i % 3);
        if (limits.windowAt != null) {
            return "MonitorBucket{limits=" + limits + ", [refilled, tokens, error] per bandwidth=" + Arrays.toString(state)
                    + ", windows=" + Arrays.toString(more) + '}';
        }
        return "MonitorBucket{limits=" + limits + ", [refilled, tokens, error] per bandwidth=" + Arrays.toString(state) + '}';
    }


    // ---- GCRA and sliding windows (limits with algorithms other than the token bucket), the monitor held ----

    /** Takes {@code units} from every lane at {@code now}, or says the wait (at least 1). */
    private long takeOthers(BucketLimits l, long units, long now) {
        advance(l, now);
        if (units > minOthers(l, now)) return Math.max(1, delayOthers(l, units, true, now));
        consumeOthers(l, units, now);
        return 0;
    }

    /**
     * As {@link #reserve} for limits with other algorithms: a GCRA lane goes into debt as a token bucket does
     * (its arrival time moves past now); limits with a sliding window never reserve
     * ({@link BucketLimits#canReserve()}): a wait is then answered as a refusal, past {@code maxWaitNanos}.
     */
    private long reserveOthers(BucketLimits l, long units, long maxWaitNanos, long now) {
        advance(l, now);
        if (units <= minOthers(l, now)) {
            consumeOthers(l, units, now);
            return 0;
        }
        long wait = Math.max(1, delayOthers(l, units, true, now));
        if (wait > maxWaitNanos) return wait;
        if (!l.canReserve()) return maxWaitNanos == Long.MAX_VALUE ? Long.MAX_VALUE : Math.max(wait, maxWaitNanos + 1);
        Debt.takeWhere(units, u -> intoDebtOthers(l, u, now));
        return wait;
    }

    /** Brings every lane to {@code now}: refills token buckets, moves sliding windows on (GCRA needs nothing). */
    private void advance(BucketLimits l, long now) {
        long[] lanes = l.lanes;
        Algorithm[] algorithms = l.algorithms;
        for (int i = 0; i < algorithms.length; i++) {
            if (algorithms[i] == Algorithm.TOKEN_BUCKET) {
                refill(i, lanes[3 * i], lanes[3 * i + 1], lanes[3 * i + 2], now);
            } else if (algorithms[i] == Algorithm.SLIDING_WINDOW) {
                roll(l.windowAt[i], BucketLimits.slotNanos(lanes[3 * i + 2]), now);
            }
        }
    }

    /**
     * Moves a sliding window on to the sub-window of {@code now}, emptying the counters of the sub-windows it
     * passes; a time before its newest sub-window changes nothing (decided on the later state).
     */
    private void roll(int w, long slotNanos, long now) {
        long slot = Math.floorDiv(now, slotNanos);
        long newest = more[w];
        if (slot <= newest) return;
        int ring = BucketLimits.SLOTS + 1;
        if (slot - newest >= ring) {
            Arrays.fill(more, w + 1, w + 1 + ring, 0);
        } else {
            for (long s = newest + 1; s <= slot; s++) more[w + 1 + (int) Math.floorMod(s, (long) ring)] = 0;
        }
        more[w] = slot;
    }

    /** The fewest units left over the lanes. */
    private long minOthers(BucketLimits l, long now) {
        long min = Long.MAX_VALUE;
        for (int i = 0; i < l.algorithms.length; i++) min = Math.min(min, left(l, i, now));
        return min;
    }

    /**
     * Units left in lane {@code i} (negative in debt): a token bucket's tokens; a GCRA cell's capacity less
     * the units its arrival time is ahead of now, rounded up; a sliding window's capacity less what its
     * window counts.
     */
    private long left(BucketLimits l, int i, long now) {
        long capacity = l.lanes[3 * i];
        return switch (l.algorithms[i]) {
            case TOKEN_BUCKET -> get(i, SIZE);
            case GCRA -> {
                long tat = get(i, REFILLED);
                long frac = get(i, ERROR);
                if (tat < now || tat == now && frac == 0) yield capacity;
                long ahead0 = tat - now;
                if (ahead0 < 0) yield Long.MIN_VALUE; // past a long
                // units ahead = (tat - now + frac / refill) × refill / period, rounded up
                long ahead = mulAddCeilDiv(ahead0, l.lanes[3 * i + 1], frac, l.lanes[3 * i + 2]);
                yield ahead == Long.MAX_VALUE ? Long.MIN_VALUE : capacity - ahead;
            }
            case SLIDING_WINDOW -> capacity - counted(l.windowAt[i]);
        };
    }

    /** What a sliding window's counters hold: the units of the sub-windows a window ending now touches. */
    private long counted(int w) {
        long sum = 0;
        for (int j = 1; j <= BucketLimits.SLOTS + 1; j++) {
            sum += more[w + j];
            if (sum < 0) return Long.MAX_VALUE;
        }
        return sum;
    }

    private void consumeOthers(BucketLimits l, long units, long now) {
        for (int i = 0; i < l.algorithms.length; i++) {
            switch (l.algorithms[i]) {
                case TOKEN_BUCKET -> set(i, SIZE, get(i, SIZE) - units);
                case GCRA -> later(i, l.lanes[3 * i + 1], l.lanes[3 * i + 2], units, now);
                case SLIDING_WINDOW -> {
                    int w = l.windowAt[i];
                    int at = w + 1 + (int) Math.floorMod(more[w], (long) (BucketLimits.SLOTS + 1));
                    long sum = more[at] + units;
                    more[at] = sum < 0 ? Long.MAX_VALUE : sum;
                }
            }
        }
    }

    /** Moves a GCRA lane's arrival time {@code units × period / refill} past {@code max(it, now)}, exactly. */
    private void later(int i, long refill, long period, long units, long now) {
        long tat = get(i, REFILLED);
        long frac = get(i, ERROR);
        if (tat < now || tat == now && frac == 0) {
            tat = now;
            frac = 0;
        }
        long[] qr = mulDivMod(units, period, refill);
        frac += qr[1];
        long carry = frac >= refill ? 1 : 0;
        if (carry == 1) frac -= refill;
        long sum = tat + qr[0] + carry;
        if (qr[0] == Long.MAX_VALUE || sum < tat) sum = Long.MAX_VALUE; // past a long: never again
        set(i, REFILLED, sum);
        set(i, ERROR, frac);
    }

    /** Takes {@code units} into debt, unless a GCRA or token bucket lane's debt would outlast a long of nanoseconds. */
    private boolean intoDebtOthers(BucketLimits l, long units, long now) {
        for (int i = 0; i < l.algorithms.length; i++) {
            if (l.algorithms[i] != Algorithm.SLIDING_WINDOW && laneDelay(l, i, units, false, now) == Long.MAX_VALUE) {
                return false;
            }
        }
        consumeOthers(l, units, now);
        return true;
    }

    /** Nanoseconds until every lane holds {@code units}; {@link Long#MAX_VALUE} if never or past a long. */
    private long delayOthers(BucketLimits l, long units, boolean capped, long now) {
        long longest = 0;
        for (int i = 0; i < l.algorithms.length; i++) longest = Math.max(longest, laneDelay(l, i, units, capped, now));
        return longest;
    }

    private long laneDelay(BucketLimits l, int i, long units, boolean capped, long now) {
        long capacity = l.lanes[3 * i];
        long refill = l.lanes[3 * i + 1];
        long period = l.lanes[3 * i + 2];
        if (capped && units > capacity) return Long.MAX_VALUE;
        switch (l.algorithms[i]) {
            case TOKEN_BUCKET -> {
                long size = get(i, SIZE);
                if (units <= size) return 0;
                long deficit = units - size;
                if (deficit <= 0) return Long.MAX_VALUE;
                long divided = multiplyOrMax(period, deficit);
                return divided == Long.MAX_VALUE ? (long) ((double) deficit / (double) refill * (double) period)
                        : (divided - get(i, ERROR)) / refill;
            }
            case GCRA -> {
                // fits once now >= TAT - (capacity - units) × period / refill: the wait, rounded up
                BigInteger tat = BigInteger.valueOf(get(i, REFILLED)).multiply(BigInteger.valueOf(refill))
                        .add(BigInteger.valueOf(get(i, ERROR)));
                BigInteger allowed = BigInteger.valueOf(capacity).subtract(BigInteger.valueOf(units))
                        .multiply(BigInteger.valueOf(period));
                BigInteger wait = tat.subtract(allowed).subtract(BigInteger.valueOf(now).multiply(BigInteger.valueOf(refill)));
                if (wait.signum() <= 0) return 0;
                BigInteger[] qr = wait.divideAndRemainder(BigInteger.valueOf(refill));
                BigInteger up = qr[1].signum() == 0 ? qr[0] : qr[0].add(BigInteger.ONE);
                return up.bitLength() >= 63 ? Long.MAX_VALUE : up.longValue();
            }
            default -> {
                // the window lets go of its oldest sub-windows in turn: fits once enough of them are gone
                int w = l.windowAt[i];
                long sum = counted(w);
                if (sum <= capacity - units) return 0;
                if (units > capacity) return Long.MAX_VALUE;
                long slotNanos = BucketLimits.slotNanos(period);
                long newest = more[w];
                int ring = BucketLimits.SLOTS + 1;
                for (long s = newest - BucketLimits.SLOTS; s <= newest; s++) {
                    sum -= more[w + 1 + (int) Math.floorMod(s, (long) ring)];
                    if (sum <= capacity - units) {
                        // sub-window s leaves the window once the current one is s + SLOTS + 1
                        return Math.max(0, (s + ring) * slotNanos - now);
                    }
                }
                return Long.MAX_VALUE;
            }
        }
    }

    /**
     * Gives {@code units} back to every lane: a token bucket's tokens and a GCRA cell's arrival time up to
     * full; a sliding window's counters from the oldest sub-window on (an older one leaves the window first, so
     * what stays counted never leaves earlier than the units given back would have).
     */
    private void refundOthers(BucketLimits l, long units, long now) {
        advance(l, now);
        for (int i = 0; i < l.algorithms.length; i++) {
            long capacity = l.lanes[3 * i];
            switch (l.algorithms[i]) {
                case TOKEN_BUCKET -> {
                    long size = get(i, SIZE);
                    long sum = size + units;
                    if (sum >= capacity || sum < size) fill(i, capacity);
                    else set(i, SIZE, sum);
                }
                case GCRA -> {
                    long refill = l.lanes[3 * i + 1];
                    long[] qr = mulDivMod(units, l.lanes[3 * i + 2], refill);
                    long tat = get(i, REFILLED);
                    long frac = get(i, ERROR) - qr[1];
                    if (frac < 0) {
                        frac += refill;
                        tat--;
                    }
                    tat = qr[0] == Long.MAX_VALUE ? Long.MIN_VALUE : tat - qr[0];
                    if (tat < now || tat > get(i, REFILLED)) { // full (or past a long)
                        tat = now;
                        frac = 0;
                    }
                    set(i, REFILLED, tat);
                    set(i, ERROR, frac);
                }
                case SLIDING_WINDOW -> {
                    int w = l.windowAt[i];
                    long newest = more[w];
                    long left = units;
                    int ring = BucketLimits.SLOTS + 1;
                    for (long s = newest - BucketLimits.SLOTS; s <= newest && left > 0; s++) {
                        int at = w + 1 + (int) Math.floorMod(s, (long) ring);
                        long back = Math.min(left, more[at]);
                        more[at] -= back;
                        left -= back;
                    }
                }
            }
        }
    }

    /**
     * Moves to limits of which one at least has another algorithm than the token bucket: a lane whose
     * bandwidth (by name) kept its algorithm and figures keeps its state; any other takes the units left of
     * its namesake (capped at its new capacity, a debt staying a debt) as its new algorithm counts them: a
     * token bucket holds them, a GCRA cell's arrival time is ahead of now by the units spent, a sliding
     * window counts the units spent in its current sub-window. A bandwidth new to the bucket starts full.
     */
    private void replaceOthers(BucketLimits current, BucketLimits next, long now) {
        if (current.algorithms == null) refill(current.lanes, now);
        else advance(current, now);
        int n = next.bandwidths().size();
        long[] left = new long[n];
        boolean[] same = new boolean[n];
        int[] old = new int[n];
        for (int i = 0; i < n; i++) {
            old[i] = indexOfName(current, next.bandwidths().get(i).name());
            if (old[i] < 0) continue;
            same[i] = sameArithmetic(current, old[i], next, i);
            left[i] = current.algorithms == null ? get(old[i], SIZE) : left(current, old[i], now);
        }
        // the old state, read before the new one is written
        long[][] kept = new long[n][];
        for (int i = 0; i < n; i++) {
            int o = old[i];
            if (o >= 0 && !same[i] && (current.algorithms == null || current.algorithms[o] == Algorithm.TOKEN_BUCKET)
                    && (next.algorithms == null || next.algorithms[i] == Algorithm.TOKEN_BUCKET)) {
                // token bucket to token bucket: bucket4j's AS_IS, as replace() does
                long capacity = next.lanes[3 * i];
                long size = get(o, SIZE);
                if (size >= capacity) {
                    kept[i] = new long[]{get(o, REFILLED), capacity, 0};
                } else {
                    double scale = (double) next.lanes[3 * i + 2] / (double) current.lanes[3 * o + 2];
                    long error = (long) scale * get(o, ERROR);
                    kept[i] = new long[]{get(o, REFILLED), size, Math.min(error, next.lanes[3 * i + 2] - 1)};
                }
                same[i] = true;
                continue;
            }
            if (!same[i]) continue;
            int w = current.windowAt == null ? -1 : current.windowAt[o];
            kept[i] = new long[3 + (w >= 0 ? 2 + BucketLimits.SLOTS : 0)];
            for (int f = 0; f < 3; f++) kept[i][f] = get(o, f);
            if (w >= 0) System.arraycopy(more, w, kept[i], 3, 2 + BucketLimits.SLOTS);
        }
        more = next.moreLength > 0 ? new long[next.moreLength] : null;
        if (next.algorithms != null) startOthers(next, now);
        for (int i = 0; i < n; i++) {
            long capacity = next.lanes[3 * i];
            Algorithm a = next.algorithms == null ? Algorithm.TOKEN_BUCKET : next.algorithms[i];
            if (a == Algorithm.TOKEN_BUCKET) {
                set(i, REFILLED, now);
                set(i, ERROR, 0);
            }
            if (same[i]) {
                for (int f = 0; f < 3; f++) set(i, f, kept[i][f]);
                if (a == Algorithm.SLIDING_WINDOW) System.arraycopy(kept[i], 3, more, next.windowAt[i], 2 + BucketLimits.SLOTS);
                continue;
            }
            long units = old[i] < 0 ? capacity : Math.min(capacity, left[i]);
            switch (a) {
                case TOKEN_BUCKET -> set(i, SIZE, units);
                case GCRA -> {
                    if (units < capacity) later(i, next.lanes[3 * i + 1], next.lanes[3 * i + 2], spent(capacity, units), now);
                }
                case SLIDING_WINDOW -> {
                    int w = next.windowAt[i];
                    more[w + 1 + (int) Math.floorMod(more[w], (long) (BucketLimits.SLOTS + 1))] = spent(capacity, units);
                }
            }
        }
        refilled0 = get(0, REFILLED);
        size0 = get(0, SIZE);
        error0 = get(0, ERROR);
    }

    /** {@code capacity - left}, saturated: a debt of more than a long counts as a long. */
    private static long spent(long capacity, long left) {
        long s = capacity - left;
        return s < 0 && left < 0 ? Long.MAX_VALUE : Math.max(0, s);
    }

    private static boolean sameArithmetic(BucketLimits a, int i, BucketLimits b, int j) {
        Algorithm x = a.algorithms == null ? Algorithm.TOKEN_BUCKET : a.algorithms[i];
        Algorithm y = b.algorithms == null ? Algorithm.TOKEN_BUCKET : b.algorithms[j];
        if (x != y || x == Algorithm.TOKEN_BUCKET) return false; // a token bucket's move is bucket4j's (AS_IS)
        return a.lanes[3 * i] == b.lanes[3 * j] && a.lanes[3 * i + 1] == b.lanes[3 * j + 1]
                && a.lanes[3 * i + 2] == b.lanes[3 * j + 2];
    }

    /** {@code ceil((a × b + c) / d)} for {@code a, b, c >= 0, d > 0}; {@link Long#MAX_VALUE} if past a long. */
    static long mulAddCeilDiv(long a, long b, long c, long d) {
        long hi = Math.multiplyHigh(a, b);
        long lo = a * b;
        if (hi == 0 && lo >= 0) {
            long sum = lo + c;
            if (sum >= 0) {
                long q = sum / d;
                return q * d == sum ? q : q + 1;
            }
        }
        BigInteger[] qr = BigInteger.valueOf(a).multiply(BigInteger.valueOf(b)).add(BigInteger.valueOf(c))
                .divideAndRemainder(BigInteger.valueOf(d));
        BigInteger up = qr[1].signum() == 0 ? qr[0] : qr[0].add(BigInteger.ONE);
        return up.bitLength() >= 63 ? Long.MAX_VALUE : up.longValue();
    }

    /** {@code {floor(a × b / d), a × b mod d}} for {@code a, b >= 0, d > 0}; the quotient {@link Long#MAX_VALUE} if past a long. */
    static long[] mulDivMod(long a, long b, long d) {
        long hi = Math.multiplyHigh(a, b);
        long lo = a * b;
        if (hi == 0 && lo >= 0) return new long[]{lo / d, lo % d};
        BigInteger[] qr = BigInteger.valueOf(a).multiply(BigInteger.valueOf(b)).divideAndRemainder(BigInteger.valueOf(d));
        return new long[]{qr[0].bitLength() >= 63 ? Long.MAX_VALUE : qr[0].longValue(), qr[1].longValue()};
    }

    // ---- bucket4j's greedy arithmetic (BucketState64BitsInteger), the monitor held ----

    private static void positive(long units) {
        if (units <= 0) throw new IllegalArgumentException("units must be > 0, was " + units);
    }

    /** Adds the tokens every bandwidth earned since its last refill, up to its capacity. */
    private void refill(long[] lanes, long now) {
        for (int i = 0, n = lanes.length / 3; i < n; i++) refill(i, lanes[3 * i], lanes[3 * i + 1], lanes[3 * i + 2], now);
    }

    private void refill(int i, long capacity, long tokens, long period, long now) {
        long previous = get(i, REFILLED);
        if (now <= previous) return;
        set(i, REFILLED, now);
        long size = get(i, SIZE);
        if (size >= capacity) return;
        long elapsed = now - previous;
        long grown = size;
        if (elapsed > period) {
            grown += elapsed / period * tokens;
            if (grown > capacity || grown < size) { // full, or past a long: full
                fill(i, capacity);
                return;
            }
            elapsed %= period;
        }
        long error = get(i, ERROR);
        long product = multiplyOrMax(tokens, elapsed);
        long divided = product + error;
        if (divided < 0 || product == Long.MAX_VALUE) {
            grown += (long) ((double) elapsed / (double) period * (double) tokens);
            error = 0;
        } else {
            // enough to fill it, told by a product instead of a quotient (the common case: a bucket used
            // below its rate fills again between two takes), and the bucket ends as the quotient would leave it
            long need = multiplyOrMax(capacity - grown, period);
            if (divided >= need && need != Long.MAX_VALUE) {
                fill(i, capacity);
                return;
            }
            long whole = divided / period;
            if (whole == 0) {
                error = divided;
            } else {
                grown += whole;
                error = divided % period;
            }
        }
        if (grown >= capacity || grown < size) {
            fill(i, capacity);
            return;
        }
        set(i, SIZE, grown);
        set(i, ERROR, error);
    }

    private void fill(int i, long capacity) {
        set(i, SIZE, capacity);
        set(i, ERROR, 0);
    }

    /** The fewest tokens over the bandwidths. */
    private long minSize(long[] lanes) {
        long min = size0;
        for (int i = 1, n = lanes.length / 3; i < n; i++) min = Math.min(min, more[3 * i - 3 + SIZE]);
        return min;
    }

    private void consume(long[] lanes, long units) {
        size0 -= units;
        for (int i = 1, n = lanes.length / 3; i < n; i++) more[3 * i - 3 + SIZE] -= units;
    }

    /** Takes {@code units} whatever the bandwidths hold, unless the debt would outlast a long of nanoseconds. */
    private boolean intoDebt(long[] lanes, long units) {
        if (delay(lanes, units, false) == Long.MAX_VALUE) return false;
        consume(lanes, units);
        return true;
    }

    /**
     * Nanoseconds until every bandwidth holds {@code units}; {@link Long#MAX_VALUE} if never (more than a
     * capacity, when {@code capped}) or past a long.
     */
    private long delay(long[] lanes, long units, boolean capped) {
        long longest = 0;
        for (int i = 0, n = lanes.length / 3; i < n; i++) {
            long capacity = lanes[3 * i];
            long tokens = lanes[3 * i + 1];
            long period = lanes[3 * i + 2];
            long wait;
            long size = get(i, SIZE);
            if (capped && units > capacity) {
                wait = Long.MAX_VALUE;
            } else if (units <= size) {
                wait = 0;
            } else {
                long deficit = units - size;
                if (deficit <= 0) {
                    wait = Long.MAX_VALUE; // past a long
                } else {
                    long divided = multiplyOrMax(period, deficit);
                    wait = divided == Long.MAX_VALUE ? (long) ((double) deficit / (double) tokens * (double) period)
                            : (divided - get(i, ERROR)) / tokens;
                }
            }
            longest = Math.max(longest, wait);
        }
        return longest;
    }

    /**
     * {@code x * y}, or {@link Long#MAX_VALUE} if that is past a long (bucket4j's rule), told by the product's
     * high half (one multiplication) where bucket4j divides back.
     */
    private static long multiplyOrMax(long x, long y) {
        long r = x * y;
        return Math.multiplyHigh(x, y) == r >> 63 ? r : Long.MAX_VALUE;
    }

    private long get(int lane, int field) {
        if (lane == 0) {
            return field == REFILLED ? refilled0 : field == SIZE ? size0 : error0;
        }
        return more[3 * lane - 3 + field];
    }

    private void set(int lane, int field, long value) {
        if (lane == 0) {
            if (field == REFILLED) refilled0 = value;
            else if (field == SIZE) size0 = value;
            else error0 = value;
        } else {
            more[3 * lane - 3 + field] = value;
        }
    }
}

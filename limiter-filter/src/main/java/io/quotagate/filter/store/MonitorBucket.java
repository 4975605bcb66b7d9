package io.quotagate.filter.store;

import io.github.bucket4j.TimeMeter;

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
        more = lanes.length > 3 ? new long[lanes.length - 3] : null;
        for (int i = 0, n = lanes.length / 3; i < n; i++) {
            set(i, REFILLED, now);
            set(i, SIZE, lanes[3 * i]); // starts full
        }
    }

    /** The limits this bucket was built with or last moved to. */
    BucketLimits limits() {
        return limits;
    }

    /**
     * Moves the bucket to {@code next}, keeping its tokens ({@link BucketLimits#INHERITANCE}, bucket4j's
     * {@code AS_IS}): each bandwidth of {@code next} takes the state of the bandwidth of the same name,
     * its tokens capped at the new capacity; one without a namesake starts full.
     *
     * @return true if the bandwidths changed (so an idle bucket may need longer to be full)
     */
    synchronized boolean moveTo(BucketLimits next) {
        BucketLimits current = limits;
        if (current == next) return false;
        // limits equal to the current ones may come as another instance sharing the configuration
        boolean replace = current.configuration() != next.configuration();
        if (replace) replace(current, next, time.currentTimeNanos());
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
        long[] lanes = limits.lanes;
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
        long[] lanes = limits.lanes;
        refill(lanes, now);
        if (units > minSize(lanes)) return Math.max(1, delay(lanes, units, true));
        consume(lanes, units);
        return 0;
    }

    /** Takes, into debt if the wait is short enough, or says the wait: one hold of the monitor, so no take slips in. */
    @Override
    public synchronized long reserve(long units, long maxWaitNanos) {
        positive(units);
        long[] lanes = limits.lanes;
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
        long[] lanes = limits.lanes;
        refill(lanes, time.currentTimeNanos());
        return units <= minSize(lanes) ? 0 : delay(lanes, units, true);
    }

    /** Gives {@code units} back to every bandwidth, each capped at its capacity. */
    @Override
    public synchronized void refund(long units) {
        positive(units);
        long[] lanes = limits.lanes;
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
        long[] lanes = limits.lanes;
        refill(lanes, time.currentTimeNanos());
        Debt.takeWhere(units, u -> intoDebt(lanes, u));
    }

    @Override
    public synchronized long available() {
        long[] lanes = limits.lanes;
        refill(lanes, time.currentTimeNanos());
        return minSize(lanes);
    }

    @Override
    public synchronized long[] availablePerBandwidth() {
        long[] lanes = limits.lanes;
        refill(lanes, time.currentTimeNanos());
        long[] sizes = new long[lanes.length / 3];
        for (int i = 0; i < sizes.length; i++) sizes[i] = get(i, SIZE);
        return sizes;
    }

    @Override
    public synchronized String toString() {
        long[] state = new long[limits.lanes.length];
        for (int i = 0; i < state.length; i++) state[i] = get(i / 3, i % 3);
        return "MonitorBucket{limits=" + limits + ", [refilled, tokens, error] per bandwidth=" + Arrays.toString(state) + '}';
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

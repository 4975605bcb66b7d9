package io.quotagate.filter.store;

import io.github.bucket4j.BucketListener;
import io.github.bucket4j.EstimationProbe;
import io.github.bucket4j.MathType;
import io.github.bucket4j.TimeMeter;
import io.github.bucket4j.local.ThreadUnsafeBucket;

/**
 * A local {@link QuotaBucket}: bucket4j's own bucket arithmetic ({@link ThreadUnsafeBucket}), every
 * operation of ours under the bucket's own monitor. It behaves as bucket4j's {@code SynchronizedBucket},
 * which locks a separate {@code ReentrantLock}: with thousands of tenants in rotation, that lock and its
 * inner state are two more objects per decision that are cold in the CPU caches, and they showed in the
 * bench's profile ({@code BucketSynchronizationBenchmark}). The clock is read under the monitor, so the
 * times one bucket sees never go backwards.
 *
 * <p>It extends bucket4j's class (rather than holding one) for the same reason: one object less per
 * decision. Its bucket4j methods are unlocked, but nobody outside this package can reach them: the
 * store hands out {@link QuotaBucket}, whose every method here takes the monitor. So a bucket4j
 * release that adds a method adds no unlocked path.
 */
class MonitorBucket extends ThreadUnsafeBucket implements QuotaBucket {
    /** The limits this bucket is at; read without the monitor by the store's lookup (identity check). */
    private volatile BucketLimits limits;

    MonitorBucket(BucketLimits limits, TimeMeter timeMeter) {
        super(limits.configuration(), MathType.INTEGER_64_BITS, timeMeter, BucketListener.NOPE);
        this.limits = limits;
    }

    /** The limits this bucket was built with or last moved to. */
    BucketLimits limits() {
        return limits;
    }

    /**
     * Moves the bucket to {@code next}, keeping its tokens ({@link BucketLimits#INHERITANCE}).
     *
     * @return true if the configuration changed (so an idle bucket may need longer to be full)
     */
    synchronized boolean moveTo(BucketLimits next) {
        BucketLimits current = limits;
        if (current == next) return false;
        // limits equal to the current ones may come as another instance sharing the configuration
        boolean replace = current.configuration() != next.configuration();
        if (replace) replaceConfiguration(next.configuration(), BucketLimits.INHERITANCE);
        limits = next;
        return replace;
    }

    @Override
    public synchronized boolean tryTake(long units) {
        return tryConsume(units);
    }

    /** Takes, or says the wait, under one hold of the monitor: the wait is that of the state that refused. */
    @Override
    public synchronized long take(long units) {
        if (tryConsume(units)) return 0;
        EstimationProbe probe = estimateAbilityToConsume(units);
        return Math.max(1, probe.canBeConsumed() ? 0 : probe.getNanosToWaitForRefill());
    }

    /** Takes, into debt if the wait is short enough, or says the wait: one hold of the monitor, so no take slips in. */
    @Override
    public synchronized long reserve(long units, long maxWaitNanos) {
        if (tryConsume(units)) return 0;
        EstimationProbe probe = estimateAbilityToConsume(units);
        long wait = Math.max(1, probe.canBeConsumed() ? 0 : probe.getNanosToWaitForRefill());
        if (wait > maxWaitNanos) return wait;
        Debt.take(units, this::consumeIgnoringRateLimits);
        return wait;
    }

    /** Read now: a local read costs no more than a note would. */
    @Override
    public synchronized long[] notedPerBandwidth() {
        return availablePerBandwidth();
    }

    @Override
    public synchronized long nanosToWait(long units) {
        EstimationProbe probe = estimateAbilityToConsume(units);
        return probe.canBeConsumed() ? 0 : probe.getNanosToWaitForRefill();
    }

    @Override
    public synchronized void refund(long units) {
        addTokens(units);
    }

    /** Takes into debt if need be; a debt of centuries is taken as far as bucket4j can count it ({@link Debt}). */
    @Override
    public synchronized void forceTake(long units) {
        Debt.take(units, this::consumeIgnoringRateLimits);
    }

    @Override
    public synchronized long available() {
        return getAvailableTokens();
    }

    @Override
    public synchronized long[] availablePerBandwidth() {
        return asVerbose().getAvailableTokens().getDiagnostics().getAvailableTokensPerEachBandwidth();
    }

    @Override
    public synchronized String toString() {
        return super.toString();
    }
}

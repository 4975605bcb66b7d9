package io.quotagate.filter.store;

import io.github.bucket4j.Bucket;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.BucketListener;
import io.github.bucket4j.ConsumptionProbe;
import io.github.bucket4j.EstimationProbe;
import io.github.bucket4j.MathType;
import io.github.bucket4j.Nothing;
import io.github.bucket4j.TimeMeter;
import io.github.bucket4j.TokensInheritanceStrategy;
import io.github.bucket4j.VerboseResult;
import io.github.bucket4j.local.SynchronizationStrategy;
import io.github.bucket4j.local.ThreadUnsafeBucket;

/**
 * bucket4j's own bucket arithmetic ({@link ThreadUnsafeBucket}), every operation under the bucket's
 * own monitor. It behaves as bucket4j's {@code SynchronizedBucket}, which locks a separate
 * {@code ReentrantLock}: with thousands of tenants in rotation, that lock and its inner state are two
 * more objects per decision that are cold in the CPU caches, and they showed in the bench's profile.
 * The clock is read under the monitor, so the times one bucket sees never go backwards.
 */
class MonitorBucket extends ThreadUnsafeBucket {

    MonitorBucket(BucketConfiguration configuration, TimeMeter timeMeter) {
        super(configuration, MathType.INTEGER_64_BITS, timeMeter, BucketListener.NOPE);
    }

    /** Listeners are not used by the stores; a listenable view would share the state without the monitor. */
    @Override
    public Bucket toListenable(BucketListener listener) {
        throw new UnsupportedOperationException("quotagate's local buckets take no listener");
    }

    @Override
    public SynchronizationStrategy getSynchronizationStrategy() {
        return SynchronizationStrategy.SYNCHRONIZED;
    }

    @Override
    protected synchronized long consumeAsMuchAsPossibleImpl(long limit) {
        return super.consumeAsMuchAsPossibleImpl(limit);
    }

    @Override
    protected synchronized boolean tryConsumeImpl(long tokensToConsume) {
        return super.tryConsumeImpl(tokensToConsume);
    }

    @Override
    protected synchronized ConsumptionProbe tryConsumeAndReturnRemainingTokensImpl(long tokensToConsume) {
        return super.tryConsumeAndReturnRemainingTokensImpl(tokensToConsume);
    }

    @Override
    protected synchronized EstimationProbe estimateAbilityToConsumeImpl(long tokensToEstimate) {
        return super.estimateAbilityToConsumeImpl(tokensToEstimate);
    }

    @Override
    protected synchronized long reserveAndCalculateTimeToSleepImpl(long tokensToConsume, long waitIfBusyNanosLimit) {
        return super.reserveAndCalculateTimeToSleepImpl(tokensToConsume, waitIfBusyNanosLimit);
    }

    @Override
    protected synchronized VerboseResult<Long> reserveAndCalculateTimeToSleepVerboseImpl(long tokensToConsume,
                                                                                        long maxWaitTimeNanos) {
        return super.reserveAndCalculateTimeToSleepVerboseImpl(tokensToConsume, maxWaitTimeNanos);
    }

    @Override
    protected synchronized long consumeIgnoringRateLimitsImpl(long tokensToConsume) {
        return super.consumeIgnoringRateLimitsImpl(tokensToConsume);
    }

    @Override
    protected synchronized VerboseResult<Long> consumeAsMuchAsPossibleVerboseImpl(long limit) {
        return super.consumeAsMuchAsPossibleVerboseImpl(limit);
    }

    @Override
    protected synchronized VerboseResult<Boolean> tryConsumeVerboseImpl(long tokensToConsume) {
        return super.tryConsumeVerboseImpl(tokensToConsume);
    }

    @Override
    protected synchronized VerboseResult<ConsumptionProbe> tryConsumeAndReturnRemainingTokensVerboseImpl(long tokensToConsume) {
        return super.tryConsumeAndReturnRemainingTokensVerboseImpl(tokensToConsume);
    }

    @Override
    protected synchronized VerboseResult<EstimationProbe> estimateAbilityToConsumeVerboseImpl(long tokensToEstimate) {
        return super.estimateAbilityToConsumeVerboseImpl(tokensToEstimate);
    }

    @Override
    protected synchronized VerboseResult<Long> getAvailableTokensVerboseImpl() {
        return super.getAvailableTokensVerboseImpl();
    }

    @Override
    protected synchronized VerboseResult<Nothing> addTokensVerboseImpl(long tokensToAdd) {
        return super.addTokensVerboseImpl(tokensToAdd);
    }

    @Override
    protected synchronized VerboseResult<Nothing> forceAddTokensVerboseImpl(long tokensToAdd) {
        return super.forceAddTokensVerboseImpl(tokensToAdd);
    }

    @Override
    protected synchronized VerboseResult<Nothing> resetVerboseImpl() {
        return super.resetVerboseImpl();
    }

    @Override
    protected synchronized VerboseResult<Nothing> replaceConfigurationVerboseImpl(BucketConfiguration configuration,
                                                                                TokensInheritanceStrategy inheritance) {
        return super.replaceConfigurationVerboseImpl(configuration, inheritance);
    }

    @Override
    protected synchronized VerboseResult<Long> consumeIgnoringRateLimitsVerboseImpl(long tokensToConsume) {
        return super.consumeIgnoringRateLimitsVerboseImpl(tokensToConsume);
    }

    @Override
    protected synchronized void addTokensImpl(long tokensToAdd) {
        super.addTokensImpl(tokensToAdd);
    }

    @Override
    protected synchronized void forceAddTokensImpl(long tokensToAdd) {
        super.forceAddTokensImpl(tokensToAdd);
    }

    @Override
    public synchronized void reset() {
        super.reset();
    }

    @Override
    public synchronized long getAvailableTokens() {
        return super.getAvailableTokens();
    }

    @Override
    protected synchronized void replaceConfigurationImpl(BucketConfiguration newConfiguration,
                                                         TokensInheritanceStrategy tokensInheritanceStrategy) {
        super.replaceConfigurationImpl(newConfiguration, tokensInheritanceStrategy);
    }

    @Override
    public synchronized String toString() {
        return super.toString();
    }
}

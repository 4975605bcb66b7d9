package io.quotagate.filter.redis;

import io.github.bucket4j.EstimationProbe;
import io.github.bucket4j.distributed.BucketProxy;
import io.quotagate.filter.store.BucketLimits;
import io.quotagate.filter.store.QuotaBucket;

/** A bucket in Redis: bucket4j's proxy (two round trips per operation, or fewer with an optimisation). */
final class RemoteBucket implements QuotaBucket {
    private final BucketProxy proxy;

    RemoteBucket(BucketProxy proxy) {
        this.proxy = proxy;
    }

    /** The proxy, for sending the units a local allowance admitted. */
    BucketProxy proxy() {
        return proxy;
    }

    /** Moves the Redis bucket to {@code limits}, keeping its tokens (AS_IS: repeating it changes nothing). */
    void moveTo(BucketLimits limits) {
        proxy.replaceConfiguration(limits.configuration(), BucketLimits.INHERITANCE);
    }

    @Override
    public boolean tryTake(long units) {
        return proxy.tryConsume(units);
    }

    @Override
    public long nanosToWait(long units) {
        EstimationProbe probe = proxy.estimateAbilityToConsume(units);
        return probe.canBeConsumed() ? 0 : probe.getNanosToWaitForRefill();
    }

    @Override
    public void refund(long units) {
        proxy.addTokens(units);
    }

    @Override
    public void forceTake(long units) {
        proxy.consumeIgnoringRateLimits(units);
    }

    @Override
    public long available() {
        return proxy.getAvailableTokens();
    }

    @Override
    public long[] availablePerBandwidth() {
        return proxy.asVerbose().getAvailableTokens().getDiagnostics().getAvailableTokensPerEachBandwidth();
    }
}

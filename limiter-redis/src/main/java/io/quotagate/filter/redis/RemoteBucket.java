package io.quotagate.filter.redis;

import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.TokensInheritanceStrategy;
import io.github.bucket4j.EstimationProbe;
import io.github.bucket4j.VerboseBucket;
import io.github.bucket4j.VerboseResult;
import io.github.bucket4j.distributed.BucketProxy;
import io.github.bucket4j.distributed.remote.CommandResult;
import io.github.bucket4j.distributed.remote.RemoteVerboseResult;
import io.github.bucket4j.distributed.remote.commands.EstimateAbilityToConsumeCommand;
import io.quotagate.filter.store.BucketLimits;
import io.quotagate.filter.store.Debt;
import io.quotagate.plans.Algorithm;
import io.quotagate.plans.Bandwidth;

import java.util.List;

/**
 * A bucket in Redis under a local allowance: bucket4j's proxy, with its delaying optimisation (which
 * batches: a synchronisation is a GET and a compare-and-swap script, for all the units admitted since).
 *
 * <p>Every operation also notes the bucket's tokens as it saw them ({@link Seen}: bucket4j's verbose
 * variant of the same command, computed from the same reply, so no extra round trip). When the key is
 * missing, bucket4j asks for the configuration to create it with ({@link #creation}): a bucket this
 * instance has seen is created as it was then, refilled since, so Redis losing its data (a restart
 * without persistence, {@code FLUSHALL}, a failover to a replica that lagged) hands out no fresh burst
 * and no fresh day; a key that expired after a full refill is created full, as before. Units another
 * instance took since this one last looked, and units decided on the local share during an outage, are
 * not known here: they are the bound's "one extra burst".
 *
 * <p><b>Algorithms.</b> bucket4j keeps token buckets: a {@link Algorithm#GCRA} bandwidth is kept as the token
 * bucket it admits the same requests as; a {@link Algorithm#SLIDING_WINDOW} cannot be kept here: the store
 * keeps limits with one in its script ({@link ScriptBucket}) even with a local allowance.
 */
final class RemoteBucket implements RedisBucket {
    /** Tokens per bandwidth (in the order of the limits) at a time of the Redis buckets' clock. */
    private record Seen(long[] tokens, long atNanos) {
    }

    private final BucketLimits limits;
    private final RedisConnection redis;
    private final String key;
    private final BucketProxy proxy;
    private final VerboseBucket verbose;
    private volatile Seen seen;

    /**
     * @param limits the limits the bucket is created with
     * @param redis  the connection (a link exists)
     * @param key    the bucket's key
     */
    RemoteBucket(BucketLimits limits, RedisConnection redis, String key) {
        for (Bandwidth b : limits.bandwidths()) {
            if (b.algorithm() == Algorithm.SLIDING_WINDOW) {
                throw new IllegalArgumentException("a local allowance keeps token buckets (bucket4j): limit '" + b.name()
                        + "' is a sliding-window; use the store's script (no local-allowance) for it");
            }
        }
        this.limits = limits;
        this.redis = redis;
        this.key = key;
        this.proxy = redis.proxy(key, this::creation);
        this.verbose = proxy.asVerbose();
    }

    /** The proxy, for sending the units a local allowance admitted. */
    BucketProxy proxy() {
        return proxy;
    }

    /** Moves the Redis bucket to {@code limits}, keeping its tokens (AS_IS: repeating it changes nothing). */
    @Override
    public void moveTo(BucketLimits limits) {
        proxy.replaceConfiguration(configuration(limits), TokensInheritanceStrategy.AS_IS);
    }

    @Override
    public boolean tryTake(long units) {
        return noted(verbose.tryConsume(units));
    }

    /**
     * The wait, creating no key: a bucket this instance never saw is looked at on the proxy manager, so a
     * missing one (full, by definition) stays missing; a guest refused before it touched its own bucket
     * writes nothing. A bucket seen before is asked through the proxy (and its local allowance's copy).
     */
    @Override
    public long nanosToWait(long units) {
        EstimationProbe probe;
        if (seen != null) {
            probe = noted(verbose.estimateAbilityToConsume(units));
        } else {
            CommandResult<RemoteVerboseResult<EstimationProbe>> r =
                    redis.look(key, new EstimateAbilityToConsumeCommand(units).asVerbose());
            if (r.isBucketNotFound()) return units <= limits.smallestCapacity() ? 0 : Long.MAX_VALUE;
            probe = noted(r.getData().asLocal());
        }
        return probe.canBeConsumed() ? 0 : probe.getNanosToWaitForRefill();
    }

    @Override
    public void refund(long units) {
        noted(verbose.addTokens(units));
    }

    /** Takes into debt if need be; a debt of centuries is taken as far as bucket4j can count it ({@link Debt}). */
    @Override
    public void forceTake(long units) {
        Debt.take(units, u -> noted(verbose.consumeIgnoringRateLimits(u)));
    }

    @Override
    public long available() {
        return noted(verbose.getAvailableTokens());
    }

    @Override
    public long[] availablePerBandwidth() {
        VerboseResult<Long> r = verbose.getAvailableTokens();
        noted(r);
        return r.getDiagnostics().getAvailableTokensPerEachBandwidth();
    }

    /** The tokens the latest reply showed (no round trip), or read if this instance has seen none. */
    @Override
    public long[] notedPerBandwidth() {
        Seen s = seen;
        return s != null ? s.tokens().clone() : availablePerBandwidth();
    }

    @Override
    public Noted lastSeen() {
        Seen s = seen;
        return s == null ? null : new Noted(s.atNanos(), s.tokens().clone());
    }

    @Override
    public void seed(Noted noted) {
        if (seen == null) seen = new Seen(noted.tokens().clone(), noted.atNanos());
    }

    /** Notes the tokens the reply shows, and returns its value. */
    private <T> T noted(VerboseResult<T> r) {
        seen = new Seen(r.getDiagnostics().getAvailableTokensPerEachBandwidth(), r.getOperationTimeNanos());
        return r.getValue();
    }

    /**
     * The configuration bucket4j creates a missing key with: the limits, each bandwidth holding what it
     * held when this instance last saw it plus the refill since (capped at capacity; a debt counts as
     * empty, as bucket4j starts no bucket in debt), or full if this instance never saw it.
     */
    BucketConfiguration creation() {
        Seen s = seen;
        List<Bandwidth> bandwidths = limits.bandwidths();
        if (s == null || s.tokens().length != bandwidths.size()) return configuration(limits);
        long elapsed = Math.max(0, redis.clock().currentTimeNanos() - s.atNanos());
        var builder = BucketConfiguration.builder();
        for (int i = 0; i < bandwidths.size(); i++) {
            Bandwidth b = bandwidths.get(i);
            double refilled = (double) elapsed * b.refill() / b.period().toNanos();
            long tokens = (long) Math.max(0, Math.min(b.capacity(), s.tokens()[i] + Math.floor(refilled)));
            builder.addLimit(l -> l.capacity(b.capacity()).refillGreedy(b.refill(), b.period()).initialTokens(tokens)
                    .id(b.name()));
        }
        return builder.build();
    }

    /**
     * The bucket4j configuration of these limits (greedy refill: tokens arrive smoothly), each bandwidth a token
     * bucket (a GCRA one admits the same requests).
     */
    static BucketConfiguration configuration(BucketLimits limits) {
        var builder = BucketConfiguration.builder();
        for (Bandwidth b : limits.bandwidths()) {
            builder.addLimit(l -> l.capacity(b.capacity()).refillGreedy(b.refill(), b.period()).id(b.name()));
        }
        return builder.build();
    }
}

package io.quotagate.filter.redis;

import io.github.bucket4j.BlockingBucket;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.BucketListener;
import io.github.bucket4j.ConsumptionProbe;
import io.github.bucket4j.EstimationProbe;
import io.github.bucket4j.SchedulingBucket;
import io.github.bucket4j.TokensInheritanceStrategy;
import io.github.bucket4j.VerboseBucket;
import io.github.bucket4j.VerboseResult;
import io.github.bucket4j.Nothing;
import io.github.bucket4j.distributed.BucketProxy;
import io.quotagate.filter.core.BucketKind;

/**
 * The bucket handed to the admission core by a {@link LettuceBucketStore}: every operation goes to the
 * Redis proxy while Redis is available and to this instance's local share otherwise, so a caller that
 * keeps the bucket (as the admission core keeps the global one) follows outages and recoveries.
 *
 * <p>Supports the non-blocking and verbose operations the admission core uses; the blocking,
 * scheduling and listener views are not offered (they would bypass the failover).
 */
final class FailoverBucket implements Bucket {
    /** This instance's share of the bucket for {@code instances} instances: its local id and configuration. */
    record LocalShare(int instances, String id, BucketConfiguration configuration) {
    }

    private final LettuceBucketStore store;
    private final BucketKind kind;
    private final String id;
    private final String key;
    private final BucketConfiguration configuration;
    /** Built on first use once a connection exists; Lettuce reconnects that same connection. */
    private volatile BucketProxy proxy;
    /** The verbose view (stateless: every call goes through {@link #verbose}). */
    private final VerboseBucket verboseView = new VerboseView();
    /** The last local share used, rebuilt only when the instance count changes. */
    private volatile LocalShare localShare;

    FailoverBucket(LettuceBucketStore store, BucketKind kind, String id, String key, BucketConfiguration configuration) {
        this.store = store;
        this.kind = kind;
        this.id = id;
        this.key = key;
        this.configuration = configuration;
    }

    BucketKind kind() {
        return kind;
    }

    String id() {
        return id;
    }

    BucketConfiguration configuration() {
        return configuration;
    }

    /** The proxy on the store's connection (built once, not per request), or null before the first connect. */
    BucketProxy proxy() {
        BucketProxy p = proxy;
        if (p != null) return p;
        p = store.newProxy(key, configuration);
        if (p != null) proxy = p;
        return p;
    }

    LocalShare localShare() {
        return localShare;
    }

    void localShare(LocalShare share) {
        localShare = share;
    }

    /** The proxy built so far, or null: never builds one (for flushing a dropped bucket). */
    BucketProxy currentProxy() {
        return proxy;
    }

    @Override
    public boolean tryConsume(long tokens) {
        return store.apply(this, b -> b.tryConsume(tokens));
    }

    @Override
    public ConsumptionProbe tryConsumeAndReturnRemaining(long tokens) {
        return store.apply(this, b -> b.tryConsumeAndReturnRemaining(tokens));
    }

    @Override
    public EstimationProbe estimateAbilityToConsume(long tokens) {
        return store.apply(this, b -> b.estimateAbilityToConsume(tokens));
    }

    @Override
    public long consumeIgnoringRateLimits(long tokens) {
        return store.apply(this, b -> b.consumeIgnoringRateLimits(tokens));
    }

    @Override
    public long tryConsumeAsMuchAsPossible() {
        return store.apply(this, Bucket::tryConsumeAsMuchAsPossible);
    }

    @Override
    public long tryConsumeAsMuchAsPossible(long limit) {
        return store.apply(this, b -> b.tryConsumeAsMuchAsPossible(limit));
    }

    @Override
    public void addTokens(long tokens) {
        store.apply(this, b -> {
            b.addTokens(tokens);
            return null;
        });
    }

    @Override
    public void forceAddTokens(long tokens) {
        store.apply(this, b -> {
            b.forceAddTokens(tokens);
            return null;
        });
    }

    @Override
    public void reset() {
        store.apply(this, b -> {
            b.reset();
            return null;
        });
    }

    @Override
    public long getAvailableTokens() {
        return store.apply(this, Bucket::getAvailableTokens);
    }

    @Override
    public void replaceConfiguration(BucketConfiguration newConfiguration, TokensInheritanceStrategy strategy) {
        store.apply(this, b -> {
            b.replaceConfiguration(newConfiguration, strategy);
            return null;
        });
    }

    @Override
    public BlockingBucket asBlocking() {
        throw new UnsupportedOperationException("a quotagate Redis bucket is non-blocking only");
    }

    @Override
    public SchedulingBucket asScheduler() {
        throw new UnsupportedOperationException("a quotagate Redis bucket is non-blocking only");
    }

    /** The verbose view, through the same failover (published rate-limit headers read it). */
    @Override
    public VerboseBucket asVerbose() {
        return verboseView;
    }

    private final class VerboseView implements VerboseBucket {
        @Override
        public VerboseResult<Boolean> tryConsume(long tokens) {
            return verbose(v -> v.tryConsume(tokens));
        }

        @Override
        public VerboseResult<Long> consumeIgnoringRateLimits(long tokens) {
            return verbose(v -> v.consumeIgnoringRateLimits(tokens));
        }

        @Override
        public VerboseResult<ConsumptionProbe> tryConsumeAndReturnRemaining(long tokens) {
            return verbose(v -> v.tryConsumeAndReturnRemaining(tokens));
        }

        @Override
        public VerboseResult<EstimationProbe> estimateAbilityToConsume(long tokens) {
            return verbose(v -> v.estimateAbilityToConsume(tokens));
        }

        @Override
        public VerboseResult<Long> tryConsumeAsMuchAsPossible() {
            return verbose(VerboseBucket::tryConsumeAsMuchAsPossible);
        }

        @Override
        public VerboseResult<Long> tryConsumeAsMuchAsPossible(long limit) {
            return verbose(v -> v.tryConsumeAsMuchAsPossible(limit));
        }

        @Override
        public VerboseResult<Long> getAvailableTokens() {
            return verbose(VerboseBucket::getAvailableTokens);
        }

        @Override
        public VerboseResult<Nothing> addTokens(long tokens) {
            return verbose(v -> v.addTokens(tokens));
        }

        @Override
        public VerboseResult<Nothing> reset() {
            return verbose(VerboseBucket::reset);
        }

        @Override
        public VerboseResult<Nothing> forceAddTokens(long tokens) {
            return verbose(v -> v.forceAddTokens(tokens));
        }

        @Override
        public VerboseResult<Nothing> replaceConfiguration(BucketConfiguration configuration,
                                                           TokensInheritanceStrategy strategy) {
            return verbose(v -> v.replaceConfiguration(configuration, strategy));
        }
    }

    private <T> VerboseResult<T> verbose(java.util.function.Function<VerboseBucket, VerboseResult<T>> op) {
        return store.apply(this, b -> op.apply(b.asVerbose()));
    }

    @Override
    public Bucket toListenable(BucketListener listener) {
        throw new UnsupportedOperationException("listeners would bypass the Redis failover");
    }
}

package io.quotagate.filter.redis;

import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.store.BucketLimits;
import io.quotagate.filter.store.QuotaBucket;

/**
 * The bucket a {@link LettuceBucketStore} hands out for one key at one {@link BucketLimits} instance:
 * every operation goes to Redis while Redis is available and to this instance's local share
 * otherwise ({@link Failover}), so a caller that keeps the bucket (as the admission core keeps the
 * global one) follows outages and recoveries.
 */
final class FailoverBucket implements QuotaBucket {
    private final Failover failover;
    private final BucketKind kind;
    private final String id;
    private final String key;
    private final BucketLimits limits;
    /** Built on first use once a connection exists; Lettuce reconnects that same connection. */
    private volatile RedisBucket remote;
    /**
     * Whether the Redis bucket may be at other limits (this instance's limits changed since start, or
     * it gave this key others before): moved once, by the first operation Redis answers.
     */
    private volatile boolean moveFirst;
    /**
     * The bucket this one replaced for the key (other limits), until this one's Redis bucket is built: if that
     * is kept the other way (bucket4j's or the script's), it is created from what the predecessor saw.
     */
    private volatile FailoverBucket predecessor;
    /** The last local share used, rebuilt only when the instance count changes. */
    private volatile LocalShares.Share share;

    FailoverBucket(Failover failover, BucketKind kind, String id, String key, BucketLimits limits, boolean moveFirst) {
        this.failover = failover;
        this.kind = kind;
        this.id = id;
        this.key = key;
        this.limits = limits;
        this.moveFirst = moveFirst;
    }

    BucketKind kind() {
        return kind;
    }

    String id() {
        return id;
    }

    String key() {
        return key;
    }

    BucketLimits limits() {
        return limits;
    }

    boolean moveFirst() {
        return moveFirst;
    }

    void moved() {
        moveFirst = false;
    }

    LocalShares.Share share() {
        return share;
    }

    void share(LocalShares.Share s) {
        share = s;
    }

    /** The Redis bucket built so far, or null: never builds one (for flushing a dropped bucket). */
    RedisBucket currentRemote() {
        return remote;
    }

    void remote(RedisBucket r) {
        remote = r;
    }

    /** Notes the bucket this one replaced for the key (see {@link #predecessor}). */
    FailoverBucket replacing(FailoverBucket old) {
        predecessor = old;
        return this;
    }

    /** The bucket this one replaced, once (then forgotten), or null. */
    FailoverBucket takePredecessor() {
        FailoverBucket p = predecessor;
        predecessor = null;
        return p;
    }

    @Override
    public boolean tryTake(long units) {
        return failover.apply(this, b -> b.tryTake(units));
    }

    @Override
    public long take(long units) {
        return failover.apply(this, b -> b.take(units));
    }

    /** On Redis's bucket (its script: one atomic call) or this instance's share, as the other operations. */
    @Override
    public long reserve(long units, long maxWaitNanos) {
        return failover.apply(this, b -> b.reserve(units, maxWaitNanos));
    }

    @Override
    public long nanosToWait(long units) {
        return failover.look(this, b -> b.nanosToWait(units));
    }

    @Override
    public void refund(long units) {
        failover.apply(this, b -> {
            b.refund(units);
            return null;
        });
    }

    @Override
    public void forceTake(long units) {
        failover.apply(this, b -> {
            b.forceTake(units);
            return null;
        });
    }

    @Override
    public long available() {
        return failover.apply(this, QuotaBucket::available);
    }

    @Override
    public long[] notedPerBandwidth() {
        return failover.look(this, QuotaBucket::notedPerBandwidth);
    }

    @Override
    public long[] availablePerBandwidth() {
        return failover.apply(this, QuotaBucket::availablePerBandwidth);
    }
}

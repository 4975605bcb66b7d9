package io.quotagate.filter.store;

import io.github.bucket4j.Bucket;
import io.github.bucket4j.BucketConfiguration;
import io.quotagate.filter.core.BucketKind;
import io.quotagate.filter.core.QuotaClock;

/**
 * Where buckets live: in this JVM ({@link #local}) or shared by several instances. The admission core
 * sees only this seam, so every store gives the same behaviour (the store contract test checks it).
 */
public interface BucketStore {

    /**
     * The bucket of this kind and id, created full with {@code configuration} on first use.
     * Implementations must not hand out a fresh bucket for a {@link BucketKind#TENANT} or
     * {@link BucketKind#GLOBAL} id whose old one still had less than its full capacity (that would
     * reset a tenant's limit). {@link BucketKind#GUEST} buckets are bounded separately and may be
     * evicted under a flood of made-up ids; that never touches the other kinds.
     */
    Bucket bucket(BucketKind kind, String id, BucketConfiguration configuration);

    /**
     * Tells the store that a bucket's state changed in a way a take cannot cause (it went into debt,
     * or its configuration was replaced), so a store that drops idle buckets re-times this one.
     */
    default void changed(BucketKind kind, String id) {
        // a shared store keeps no idle-time bookkeeping of its own
    }

    /**
     * How many instances share the quotas of this store: 1 for a local store; for a shared store, the
     * instances seen alive lately (the last known number while the backend is unreachable).
     */
    default int instanceCount() {
        return 1;
    }

    /**
     * This instance's share of a limit that every instance enforces on its own (such as a concurrency
     * cap, or a quota while the shared store is unreachable): {@code limit / instanceCount} rounded
     * down, but at least 1 so that a small limit never blocks an instance completely. The shares add
     * up to at most {@code limit}, except when {@code limit < instanceCount}.
     */
    static long perInstanceShare(long limit, int instanceCount) {
        if (limit <= 0) throw new IllegalArgumentException("limit must be > 0, was " + limit);
        if (instanceCount <= 0) throw new IllegalArgumentException("instanceCount must be > 0, was " + instanceCount);
        return Math.max(1, limit / instanceCount);
    }

    /**
     * An in-memory store: two Caffeine caches, one for assigned tenants and one for guests (unknown
     * tenants and anonymous clients), each holding at most {@code maxTracked} buckets, where a bucket
     * idle long enough to have refilled completely is dropped (a new one would be identical, so expiry
     * loses nothing).
     *
     * @param maxTracked the most buckets kept at once in each of the two tables
     * @param clock      time source of the buckets and of their expiry
     */
    static BucketStore local(int maxTracked, QuotaClock clock) {
        return new LocalBucketStore(maxTracked, clock);
    }
}

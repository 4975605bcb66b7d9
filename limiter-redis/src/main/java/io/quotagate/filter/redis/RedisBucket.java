package io.quotagate.filter.redis;

import io.quotagate.filter.store.BucketLimits;
import io.quotagate.filter.store.QuotaBucket;

/**
 * A bucket in Redis as {@link Failover} runs it: one of the two ways the buckets are kept there, the
 * store's own script ({@link ScriptBucket}, exact decisions) or bucket4j's proxy ({@link RemoteBucket},
 * for a local allowance).
 */
interface RedisBucket extends QuotaBucket {

    /** Moves the Redis bucket to {@code limits}, keeping its tokens (AS_IS: repeating it changes nothing). */
    void moveTo(BucketLimits limits);

    /**
     * The units per bandwidth this instance last saw in the bucket and when (nanoseconds of the store's Redis
     * clock), or null if it saw none.
     */
    Noted lastSeen();

    /**
     * Takes {@code seen} as what this instance last saw of the key: a bucket kept the other way before (a
     * local allowance's bucket4j state, or the script's) that this one replaces is created from it, refilled
     * since, not full.
     */
    void seed(Noted seen);

    /** Units per bandwidth at a time of the store's Redis clock (nanoseconds). */
    record Noted(long atNanos, long[] tokens) {
    }
}

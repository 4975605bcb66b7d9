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
}

package io.quotagate.filter.redis;

import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.store.QuotaClock;
import io.quotagate.filter.store.StoreHealth;

import java.time.Clock;

/**
 * A {@link BucketStore} in Redis, so that every instance of a service enforces one quota. Built on
 * bucket4j's Lettuce compare-and-swap proxies; keys are {@code <prefix>:<kind>:<id>} (one key per
 * bucket, so valid on Redis Cluster) and every key expires once its bucket would have refilled
 * completely. A filter opens one itself when its plans file says {@code store.type: redis} (through
 * {@link RedisStoreProvider}); applications that build their own call {@link #connect}.
 *
 * <p><b>When Redis fails</b> (connection refused, a command slower than {@link RedisSettings#timeout()},
 * the server killed), the store stops calling Redis and answers from local buckets holding
 * {@code 1 / instanceCount} of each quota, where {@code instanceCount} comes from a heartbeat every
 * instance writes to Redis (the last known count is kept during the outage). With
 * {@link RedisSettings.OnFailure#CLOSED} it throws {@link io.quotagate.filter.store.StoreUnavailableException}
 * instead (the filter answers 503). The outage is logged once and counted ({@link #outages()}); a
 * background heartbeat probes Redis every {@link RedisSettings#heartbeat()} and the store returns to
 * Redis as soon as it answers. Compare-and-swap conflicts on a hot key are never an outage.
 *
 * <p>Close it to stop the heartbeat and disconnect.
 */
public interface RedisStore extends BucketStore, StoreHealth, AutoCloseable {

    /**
     * Connects with the system clocks. Never fails because Redis is down: the store then starts in
     * fallback and connects when Redis answers.
     *
     * @param settings   where Redis is and how to use it ({@link RedisSettings#of(String)}, or
     *                   {@link RedisSettings#of(io.quotagate.plans.StoreSpec)} for a plans file's {@code store:})
     * @param maxTracked the most tenants whose bucket proxies (and fallback buckets) are kept in memory
     * @throws IllegalArgumentException if the URI is invalid
     */
    static RedisStore connect(RedisSettings settings, int maxTracked) {
        return connect(settings, maxTracked, Clock.systemUTC(), QuotaClock.system());
    }

    /**
     * Connects with given clocks (tests move them by hand).
     *
     * @param wallClock  this instance's wall clock; the Redis buckets and the calendar periods are told on it
     *                   corrected by its offset to Redis's clock (measured with the heartbeat), so instances
     *                   whose clocks differ still decide on one clock
     * @param localClock time of the local fallback buckets
     */
    static RedisStore connect(RedisSettings settings, int maxTracked, Clock wallClock, QuotaClock localClock) {
        return new LettuceBucketStore(settings, maxTracked, wallClock, localClock);
    }

    /** Whether buckets are in Redis right now (false during an outage, while answering locally). */
    @Override
    boolean available();

    /** Instances sharing the prefix: from the heartbeat set, the last known number while Redis is down. */
    @Override
    int instanceCount();

    /**
     * Buckets this instance moved to other limits in Redis (bucket4j's configuration replacement, keeping
     * tokens): once per bucket after each change of the limits in force. Instances that agree on the
     * limits (see docs/changing-limits.md, "Several instances") add about one per bucket per change, not more.
     */
    long reconfigurations();

    /** This instance's member name in the heartbeat set. */
    String instanceId();

    /** The Redis key of a bucket: {@code <prefix>:<kind>:<id>}. */
    String key(BucketKind kind, String id);

    /** Stops the heartbeat, removes this instance from the heartbeat set (best effort) and disconnects. */
    @Override
    void close();
}

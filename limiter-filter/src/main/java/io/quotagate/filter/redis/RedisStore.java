package io.quotagate.filter.redis;

import io.quotagate.filter.core.QuotaClock;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.plans.StoreSettings;

import java.time.Clock;

/**
 * A {@link BucketStore} in Redis, so that every instance of a service enforces one quota. Built on
 * bucket4j's Lettuce compare-and-swap proxies; keys are {@code <prefix>:<kind>:<id>} (one key per
 * bucket, so valid on Redis Cluster) and every key expires once its bucket would have refilled
 * completely.
 *
 * <p><b>When Redis fails</b> (connection refused, a command slower than {@link StoreSettings#timeout()},
 * the server killed), the store stops calling Redis and answers from local buckets holding
 * {@code 1 / instanceCount} of each quota, where {@code instanceCount} comes from a heartbeat every
 * instance writes to Redis (the last known count is kept during the outage). With
 * {@link StoreSettings.OnFailure#CLOSED} it throws {@link io.quotagate.filter.store.StoreUnavailableException}
 * instead (the filter answers 503). The outage is logged once and counted ({@link #outages()}); a
 * background heartbeat probes Redis every {@link StoreSettings#heartbeat()} and the store returns to
 * Redis as soon as it answers.
 *
 * <p>Needs {@code io.lettuce:lettuce-core} and {@code com.bucket4j:bucket4j_jdk17-lettuce} on the
 * class path (optional dependencies of this module). Close it to stop the heartbeat and disconnect.
 */
public interface RedisStore extends BucketStore, AutoCloseable {

    /**
     * Connects with the system clocks. Never fails because Redis is down: the store then starts in
     * fallback and connects when Redis answers.
     *
     * @param settings   a store of type redis
     * @param maxTracked the most tenants whose bucket proxies (and fallback buckets) are kept in memory
     * @throws IllegalArgumentException if the settings are not of type redis or the URI is invalid
     * @throws IllegalStateException    if Lettuce or bucket4j-lettuce is not on the class path
     */
    static RedisStore connect(StoreSettings settings, int maxTracked) {
        return connect(settings, maxTracked, Clock.systemUTC(), QuotaClock.system());
    }

    /**
     * Connects with given clocks (tests move them by hand).
     *
     * @param wallClock  time of the Redis buckets; every instance sharing a prefix needs a wall clock
     *                   close to the others'
     * @param localClock time of the local fallback buckets
     */
    static RedisStore connect(StoreSettings settings, int maxTracked, Clock wallClock, QuotaClock localClock) {
        try {
            Class.forName("io.lettuce.core.RedisClient", false, RedisStore.class.getClassLoader());
            Class.forName("io.github.bucket4j.redis.lettuce.Bucket4jLettuce", false, RedisStore.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException("store type redis needs io.lettuce:lettuce-core and "
                    + "com.bucket4j:bucket4j_jdk17-lettuce on the class path (missing " + e.getMessage() + ")");
        }
        return new LettuceBucketStore(settings, maxTracked, wallClock, localClock);
    }

    /** Whether buckets are in Redis right now (false during an outage, while answering locally). */
    boolean redisAvailable();

    /** Outages seen since start: each time this instance switched from Redis to local buckets. */
    long outages();

    /**
     * Bucket operations answered from local buckets since start: during outages, and single
     * operations whose compare-and-swap retries ran out under contention.
     */
    long fallbackDecisions();

    /** This instance's member name in the heartbeat set. */
    String instanceId();

    /** The Redis key of a bucket: {@code <prefix>:<kind>:<id>}. */
    String key(io.quotagate.filter.core.BucketKind kind, String id);

    /** Stops the heartbeat, removes this instance from the heartbeat set (best effort) and disconnects. */
    @Override
    void close();
}

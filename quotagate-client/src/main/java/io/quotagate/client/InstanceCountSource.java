package io.quotagate.client;

import io.lettuce.core.RedisClient;

import java.time.Duration;

/**
 * How many instances of the application share one budget. Limiter options describe the whole
 * application; each instance takes {@code value / instances()}. The limiter asks often (at every
 * refill), so an implementation answers from memory.
 *
 * <pre>{@code
 * InstanceCountSource.fixed(3)
 * InstanceCountSource.redisHeartbeat(RedisClient.create("redis://redis:6379"), "billing-api:workers")
 * }</pre>
 */
@FunctionalInterface
public interface InstanceCountSource extends AutoCloseable {
    /** The number of instances now, at least 1 (a smaller answer counts as 1). */
    int instances();

    /** Stops whatever the source runs in the background; nothing by default. */
    @Override
    default void close() {
    }

    /** Always {@code n}. */
    static InstanceCountSource fixed(int n) {
        if (n < 1) throw new IllegalArgumentException("instance count must be >= 1, was " + n);
        return () -> n;
    }

    /**
     * {@link #redisHeartbeat(RedisClient, String, Duration, Duration)} beating every 5 seconds, entries
     * older than 15 seconds dropped.
     */
    static InstanceCountSource redisHeartbeat(RedisClient client, String key) {
        return redisHeartbeat(client, key, Duration.ofSeconds(5), Duration.ofSeconds(15));
    }

    /**
     * Counts the instances alive through a Redis heartbeat (needs Lettuce on the class path): every
     * {@code period} this instance writes its id ({@code host:pid:random}) into the sorted set
     * {@code key} scored by the current time in milliseconds, drops the entries older than {@code ttl},
     * and takes the set's size as the count. An instance that stops beating leaves the count within
     * {@code ttl}. While Redis does not answer, the last known count is kept (and a warning logged once
     * per outage). The first beat happens before this method returns; {@link #close()} removes this
     * instance's entry and closes its connection (the client stays the caller's).
     *
     * @param period how often to beat, &gt; 0 and shorter than {@code ttl}
     * @param ttl    how old an entry may be and still count
     */
    static InstanceCountSource redisHeartbeat(RedisClient client, String key, Duration period, Duration ttl) {
        return new RedisHeartbeat(client, key, period, ttl, System::currentTimeMillis);
    }
}

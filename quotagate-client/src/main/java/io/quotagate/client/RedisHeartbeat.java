package io.quotagate.client;

import io.lettuce.core.Range;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

import java.net.InetAddress;
import java.time.Duration;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * {@link InstanceCountSource#redisHeartbeat}: a sorted set of instance ids scored by the time of their
 * last beat. Each beat adds this instance, drops entries older than the TTL, and counts the rest;
 * the count is kept in memory, so {@link #instances()} never waits for Redis.
 */
final class RedisHeartbeat implements InstanceCountSource {
    private static final System.Logger LOG = System.getLogger(RedisHeartbeat.class.getName());

    private final RedisClient client;
    private final String key;
    private final long ttlMillis;
    private final Duration commandTimeout;
    private final LongSupplier wallMillis;
    private final String id;
    private final ScheduledExecutorService timer;
    private StatefulRedisConnection<String, String> connection;   // guarded by this
    private volatile int count = 1;
    private boolean down;                                          // guarded by this

    RedisHeartbeat(RedisClient client, String key, Duration period, Duration ttl, LongSupplier wallMillis) {
        this.client = Objects.requireNonNull(client, "client");
        this.key = Objects.requireNonNull(key, "key");
        Objects.requireNonNull(period, "period");
        Objects.requireNonNull(ttl, "ttl");
        if (key.isBlank()) throw new IllegalArgumentException("key must not be blank");
        if (period.isNegative() || period.isZero()) throw new IllegalArgumentException("period must be > 0, was " + period);
        if (ttl.compareTo(period) <= 0) throw new IllegalArgumentException("ttl must be longer than period, was " + ttl + " <= " + period);
        this.ttlMillis = ttl.toMillis();
        // a beat must not outlast its period: Redis that does not answer within it is down for this beat
        this.commandTimeout = period.compareTo(Duration.ofSeconds(2)) < 0 ? period : Duration.ofSeconds(2);
        this.wallMillis = wallMillis;
        this.id = host() + ":" + ProcessHandle.current().pid() + ":" + UUID.randomUUID().toString().substring(0, 8);
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "quotagate-client-heartbeat-" + key);
            t.setDaemon(true);
            return t;
        });
        beat();
        long p = period.toNanos();
        timer.scheduleAtFixedRate(this::beat, p, p, TimeUnit.NANOSECONDS);
    }

    @Override
    public int instances() {
        return count;
    }

    /** This instance's id in the set. */
    String id() {
        return id;
    }

    /** One beat: add this instance, drop the stale, count; on a Redis failure keep the last count. */
    synchronized void beat() {
        try {
            if (connection == null) {
                connection = client.connect();
                connection.setTimeout(commandTimeout);
            }
            RedisCommands<String, String> redis = connection.sync();
            long now = wallMillis.getAsLong();
            redis.zadd(key, now, id);
            redis.zremrangebyscore(key, Range.create(Double.NEGATIVE_INFINITY, (double) (now - ttlMillis)));
            long n = redis.zcard(key);
            // an abandoned set disappears with its last instance
            redis.pexpire(key, 2 * ttlMillis);
            count = (int) Math.max(1, Math.min(Integer.MAX_VALUE, n));
            if (down) {
                down = false;
                LOG.log(System.Logger.Level.INFO, "Redis answers again; {0} instances share {1}", count, key);
            }
        } catch (RedisException e) {
            if (!down) {
                down = true;
                LOG.log(System.Logger.Level.WARNING, "Redis is not available for the heartbeat of {0} ({1}); keeping {2} instances",
                        key, e.getMessage(), count);
            }
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
        synchronized (this) {
            if (connection == null) return;
            try {
                connection.sync().zrem(key, id);
            } catch (RedisException e) {
                // the entry expires after the TTL anyway
            } finally {
                connection.close();
                connection = null;
            }
        }
    }

    private static String host() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            return "unknown-host";
        }
    }

    @Override
    public String toString() {
        return "redisHeartbeat(" + key + ", " + id + ")";
    }
}

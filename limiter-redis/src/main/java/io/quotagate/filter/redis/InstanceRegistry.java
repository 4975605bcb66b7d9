package io.quotagate.filter.redis;

import io.lettuce.core.ScriptOutputType;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The instances sharing a prefix: each writes itself into one sorted set ({@code <prefix>:instances})
 * every heartbeat, scored by Redis' own time, and drops the members silent for longer than
 * {@code instance-ttl}. The set's size is the instance count that sizes local shares; the last known
 * count is kept while Redis is unreachable.
 */
final class InstanceRegistry {
    /**
     * One round trip, one key, server time (so instances with skewed clocks agree): announce this
     * instance, forget the silent ones, keep the set itself expiring, count. One key is why it needs no
     * hash tag on Redis Cluster: the script runs whole on the primary owning that key's slot.
     */
    private static final String HEARTBEAT_SCRIPT = """
            local t = redis.call('TIME')
            local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
            local ttl = tonumber(ARGV[2])
            redis.call('ZADD', KEYS[1], now, ARGV[1])
            redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - ttl)
            redis.call('PEXPIRE', KEYS[1], ttl)
            return redis.call('ZCARD', KEYS[1])
            """;

    private final RedisConnection redis;
    private final RedisSettings settings;
    private final String instanceId;
    private final String key;
    private volatile int lastCount = 1;

    InstanceRegistry(RedisConnection redis, RedisSettings settings) {
        this.redis = redis;
        this.settings = settings;
        this.instanceId = hostName() + ":" + ManagementFactory.getRuntimeMXBean().getPid() + ":"
                + UUID.randomUUID().toString().substring(0, 8);
        this.key = settings.prefix() + ":instances";
    }

    /**
     * Announces this instance and reads the count (connecting first if needed): the heartbeat, and the
     * probe that tells an outage is over.
     *
     * @param timeout how long to wait for Redis (off the hot path, so longer than a request's)
     */
    void beat(Duration timeout) throws InterruptedException, ExecutionException, TimeoutException {
        Long count = redis.link().commands().<Long>eval(HEARTBEAT_SCRIPT, ScriptOutputType.INTEGER,
                        new String[]{key}, instanceId.getBytes(StandardCharsets.UTF_8),
                        Long.toString(settings.instanceTtl().toMillis()).getBytes(StandardCharsets.UTF_8))
                .get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        if (count != null && count > 0) lastCount = (int) Math.min(Integer.MAX_VALUE, count);
    }

    /** Instances seen alive at the last heartbeat (at least 1). */
    int count() {
        return Math.max(1, lastCount);
    }

    /** This instance's member name in the set. */
    String instanceId() {
        return instanceId;
    }

    /** Removes this instance from the set (best effort: its entry expires after instance-ttl anyway). */
    void leave() {
        RedisConnection.Link l = redis.current();
        if (l == null) return;
        try {
            l.commands().zrem(key, instanceId.getBytes(StandardCharsets.UTF_8)).get(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException | ExecutionException | TimeoutException e) {
            // the entry expires after instanceTtl
        }
    }

    private static String hostName() {
        try {
            return java.net.InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            return "localhost";
        }
    }
}

package io.quotagate.filter.redis;

import io.lettuce.core.ScriptOutputType;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
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
    private final RedisConnection redis;
    private final RedisSettings settings;
    private final String instanceId;
    private final String key;
    private volatile int lastCount = 1;

    private final RedisClock clock;

    InstanceRegistry(RedisConnection redis, RedisSettings settings, RedisClock clock) {
        this.redis = redis;
        this.settings = settings;
        this.clock = clock;
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
        var commands = redis.link().commands();
        long wallBefore = clock.instantWallNanos();
        long monoBefore = clock.monotonicNanos();
        long sent = System.nanoTime();
        List<Object> reply = LuaScript.HEARTBEAT.<List<Object>>run(commands, ScriptOutputType.MULTI,
                        new String[]{key}, instanceId.getBytes(StandardCharsets.UTF_8),
                        Long.toString(settings.instanceTtl().toMillis()).getBytes(StandardCharsets.UTF_8))
                .get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        long roundTrip = System.nanoTime() - sent;
        long count = (Long) reply.get(0);
        if (count > 0) lastCount = (int) Math.min(Integer.MAX_VALUE, count);
        long redisNanos = (Long) reply.get(1) * 1_000_000_000L + (Long) reply.get(2) * 1_000L;
        clock.sample(wallBefore, monoBefore, roundTrip, redisNanos);
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

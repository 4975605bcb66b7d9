package io.quotagate.filter.redis;

import io.lettuce.core.KeyValue;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.quotagate.filter.store.LimitsChannel;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The shared limits record in Redis: one hash, {@code <prefix>:limits}, with fields {@code version}
 * and {@code body}, never expiring (it is configuration, not a bucket), written only by a script that
 * checks the version and announces the new one on the channel {@code <prefix>:limits:changes} in the
 * same step. One key, so it runs whole on one primary of a cluster; classic publish/subscribe reaches
 * subscribers on every node.
 */
final class RedisLimitsChannel implements LimitsChannel, AutoCloseable {
    /** The version reported for a key that holds something else than a record (a value set by hand). */
    static final long UNREADABLE = -2;
    private static final String REPLACE_SCRIPT = """
            local ok, cur = pcall(redis.call, 'HGET', KEYS[1], 'version')
            local v = 0
            if not ok then v = -2 elseif cur then v = tonumber(cur) or -2 end
            if v ~= tonumber(ARGV[1]) then return -1 end
            if v == -2 then redis.call('DEL', KEYS[1]); v = 0 end
            v = v + 1
            redis.call('HSET', KEYS[1], 'version', tostring(v), 'body', ARGV[2])
            redis.call('PUBLISH', ARGV[3], 'v')
            return v
            """;

    private final RedisConnection redis;
    private final RedisTopology topology;
    private final String key;
    private final String channel;
    private final String instanceId;
    private final Duration timeout;
    private volatile Consumer<String> listener;
    private volatile StatefulRedisPubSubConnection<String, String> pubSub;

    RedisLimitsChannel(RedisConnection redis, RedisTopology topology, RedisSettings settings, String instanceId) {
        this.redis = redis;
        this.topology = topology;
        this.key = settings.prefix() + ":limits";
        this.channel = settings.prefix() + ":limits:changes";
        this.instanceId = instanceId;
        // off the hot path: as patient as the heartbeat's probe
        Duration t = settings.timeout().multipliedBy(4);
        this.timeout = t.compareTo(Duration.ofMillis(250)) > 0 ? t : Duration.ofMillis(250);
    }

    /** The Redis key of the record. */
    String key() {
        return key;
    }

    @Override
    public long version() {
        subscribeIfNeeded();
        byte[] v;
        try {
            v = read(() -> redis.link().commands().hget(key, "version"));
        } catch (WrongType wrongType) {
            return UNREADABLE;
        }
        return v == null ? 0 : parseVersion(v);
    }

    @Override
    public Optional<Versioned> read() {
        List<KeyValue<String, byte[]>> fields;
        try {
            fields = read(() -> redis.link().commands().hmget(key, "version", "body"));
        } catch (WrongType wrongType) {
            return Optional.of(new Versioned(UNREADABLE, "(" + key + " is not a hash)"));
        }
        byte[] version = fields.get(0).getValueOrElse(null);
        byte[] body = fields.get(1).getValueOrElse(null);
        if (version == null && body == null) return Optional.empty();
        long v = version == null ? UNREADABLE : parseVersion(version);
        return Optional.of(new Versioned(v, body == null ? "(no body)" : new String(body, StandardCharsets.UTF_8)));
    }

    @Override
    public long replace(long expected, String body) {
        Long v = await(redis.link().commands().<Long>eval(REPLACE_SCRIPT, ScriptOutputType.INTEGER, new String[]{key},
                Long.toString(expected).getBytes(StandardCharsets.UTF_8), body.getBytes(StandardCharsets.UTF_8),
                channel.getBytes(StandardCharsets.UTF_8)));
        return v == null ? -1 : v;
    }

    @Override
    public void announce(String message) {
        await(redis.link().commands().publish(channel, message.getBytes(StandardCharsets.UTF_8)));
    }

    @Override
    public void listen(Consumer<String> listener) {
        this.listener = listener;
        try {
            subscribeIfNeeded();
        } catch (RuntimeException unreachable) {
            // subscribed at a later version check, once Redis answers
        }
    }

    @Override
    public String instanceId() {
        return instanceId;
    }

    /** Subscribes once a listener is set (Lettuce subscribes again by itself after a reconnect). */
    private synchronized void subscribeIfNeeded() {
        Consumer<String> l = listener;
        if (l == null || pubSub != null) return;
        StatefulRedisPubSubConnection<String, String> c = topology.connectPubSub();
        c.addListener(new RedisPubSubAdapter<>() {
            @Override
            public void message(String from, String message) {
                if (channel.equals(from)) l.accept(message);
            }
        });
        try {
            c.async().subscribe(channel).get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            c.close();
            return;
        } catch (ExecutionException | TimeoutException e) {
            c.close();
            throw new IllegalStateException("subscribing to " + channel + " failed: " + e, e);
        }
        pubSub = c;
    }

    /**
     * A read, sent again after a timeout (at most three tries): the connection's timeout is a request's
     * (tens of milliseconds), which a loaded machine's first commands may exceed; a read repeats safely.
     */
    private <T> T read(Supplier<CompletionStage<T>> command) {
        for (int attempt = 1; ; attempt++) {
            try {
                return await(command.get());
            } catch (IllegalStateException failure) {
                if (attempt >= 3 || !(failure.getCause() instanceof RedisCommandTimeoutException)) {
                    throw failure;
                }
            }
        }
    }

    private <T> T await(CompletionStage<T> command) {
        try {
            return command.toCompletableFuture().get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (ExecutionException e) {
            String m = String.valueOf(e.getCause().getMessage());
            if (m.startsWith("WRONGTYPE")) throw new WrongType();
            throw new IllegalStateException("Redis: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalStateException("Redis did not answer within " + timeout.toMillis() + " ms", e);
        }
    }

    /** A version field that is not a positive number is unreadable: the record is refused, not an outage. */
    private static long parseVersion(byte[] v) {
        try {
            long n = Long.parseLong(new String(v, StandardCharsets.UTF_8));
            return n > 0 ? n : UNREADABLE;
        } catch (NumberFormatException e) {
            return UNREADABLE;
        }
    }

    /** The key holds another type than a hash: the record is unreadable, Redis itself is fine. */
    private static final class WrongType extends RuntimeException {
        WrongType() {
            super(null, null, false, false);
        }
    }

    @Override
    public synchronized void close() {
        StatefulRedisPubSubConnection<String, String> c = pubSub;
        if (c != null) c.close();
        pubSub = null;
    }
}

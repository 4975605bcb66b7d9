package io.quotagate.filter.redis;

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
 *
 * <p>Whoever can write to Redis can write this key, so what is read is checked, in Java and in the
 * scripts alike: the version is compared and written as text, never as a Lua number (a double, which
 * rounds 9223372036854775807 to 9.2233720368548e+18 and then no longer counts); a version that is not
 * {@link LimitsChannel#usable usable}, a key of another type or a hash without a version is damaged; a
 * body longer than {@link LimitsChannel#MAX_RECORD_BYTES} is measured ({@code HSTRLEN}), never read.
 */
final class RedisLimitsChannel implements LimitsChannel, AutoCloseable {
    /** How much of a damaged version is shown in a log line or an error. */
    private static final int SHOWN = 40;

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
        List<Object> reply = readRecord(false);
        String kind = text(reply.get(0));
        if (kind.equals("none")) return 0;
        if (kind.equals("type")) return DAMAGED;
        long v = parseVersion((byte[]) reply.get(1));
        return v > 0 ? v : DAMAGED;
    }

    @Override
    public Optional<Versioned> read() {
        List<Object> reply = readRecord(true);
        String kind = text(reply.get(0));
        if (kind.equals("none")) return Optional.empty();
        if (kind.equals("type")) {
            return Optional.of(Versioned.damaged(DAMAGED, key + " is a " + text(reply.get(1)) + ", not a hash"));
        }
        byte[] version = (byte[]) reply.get(1);
        long v = parseVersion(version);
        if (v < 0) {
            return Optional.of(Versioned.damaged(DAMAGED, key + ": version " + (version == null ? "missing"
                    : shown(version) + " is not a whole number from 1 to " + MAX_VERSION + " in plain digits")));
        }
        long size = (Long) reply.get(2);
        if (size > MAX_RECORD_BYTES) {
            return Optional.of(Versioned.damaged(v, key + ": body of " + size + " bytes, more than the "
                    + MAX_RECORD_BYTES + " a record may have (not read)"));
        }
        if (reply.size() < 4 || reply.get(3) == null) {
            return Optional.of(Versioned.damaged(v, key + ": no body"));
        }
        return Optional.of(Versioned.of(v, new String((byte[]) reply.get(3), StandardCharsets.UTF_8)));
    }

    @Override
    public boolean replace(long expected, long next, String body) {
        if (!LimitsChannel.usable(next) || (LimitsChannel.usable(expected) && next <= expected)
                || !(expected == 0 || expected == DAMAGED || LimitsChannel.usable(expected))) {
            throw new IllegalArgumentException("cannot replace version " + expected + " by " + next);
        }
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        if (bytes.length > MAX_RECORD_BYTES) {
            throw new IllegalArgumentException("a body of " + bytes.length + " bytes, more than the "
                    + MAX_RECORD_BYTES + " a record may have");
        }
        Long done = await(LuaScript.LIMITS_REPLACE.<Long>run(redis.link().commands(), ScriptOutputType.INTEGER,
                new String[]{key}, ascii(expected == DAMAGED ? "damaged" : Long.toString(expected)),
                ascii(Long.toString(next)), bytes, ascii(channel)));
        return done != null && done == 1;
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

    @Override
    public String location() {
        return "the Redis key " + key;
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
            throw new IllegalStateException("Redis: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalStateException("Redis did not answer within " + timeout.toMillis() + " ms", e);
        }
    }

    /** The record, its body only if asked and not too long (one script: version and body agree). */
    private List<Object> readRecord(boolean body) {
        return read(() -> LuaScript.LIMITS_READ.<List<Object>>run(redis.link().commands(), ScriptOutputType.MULTI,
                new String[]{key}, ascii(body ? "1" : "0"), ascii(Integer.toString(MAX_RECORD_BYTES))));
    }

    /**
     * The version as written, if usable: plain decimal digits without sign or leading zero, from 1 to
     * {@link LimitsChannel#MAX_VERSION} (the scripts' rule); -1 if not, or if missing.
     */
    static long parseVersion(byte[] version) {
        if (version == null || version.length == 0 || version.length > 16 || version[0] == '0') return -1;
        long n = 0;
        for (byte b : version) {
            if (b < '0' || b > '9') return -1;
            n = n * 10 + (b - '0');
        }
        return n <= MAX_VERSION ? n : -1;
    }

    /** A damaged version for a log line: quoted, at most {@value #SHOWN} characters, control bytes as '?'. */
    private static String shown(byte[] raw) {
        String text = new String(raw, 0, Math.min(raw.length, SHOWN), StandardCharsets.UTF_8)
                .replaceAll("[\\p{Cntrl}'\\\\]", "?");
        return "'" + text + "'" + (raw.length > SHOWN ? "... (" + raw.length + " bytes)" : "");
    }

    /** A short reply of the read script (bulk strings come as bytes, the values' codec). */
    private static String text(Object reply) {
        return reply instanceof byte[] b ? new String(b, StandardCharsets.UTF_8) : String.valueOf(reply);
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    @Override
    public synchronized void close() {
        StatefulRedisPubSubConnection<String, String> c = pubSub;
        if (c != null) c.close();
        pubSub = null;
    }
}

package io.quotagate.filter.redis;

import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.quotagate.filter.store.BucketLimits;
import io.quotagate.plans.Bandwidth;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.function.Supplier;

/**
 * The store's token buckets in Redis, decided by one Lua script ({@code buckets.lua}): each call reads
 * every key it names, refills it up to now, and takes (or refunds, reads, moves) atomically, so one
 * request costs one round trip whatever the contention, where bucket4j's compare-and-swap costs a
 * {@code GET} and an {@code EVAL} per bucket and retries under contention.
 *
 * <p><b>Whose clock.</b> The calling instance's wall clock (the store's, as bucket4j's proxies use it),
 * sent in microseconds with each call: the same time source whichever way the buckets are kept, and the
 * one tests inject. A bucket's time never goes back: an instance whose clock is behind the last write
 * refills nothing until it catches up, one ahead by {@code d} refills at most {@code d × rate} early
 * (keep the instances' clocks synchronised, as NTP does to a few milliseconds). Lua numbers are doubles:
 * whole microseconds since 1970 are exact below 2^53 (the year 2255); a bucket's tokens are kept as
 * doubles (refill is continuous) and reported rounded down.
 *
 * <p><b>Loading.</b> Sent as {@code EVALSHA} of its SHA-1; a server that does not know it (a restart,
 * a failover, a new cluster node) answers {@code NOSCRIPT}, and the call is sent once more as
 * {@code EVAL}, which loads it.
 *
 * <p><b>Cluster.</b> The keys of one request live in different slots: one call per key, all sent before
 * any reply is awaited (the latency of one round trip); if one refuses, the units the others took go back
 * (a second exchange, on refusals only).
 */
final class BucketScript {
    /** The script's text. */
    static final String TEXT = load();
    /** Its SHA-1, as {@code EVALSHA} names it. */
    static final String SHA = sha1(TEXT);

    /** Take (all or none). */
    static final byte TAKE = 't';
    /** Read the waits for the units; writes nothing. */
    static final byte LOOK = 'l';
    static final byte REFUND = 'r';
    static final byte FORCE = 'f';
    /** Read the tokens; writes nothing. */
    static final byte AVAILABLE = 'a';
    static final byte MOVE = 'm';

    /** What one call found: whether it was done (taken), and per key its wait (nanoseconds) and tokens. */
    record Reply(boolean done, long[] waits, long[][] tokens) {
    }

    private final RedisConnection redis;
    private final ValueRepair values;

    BucketScript(RedisConnection redis, ValueRepair values) {
        this.redis = redis;
        this.values = values;
    }

    /**
     * Runs {@code op} for {@code units} on {@code buckets[0..count)}: one script call, or on a cluster one
     * per key sent together. Notes what each bucket held ({@link ScriptKey#noted}).
     *
     * @param limits the limits to move each bucket to ({@link #MOVE}), or null for the buckets' own
     */
    Reply run(byte op, long units, ScriptKey[] buckets, int count, BucketLimits limits) {
        RedisConnection.Link link = redis.link();
        if (count == 1 || !(link.session().connection() instanceof StatefulRedisClusterConnection<?, ?>)) {
            return parse(await(call(link.commands(), op, units, buckets, 0, count, limits)), buckets, 0, count);
        }
        return acrossSlots(link.commands(), op, units, buckets, count);
    }

    /** One call per key, all sent at once; a take that some refused gives back what the others took. */
    private Reply acrossSlots(RedisClusterAsyncCommands<String, byte[]> commands, byte op, long units,
                              ScriptKey[] buckets, int count) {
        Sent[] sent = new Sent[count];
        for (int i = 0; i < count; i++) sent[i] = call(commands, op, units, buckets, i, 1, null);
        boolean done = true;
        long[] waits = new long[count];
        long[][] tokens = new long[count][];
        RuntimeException failure = null;
        boolean[] took = new boolean[count];
        for (int i = 0; i < count; i++) {
            try {
                Reply one = parse(await(sent[i]), buckets, i, 1);
                took[i] = one.done();
                done &= one.done();
                waits[i] = one.waits()[0];
                tokens[i] = one.tokens()[0];
            } catch (RuntimeException e) {
                if (failure == null) failure = e; else failure.addSuppressed(e);
            }
        }
        if (op == TAKE && (failure != null || !done)) {
            for (int i = 0; i < count; i++) {
                if (!took[i]) continue;
                try {
                    run(REFUND, units, new ScriptKey[]{buckets[i]}, 1, null);
                } catch (RuntimeException e) {
                    if (failure == null) throw e;
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) throw failure;
        return new Reply(done, waits, tokens);
    }

    /** A call sent as EVALSHA, and how to send it as EVAL. */
    private record Sent(RedisFuture<List<Object>> sha, Supplier<RedisFuture<List<Object>>> eval) {
    }

    /** The reply; sent once more as EVAL (which loads the script) if the server did not know it. */
    private List<Object> await(Sent sent) {
        try {
            return redis.await(sent.sha());
        } catch (RedisNoScriptException restartedOrNew) {
            return redis.await(sent.eval().get());
        }
    }

    /** Sends one call as EVALSHA. */
    private Sent call(RedisClusterAsyncCommands<String, byte[]> commands, byte op, long units, ScriptKey[] buckets,
                      int from, int count, BucketLimits limits) {
        long nowMicros = Math.floorDiv(redis.clock().currentTimeNanos(), 1000);
        String[] keys = new String[count];
        byte[][] args = new byte[3 + 2 * count][];
        args[0] = new byte[]{op};
        args[1] = Long.toString(units).getBytes(StandardCharsets.US_ASCII);
        args[2] = Long.toString(nowMicros).getBytes(StandardCharsets.US_ASCII);
        for (int i = 0; i < count; i++) {
            ScriptKey b = buckets[from + i];
            keys[i] = b.key();
            args[3 + 2 * i] = limits == null ? b.spec() : spec(limits);
            args[4 + 2 * i] = b.seen();
        }
        RedisFuture<List<Object>> sha = commands.evalsha(SHA, ScriptOutputType.MULTI, keys, args);
        return new Sent(sha, () -> commands.eval(TEXT, ScriptOutputType.MULTI, keys, args));
    }

    /** The reply of one call on {@code buckets[from..from+count)}. */
    private Reply parse(List<Object> reply, ScriptKey[] buckets, int from, int count) {
        boolean done = (Long) reply.get(0) == 1;
        long now = (Long) reply.get(1);
        long[] waits = new long[count];
        long[][] tokens = new long[count][];
        int at = 2;
        for (int i = 0; i < count; i++) {
            ScriptKey b = buckets[from + i];
            boolean repaired = (Long) reply.get(at) == 1;
            long wait = (Long) reply.get(at + 1);
            int n = ((Long) reply.get(at + 2)).intValue();
            long[] t = new long[n];
            for (int j = 0; j < n; j++) t[j] = (Long) reply.get(at + 3 + j);
            at += 3 + n;
            waits[i] = wait < 0 ? Long.MAX_VALUE : wait == 0 ? 0 : Math.multiplyHigh(wait, 1000) != 0 ? Long.MAX_VALUE
                    : wait * 1000;
            tokens[i] = t;
            b.noted(now, t);
            if (repaired) values.replaced(b.key());
        }
        return new Reply(done, waits, tokens);
    }

    /** The limits as the script reads them: {@code name,capacity,refill,periodMicros|...}. */
    static byte[] spec(BucketLimits limits) {
        StringBuilder s = new StringBuilder();
        for (Bandwidth b : limits.bandwidths()) {
            if (!s.isEmpty()) s.append('|');
            long micros = Math.max(1, b.period().toNanos() / 1000);
            s.append(b.name()).append(',').append(b.capacity()).append(',').append(b.refill()).append(',').append(micros);
        }
        return s.toString().getBytes(StandardCharsets.US_ASCII);
    }

    private static String load() {
        try (InputStream in = BucketScript.class.getResourceAsStream("buckets.lua")) {
            if (in == null) throw new IllegalStateException("buckets.lua missing from limiter-redis");
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String sha1(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}

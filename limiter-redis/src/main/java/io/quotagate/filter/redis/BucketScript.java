package io.quotagate.filter.redis;

import io.lettuce.core.RedisException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.quotagate.filter.store.BucketLimits;
import io.quotagate.filter.store.Probe;
import io.quotagate.plans.Algorithm;
import io.quotagate.plans.Bandwidth;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.LongAdder;

/**
 * The store's token buckets in Redis, decided by one Lua script ({@code buckets.lua}): each call reads
 * every key it names, refills it up to now, and takes (or refunds, reads, moves) atomically, so one
 * request costs one round trip whatever the contention, where bucket4j's compare-and-swap costs a
 * {@code GET} and an {@code EVAL} per bucket and retries under contention.
 *
 * <p><b>Whose clock.</b> Redis's, as each instance knows it: the calling instance's wall clock (the store's,
 * as bucket4j's proxies use it, and the one tests inject) corrected by its measured offset to Redis's clock
 * ({@link RedisClock}), sent in microseconds with each call: the same time source whichever way the buckets
 * are kept. A bucket's time never goes back: an instance behind the last write refills nothing until it
 * catches up, one ahead by {@code d} refills at most {@code d × rate} early; with the correction {@code d}
 * is the offset's error, half a heartbeat's round trip, whatever the instances' own clocks say. Lua numbers are doubles:
 * whole microseconds since 1970 are exact below 2^53 (the year 2255); a bucket's tokens are kept as
 * doubles (refill is continuous) and reported rounded down.
 *
 * <p><b>Loading.</b> As every script of this store ({@link LuaScript#BUCKETS}): loaded at startup, sent
 * as {@code EVALSHA}, and once more as {@code EVAL} after a {@code NOSCRIPT}.
 *
 * <p><b>Combined calls.</b> On single Redis and Sentinel, operations that come while a call is out go
 * together in the next call (each decided on its own, in order): one round trip, one script start and
 * one read and write per key for all of them. At most one combined call is out at a time; one that has
 * no reply within the command timeout is given up, and the next operation starts another.
 *
 * <p><b>Cluster.</b> The keys of one request live in different slots: one call per key, all sent before
 * any reply is awaited (the latency of one round trip); if one refuses, the units the others took go back
 * (a second exchange, on refusals only).
 */
final class BucketScript {
    private static final System.Logger LOG = System.getLogger(RedisStore.class.getName());
    /** Take (all or none). */
    static final byte TAKE = 't';
    /** Read the waits for the units; writes nothing. */
    static final byte LOOK = 'l';
    static final byte REFUND = 'r';
    static final byte FORCE = 'f';
    /** Read the tokens; writes nothing. */
    static final byte AVAILABLE = 'a';
    static final byte MOVE = 'm';
    /**
     * Take (all or none), into debt if every key's wait is at most the operation's max wait
     * ({@code throttle:}); the reply's waits are the request's delay per key.
     */
    static final byte RESERVE = 'w';

    /** The most operations one combined call carries; the rest wait for the next. */
    private static final int MOST_PER_CALL = 64;
    /** The most combined calls out at once. */
    private static final int MOST_OUT = 1;

    /** What one call found: whether it was done (taken), and per key its wait (nanoseconds) and tokens. */
    record Reply(boolean done, long[] waits, long[][] tokens) {
        /**
         * The reply as the store's probe: its waits and the tokens it read, carried, not asked again. A take's
         * waits are 0 when it is done (the script tells a take's waits only when it refuses).
         */
        Probe probe() {
            return new Probe(done, waits, tokens);
        }
    }

    private final RedisConnection redis;
    private final ValueRepair values;
    /** Guards {@link #waiting} and {@link #out}. */
    private final Object lock = new Object();
    /** Operations that came while calls were out, in the order they came. */
    private final ArrayDeque<Op> waiting = new ArrayDeque<>();
    /** The combined calls out (not answered, not given up), at most {@link #MOST_OUT}. */
    private final List<Call> out = new ArrayList<>(MOST_OUT);
    private final LongAdder lateRefunds = new LongAdder();
    private final LongAdder restoredCounters = new LongAdder();
    private final java.util.concurrent.atomic.AtomicLong lastRestoredLog = new java.util.concurrent.atomic.AtomicLong();

    BucketScript(RedisConnection redis, ValueRepair values) {
        this.redis = redis;
        this.values = values;
    }

    /**
     * Runs {@code op} for {@code units} on {@code buckets[0..count)} and waits for the reply. On single
     * Redis and Sentinel, operations that come while a script call is out are sent together in the next
     * one (each decided on its own, in the order they came: the same answers as one call each, for one
     * call, one round trip, and one read and write of each key between them); a move goes alone. On a
     * cluster, one call per key, sent together. Notes what each bucket held ({@link ScriptKey#noted}).
     *
     * @param limits the limits to move each bucket to ({@link #MOVE}), or null for the buckets' own
     */
    Reply run(byte op, long units, ScriptKey[] buckets, int count, BucketLimits limits) {
        return run(op, units, 0, buckets, count, limits);
    }

    /**
     * As {@link #run(byte, long, ScriptKey[], int, BucketLimits)}, with the longest wait a {@link #RESERVE}
     * accepts (other operations ignore it).
     */
    Reply run(byte op, long units, long maxWaitNanos, ScriptKey[] buckets, int count, BucketLimits limits) {
        RedisConnection.Link link = redis.link();
        RedisClusterAsyncCommands<String, byte[]> commands = link.commands();
        boolean cluster = link.session().connection() instanceof StatefulRedisClusterConnection<?, ?>;
        if (cluster && count > 1) return acrossSlots(commands, op, units, maxWaitNanos, buckets, count);
        Op o = new Op(op, units, buckets, 0, count);
        o.maxWaitNanos = maxWaitNanos;
        if (cluster || limits != null) {
            Call alone = new Call(limits);
            alone.add(o);
            o.sent = true;
            send(commands, alone, false);
        } else {
            combine(commands, o);
        }
        return await(o);
    }

    /**
     * The reply of {@code o}: within the command timeout, or {@link RedisConnection#quotaTimeout()} if it
     * counts a calendar quota (a count that bills waits rather than be decided without Redis). An
     * operation given up that was not sent yet never is; one that bills and was sent is watched: if Redis
     * took its units after all, they are given back when the late reply comes, so the count holds what was
     * admitted, not what was refused.
     */
    private Reply await(Op o) {
        boolean bills = o.bills();
        try {
            return redis.await(o, bills ? redis.quotaTimeout() : redis.timeout());
        } catch (RuntimeException timedOut) {
            boolean sent;
            synchronized (lock) {
                sent = o.sent;
                if (!sent) o.cancel(false); // decided without Redis: never sent afterwards
            }
            if (sent && bills && (o.op == TAKE || o.op == RESERVE)) o.thenAccept(late -> {
                if (late.done()) giveBack(o);
            });
            if (sent && !bills) o.cancel(false);
            throw timedOut;
        }
    }

    /**
     * Gives back the units of {@code taken}, a take that Redis did after its request stopped waiting for
     * it (the request was refused): sent from the reply's thread without waiting, logged if it fails.
     */
    private void giveBack(Op taken) {
        Op refund = new Op(REFUND, taken.units, taken.buckets, taken.from, taken.count);
        refund.whenComplete((r, failure) -> {
            if (failure != null) {
                LOG.log(System.Logger.Level.WARNING, "quotagate: could not give back {0} units of a request "
                        + "refused while Redis was slow, which Redis counted later: {1}", taken.units,
                        String.valueOf(failure));
            } else {
                lateRefunds.increment();
            }
        });
        RedisConnection.Link link = redis.link();
        if (link.session().connection() instanceof StatefulRedisClusterConnection<?, ?>) {
            Call alone = new Call(null);
            alone.add(refund);
            refund.sent = true;
            send(link.commands(), alone, false);
        } else {
            combine(link.commands(), refund);
        }
    }

    /**
     * Notes a calendar quota's counter that Redis had lost and the script rebuilt at this instance's floor:
     * counted, and logged at most once a minute (a restart without persistence finds many at once).
     */
    private void restored(String key) {
        restoredCounters.increment();
        long now = System.nanoTime();
        long last = lastRestoredLog.get();
        if (last != 0 && now - last < 60_000_000_000L) return;
        if (!lastRestoredLog.compareAndSet(last, now)) return;
        LOG.log(System.Logger.Level.WARNING, "quotagate: Redis had lost calendar quota counter " + key
                + " (a restart without persistence, FLUSHALL, a failover to a replica that lagged?); rebuilt at "
                + "the units this instance had seen (" + restoredCounters.sum() + " counters rebuilt so far)");
    }

    /** Calendar quota counters Redis had lost, rebuilt at this instance's floor. */
    long restoredCounters() {
        return restoredCounters.sum();
    }

    /** Takes that Redis did after their requests were refused for its slowness, whose units went back. */
    long lateRefunds() {
        return lateRefunds.sum();
    }

    /**
     * Sends {@code o} now, with what waited, unless {@link #MOST_OUT} calls are out; then it goes in the
     * next call sent when one of them is answered. A call out longer than the timeout is given up.
     */
    private void combine(RedisClusterAsyncCommands<String, byte[]> commands, Op o) {
        Call call;
        synchronized (lock) {
            waiting.add(o);
            long now = System.nanoTime();
            long timeout = redis.timeout().toNanos();
            out.removeIf(c -> now - c.sentAt >= timeout);
            if (out.size() >= MOST_OUT) return;
            call = next(now);
        }
        if (call != null) send(commands, call, true);
    }

    /** After combined call {@code answered} came back: sends what waited meanwhile (unless it was given up). */
    private void sendWaiting(RedisClusterAsyncCommands<String, byte[]> commands, Call answered) {
        Call call;
        synchronized (lock) {
            if (!out.remove(answered)) return;
            call = next(System.nanoTime());
        }
        if (call != null) send(commands, call, true);
    }

    /**
     * The next combined call, counted out from {@code now}: the waiting operations in order, skipping one
     * that names a key with other limits (it goes in the call after); null if none waits.
     */
    private Call next(long now) {
        Call call = new Call(null);
        for (Iterator<Op> it = waiting.iterator(); it.hasNext() && call.ops.size() < MOST_PER_CALL; ) {
            Op o = it.next();
            if (o.isDone()) {
                it.remove();
            } else if (call.add(o)) {
                o.sent = true;
                it.remove();
            }
        }
        if (call.ops.isEmpty()) return null;
        call.sentAt = now;
        out.add(call);
        return call;
    }

    /** One call per key, all sent at once; a take that some refused gives back what the others took. */
    private Reply acrossSlots(RedisClusterAsyncCommands<String, byte[]> commands, byte op, long units,
                              long maxWaitNanos, ScriptKey[] buckets, int count) {
        Op[] sent = new Op[count];
        for (int i = 0; i < count; i++) {
            sent[i] = new Op(op, units, buckets, i, 1);
            sent[i].maxWaitNanos = maxWaitNanos;
            Call alone = new Call(null);
            alone.add(sent[i]);
            sent[i].sent = true;
            send(commands, alone, false);
        }
        boolean done = true;
        long[] waits = new long[count];
        long[][] tokens = new long[count][];
        RuntimeException failure = null;
        boolean[] took = new boolean[count];
        for (int i = 0; i < count; i++) {
            try {
                Reply one = await(sent[i]);
                took[i] = one.done();
                done &= one.done();
                waits[i] = one.waits()[0];
                tokens[i] = one.tokens()[0];
            } catch (RuntimeException e) {
                if (failure == null) failure = e; else failure.addSuppressed(e);
            }
        }
        if ((op == TAKE || op == RESERVE) && (failure != null || !done)) {
            for (int i = 0; i < count; i++) {
                if (!took[i]) continue;
                try {
                    // the tokens the request leaves are those after the give-back
                    tokens[i] = run(REFUND, units, new ScriptKey[]{buckets[i]}, 1, null).tokens()[0];
                } catch (RuntimeException e) {
                    if (failure != null) {
                        failure.addSuppressed(e);
                    } else {
                        // Redis refused the request: it stays refused (deciding it without Redis could admit
                        // it); this key keeps the one request's units it took
                        LOG.log(System.Logger.Level.WARNING, "quotagate: could not give back {0} units to {1} "
                                + "after a refused request: {2}", units, buckets[i].key(), String.valueOf(e));
                    }
                }
            }
        }
        if (failure != null) throw failure;
        return new Reply(done, waits, tokens);
    }

    /**
     * Sends the call (see {@link LuaScript#run}) and completes its operations with the reply; then, if it
     * is a {@code combined} call, sends what waited meanwhile.
     */
    private void send(RedisClusterAsyncCommands<String, byte[]> commands, Call call, boolean combined) {
        String[] keys = call.keys();
        byte[][] args = call.args(Math.floorDiv(redis.clock().currentTimeNanos(), 1000));
        try {
            LuaScript.BUCKETS.<List<Object>>run(commands, ScriptOutputType.MULTI, keys, args)
                    .whenComplete((reply, failure) -> answered(commands, call, reply, failure, combined));
        } catch (RuntimeException notSent) {
            answered(commands, call, null, notSent, combined);
        }
    }

    private void answered(RedisClusterAsyncCommands<String, byte[]> commands, Call call, List<Object> reply,
                          Throwable failure, boolean combined) {
        try {
            if (failure != null) {
                Throwable cause = unwrap(failure);
                RuntimeException e = cause instanceof RuntimeException re ? re
                        : new RedisException(String.valueOf(cause), cause); // named in the outage's log line
                for (Op o : call.ops) o.completeExceptionally(e);
            } else {
                try {
                    parse(reply, call);
                } catch (RuntimeException malformed) {
                    for (Op o : call.ops) o.completeExceptionally(malformed);
                }
            }
        } finally {
            if (combined) sendWaiting(commands, call);
        }
    }

    private static Throwable unwrap(Throwable t) {
        return t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
    }

    /** Completes each operation of the call with its part of the reply. */
    private void parse(List<Object> reply, Call call) {
        long now = (Long) reply.get(0);
        int at = 1;
        for (Op o : call.ops) {
            boolean done = (Long) reply.get(at++) == 1;
            long[] waits = new long[o.count];
            long[][] tokens = new long[o.count][];
            for (int i = 0; i < o.count; i++) {
                ScriptKey b = o.buckets[o.from + i];
                long repair = (Long) reply.get(at);
                long wait = (Long) reply.get(at + 1);
                int n = ((Long) reply.get(at + 2)).intValue();
                long[] t = new long[n];
                for (int j = 0; j < n; j++) t[j] = (Long) reply.get(at + 3 + j);
                at += 3 + n;
                waits[i] = wait < 0 ? Long.MAX_VALUE : wait == 0 ? 0
                        : wait > Long.MAX_VALUE / 1000 ? Long.MAX_VALUE : wait * 1000;
                tokens[i] = t;
                b.noted(now, t, o.op == REFUND);
                if (repair == 1) values.replaced(b.key());
                else if (repair == 2) restored(b.key());
            }
            o.complete(new Reply(done, waits, tokens));
        }
    }

    /** One operation of a call, completed with its reply. */
    private static final class Op extends CompletableFuture<Reply> {
        final byte op;
        final long units;
        final ScriptKey[] buckets;
        final int from;
        final int count;
        /** The longest wait a {@link #RESERVE} accepts; 0 for the other operations. */
        long maxWaitNanos;
        /** Its keys' places (1-based) among the call's keys. */
        int[] places;
        /** Whether it went out in a call (set under the script's lock for combined calls). */
        volatile boolean sent;

        Op(byte op, long units, ScriptKey[] buckets, int from, int count) {
            this.op = op;
            this.units = units;
            this.buckets = buckets;
            this.from = from;
            this.count = count;
        }

        /** Whether it counts a calendar quota: a count that bills. */
        boolean bills() {
            for (int i = from; i < from + count; i++) {
                if (buckets[i] instanceof ScriptCounter) return true;
            }
            return false;
        }
    }

    /** The operations of one script call and their distinct keys. */
    private static final class Call {
        final List<Op> ops = new ArrayList<>(2);
        final List<ScriptKey> keys = new ArrayList<>(4);
        final Map<String, Integer> places = new HashMap<>();
        /** The limits a move sends as its keys' (null: each key's own). */
        final BucketLimits limits;
        /** When it was sent ({@link System#nanoTime}), for a combined call. */
        long sentAt;

        Call(BucketLimits limits) {
            this.limits = limits;
        }

        /** Adds {@code o}, unless one of its keys is in the call already with other limits (a change under way). */
        boolean add(Op o) {
            for (int i = 0; i < o.count; i++) {
                ScriptKey k = o.buckets[o.from + i];
                Integer p = places.get(k.key());
                if (p != null && !sameLimits(keys.get(p - 1).spec(), k.spec())) return false;
            }
            o.places = new int[o.count];
            for (int i = 0; i < o.count; i++) {
                ScriptKey k = o.buckets[o.from + i];
                Integer p = places.get(k.key());
                if (p == null) {
                    keys.add(k);
                    p = keys.size();
                    places.put(k.key(), p);
                }
                o.places[i] = p;
            }
            ops.add(o);
            return true;
        }

        String[] keys() {
            String[] k = new String[keys.size()];
            for (int i = 0; i < k.length; i++) k[i] = keys.get(i).key();
            return k;
        }

        /** The script's arguments: now, each key's limits and what was seen of it, then each operation. */
        byte[][] args(long nowMicros) {
            int n = 1 + 2 * keys.size();
            for (Op o : ops) n += 3 + o.count;
            byte[][] args = new byte[n][];
            int a = 0;
            args[a++] = ascii(nowMicros);
            byte[] moved = limits == null ? null : spec(limits);
            for (ScriptKey k : keys) {
                args[a++] = moved != null ? moved : k.spec();
                args[a++] = k.seen();
            }
            for (Op o : ops) {
                args[a++] = new byte[]{o.op};
                // a reserve's max wait rounded down to whole micros: a wait it accepts is never longer
                args[a++] = o.op == RESERVE
                        ? (o.units + "/" + o.maxWaitNanos / 1000).getBytes(StandardCharsets.US_ASCII)
                        : ascii(o.units);
                args[a++] = ascii(o.count);
                for (int p : o.places) args[a++] = ascii(p);
            }
            return args;
        }

        private static byte[] ascii(long v) {
            return Long.toString(v).getBytes(StandardCharsets.US_ASCII);
        }
    }

    /**
     * Whether two specs of one key name the same limits. A calendar quota's counter
     * ({@code #limit,expiresAtMillis,waitMicros}) ends with the wait until its reset as each request
     * counted it, not a limit: requests a few microseconds apart share a call, with the first one's wait.
     */
    static boolean sameLimits(byte[] a, byte[] b) {
        if (a.length > 0 && a[0] == '#' && b.length > 0 && b[0] == '#') {
            int endA = lastComma(a);
            int endB = lastComma(b);
            return endA > 0 && endB > 0 && Arrays.equals(a, 0, endA, b, 0, endB);
        }
        return Arrays.equals(a, b);
    }

    private static int lastComma(byte[] spec) {
        for (int i = spec.length - 1; i >= 0; i--) {
            if (spec[i] == ',') return i;
        }
        return -1;
    }

    /**
     * The limits as the script reads them: {@code name,capacity,refill,periodMicros[,a]|...}, {@code a} the
     * algorithm ({@code g} GCRA, {@code s} sliding window; none for a token bucket, so a token bucket's
     * values are those of before algorithms).
     */
    static byte[] spec(BucketLimits limits) {
        StringBuilder s = new StringBuilder();
        for (Bandwidth b : limits.bandwidths()) {
            if (!s.isEmpty()) s.append('|');
            long micros = Math.max(1, b.period().toNanos() / 1000);
            s.append(b.name()).append(',').append(b.capacity()).append(',').append(b.refill()).append(',').append(micros);
            if (b.algorithm() == Algorithm.GCRA) s.append(",g");
            else if (b.algorithm() == Algorithm.SLIDING_WINDOW) s.append(",s");
        }
        return s.toString().getBytes(StandardCharsets.US_ASCII);
    }
}

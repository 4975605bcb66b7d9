package io.quotagate.filter.redis;

import io.quotagate.filter.store.Probe;
import io.quotagate.filter.store.QuotaBucket;
import io.quotagate.filter.store.StoreUnavailableException;

import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;

/**
 * Runs each bucket operation on Redis while {@link RedisHealth} says it answers, and on this
 * instance's {@link LocalShares share} otherwise; with {@code on-failure: closed}, refuses instead.
 *
 * <p>Hot path: one volatile read ({@link RedisHealth#available()}) decides; while Redis is up, a
 * request costs one call of the store's script ({@link BucketScript}: one round trip for all of its
 * buckets), or with a local allowance bucket4j's GET + compare-and-swap script (2 round trips per bucket
 * synchronised), each bounded by the command timeout, the compare-and-swap retried at most
 * {@code max-retries} times on a conflict. A failure is classified by
 * {@link RedisHealth}: an outage flips the store to local buckets (once); contention or a single slow
 * command answers only that operation locally; a value that is no bucket is that key's trouble alone
 * ({@link ValueRepair}).
 */
final class Failover {
    private final RedisConnection redis;
    private final RedisHealth health;
    private final LocalShares shares;
    private final RedisSettings settings;
    private final ValueRepair values;
    /**
     * The store's script: every bucket's, or with a local allowance only those with a sliding-window limit
     * (which bucket4j cannot keep: see {@link #remote}).
     */
    private final BucketScript script;
    /** Whether every bucket is the script's (no local allowance), so several are decided in one call. */
    private final boolean allScripted;
    private final LongAdder moves = new LongAdder();

    Failover(RedisConnection redis, RedisHealth health, LocalShares shares, RedisSettings settings) {
        this.redis = redis;
        this.values = new ValueRepair(redis);
        this.script = new BucketScript(redis, values);
        this.allScripted = settings.localAllowance() == null;
        this.health = health;
        this.shares = shares;
        this.settings = settings;
    }

    /** Runs {@code op} on the Redis bucket, or on the local share when Redis is unavailable or fails. */
    <T> T apply(FailoverBucket b, Function<QuotaBucket, T> op) {
        return apply(b, op, true);
    }

    /**
     * As {@link #apply}, for an operation that only reads: a bucket not moved to new limits yet is read as
     * it is (moving it would create a missing key), and moved by the next operation that writes.
     */
    <T> T look(FailoverBucket b, Function<QuotaBucket, T> op) {
        return apply(b, op, false);
    }

    private <T> T apply(FailoverBucket b, Function<QuotaBucket, T> op, boolean move) {
        if (health.available()) { // volatile read: the whole cost of the failover on the happy path
            RedisBucket remote = remote(b);
            if (remote != null) {
                try {
                    return onRedis(b, remote, op, move);
                } catch (RuntimeException e) {
                    RuntimeException failure = e;
                    if (RedisHealth.classify(e) == RedisHealth.Failure.VALUE) {
                        // one key's value, not Redis: repaired, the operation runs again on a fresh bucket
                        try {
                            if (values.repair(b.key(), e)) return onRedis(b, remote, op, move);
                        } catch (RuntimeException again) {
                            failure = again;
                        }
                    }
                    // contention, one slow command or one key's value: only this operation is decided locally
                    if (!health.failed(failure)) return answerLocally(b, op);
                }
            }
        }
        refuseIfClosed();
        return answerLocally(b, op);
    }

    /** True if the buckets are the store's script's, so several of them are decided in one call. */
    boolean scripted() {
        return allScripted;
    }

    /**
     * {@link io.quotagate.filter.store.BucketStore#takeAll} on Redis: one script call covering every
     * bucket and quota counter ({@link #scripted()} only; each a {@link FailoverBucket} or a
     * {@link ScriptCounter}), whose reply carries each key's wait and tokens; on this instance's shares
     * while Redis is unavailable or fails.
     */
    Probe takeAll(QuotaBucket[] buckets, int count, long units, boolean remaining) {
        BucketScript.Reply r = onRedis(BucketScript.TAKE, buckets, count, units);
        if (r == null) {
            health.answeredLocally();
            return shares.local().takeAll(localShares(buckets, count), count, units, remaining);
        }
        return r.probe();
    }

    /**
     * {@link io.quotagate.filter.store.BucketStore#reserveAll} on Redis: one script call covering every bucket
     * and quota counter ({@link #scripted()} only), all reserved or none; on this instance's shares while
     * Redis is unavailable or fails.
     */
    Probe reserveAll(QuotaBucket[] buckets, int count, long units, long maxWaitNanos, boolean remaining) {
        BucketScript.Reply r = onRedis(BucketScript.RESERVE, buckets, count, units, maxWaitNanos);
        if (r == null) {
            health.answeredLocally();
            return shares.local().reserveAll(localShares(buckets, count), count, units, maxWaitNanos, remaining);
        }
        return r.probe(); // the delays if reserved, the waits if not
    }

    /** {@link io.quotagate.filter.store.BucketStore#waits} on Redis: one script call that writes nothing. */
    Probe waits(QuotaBucket[] buckets, int count, long units, boolean remaining) {
        BucketScript.Reply r = onRedis(BucketScript.LOOK, buckets, count, units);
        if (r == null) return shares.local().waits(localShares(buckets, count), count, units, remaining);
        boolean all = true; // a look is always "done": whether every key could take the units is in its waits
        for (long w : r.waits()) all &= w == 0;
        return new Probe(all, r.waits(), r.tokens());
    }

    /**
     * One script call of {@code op} on the buckets, or null if it is to be decided locally: Redis
     * unavailable, or this call failed (contention cannot happen in a script; a slow command answers only
     * this request locally). With {@code on-failure: closed}, an outage refuses instead. A take that counts a
     * calendar quota is never decided locally for slowness: refused (503) when Redis does not answer within
     * {@code quota-timeout}, and sent to Redis while Redis is only silent ({@link RedisHealth#silent()}).
     */
    private BucketScript.Reply onRedis(byte op, QuotaBucket[] buckets, int count, long units) {
        return onRedis(op, buckets, count, units, 0);
    }

    private BucketScript.Reply onRedis(byte op, QuotaBucket[] buckets, int count, long units, long maxWaitNanos) {
        boolean billing = (op == BucketScript.TAKE || op == BucketScript.RESERVE) && bills(buckets, count);
        ScriptKey[] remotes = onScript(buckets, count, billing);
        if (remotes != null) {
            try {
                BucketScript.Reply r = script.run(op, units, maxWaitNanos, remotes, count, null);
                health.succeeded();
                return r;
            } catch (RuntimeException e) {
                boolean down = health.failed(e);
                // a slow call is no outage for a count that bills, even one that makes Redis down for the
                // buckets: it is refused (503), never decided on this instance's share; the units Redis
                // takes after all go back when its late reply comes (BucketScript.await)
                if (billing && RedisHealth.classify(e) == RedisHealth.Failure.SLOW) throw slowQuota();
                if (down) refuseIfClosed();
            }
        } else if (!health.available()) {
            refuseIfClosed();
        }
        return null;
    }

    /**
     * The keys of the script call, each bucket moved to its limits first if they may have changed (once
     * per change); null when Redis is unavailable (or not connected yet), unless the call counts a calendar
     * quota ({@code billing}) and Redis is only silent ({@link RedisHealth#silent()}): that count still waits
     * for Redis.
     */
    private ScriptKey[] onScript(QuotaBucket[] buckets, int count, boolean billing) {
        if (!health.available() && !(billing && health.silent())) return null;
        ScriptKey[] remotes = new ScriptKey[count];
        for (int i = 0; i < count; i++) {
            if (buckets[i] instanceof ScriptCounter c) {
                remotes[i] = c;
            } else if (remote((FailoverBucket) buckets[i]) instanceof ScriptBucket s) {
                remotes[i] = s;
            } else {
                return null;
            }
        }
        for (int i = 0; i < count; i++) {
            if (!(buckets[i] instanceof FailoverBucket b) || !b.moveFirst()) continue;
            try {
                ((ScriptBucket) remotes[i]).moveTo(b.limits());
            } catch (RuntimeException e) {
                health.failed(e);
                return null; // decided locally this time; moved by the next call Redis answers
            }
            b.moved();
            moves.increment();
        }
        return remotes;
    }

    /** Whether one of the buckets is a calendar quota's counter (a count that bills). */
    private static boolean bills(QuotaBucket[] buckets, int count) {
        for (int i = 0; i < count; i++) {
            if (buckets[i] instanceof ScriptCounter) return true;
        }
        return false;
    }

    /** A request counted against a calendar quota that Redis did not answer within the quota timeout. */
    StoreUnavailableException slowQuota() {
        return RedisQuotaCounters.slow(settings);
    }

    /** This instance's share of each bucket and counter. */
    private QuotaBucket[] localShares(QuotaBucket[] buckets, int count) {
        QuotaBucket[] local = new QuotaBucket[count];
        for (int i = 0; i < count; i++) {
            local[i] = buckets[i] instanceof ScriptCounter c ? c.local() : shares.of((FailoverBucket) buckets[i]);
        }
        return local;
    }

    /** With {@code on-failure: closed}: refuses rather than decide on the local shares. */
    private void refuseIfClosed() {
        if (settings.onFailure() == RedisSettings.OnFailure.CLOSED) {
            throw new StoreUnavailableException("the shared quota store is unreachable",
                    (settings.heartbeat().toMillis() + 999) / 1000);
        }
    }

    /** Buckets moved to other limits in Redis by this instance. */
    long moves() {
        return moves.sum();
    }

    /** Runs {@code op} on Redis, moving the bucket to its limits first if they may have changed. */
    private <T> T onRedis(FailoverBucket b, RedisBucket remote, Function<QuotaBucket, T> op, boolean move) {
        if (move && b.moveFirst()) {
            remote.moveTo(b.limits());
            b.moved();
            moves.increment();
        }
        T result = op.apply(remote);
        health.succeeded();
        return result;
    }

    /** Counts a fallback decision and runs {@code op} on this instance's share of {@code b}. */
    private <T> T answerLocally(FailoverBucket b, Function<QuotaBucket, T> op) {
        health.answeredLocally();
        return op.apply(shares.of(b));
    }

    /** The bucket's proxy on the connection (built once, not per request), or null before the first connect. */
    private RedisBucket remote(FailoverBucket b) {
        RedisBucket r = b.currentRemote();
        if (r != null) return r;
        if (redis.current() == null) return null;
        // a local allowance keeps bucket4j's token buckets; a sliding window is the script's all the same (one
        // call per operation, no allowance: a window's guarantee needs every admission counted where it is kept)
        r = allScripted || !b.limits().canReserve() ? new ScriptBucket(script, b.key(), b.limits())
                : new RemoteBucket(b.limits(), redis, b.key());
        FailoverBucket before = b.takePredecessor();
        RedisBucket kept = before == null ? null : before.currentRemote();
        // kept the other way before (a sliding window came or went under a local allowance): the value in Redis
        // is unreadable to this one, which creates it from what the other saw rather than full
        RedisBucket.Noted seen = kept == null || kept.getClass() == r.getClass() ? null : kept.lastSeen();
        if (seen != null) r.seed(seen);
        b.remote(r);
        return r;
    }
}

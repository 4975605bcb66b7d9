package io.quotagate.filter.redis;

import io.quotagate.filter.store.QuotaBucket;
import io.quotagate.filter.store.StoreUnavailableException;

import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;

/**
 * Runs each bucket operation on Redis while {@link RedisHealth} says it answers, and on this
 * instance's {@link LocalShares share} otherwise; with {@code on-failure: closed}, refuses instead.
 *
 * <p>Hot path: one volatile read ({@link RedisHealth#available()}) decides; while Redis is up, a
 * request costs bucket4j's GET + compare-and-swap script (2 round trips), each bounded by the command
 * timeout, retried at most {@code max-retries} times on a conflict. A failure is classified by
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
    private final LongAdder moves = new LongAdder();

    Failover(RedisConnection redis, RedisHealth health, LocalShares shares, RedisSettings settings) {
        this.redis = redis;
        this.values = new ValueRepair(redis, settings);
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
            RemoteBucket remote = remote(b);
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
        if (settings.onFailure() == RedisSettings.OnFailure.CLOSED) {
            throw new StoreUnavailableException("the shared quota store is unreachable",
                    (settings.heartbeat().toMillis() + 999) / 1000);
        }
        return answerLocally(b, op);
    }

    /** Buckets moved to other limits in Redis by this instance. */
    long moves() {
        return moves.sum();
    }

    /** Runs {@code op} on Redis, moving the bucket to its limits first if they may have changed. */
    private <T> T onRedis(FailoverBucket b, RemoteBucket remote, Function<QuotaBucket, T> op, boolean move) {
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
    private RemoteBucket remote(FailoverBucket b) {
        RemoteBucket r = b.currentRemote();
        if (r != null) return r;
        if (redis.current() == null) return null;
        r = new RemoteBucket(b.limits(), redis, b.key());
        b.remote(r);
        return r;
    }
}

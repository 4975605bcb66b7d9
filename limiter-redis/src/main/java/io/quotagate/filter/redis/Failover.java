package io.quotagate.filter.redis;

import io.github.bucket4j.distributed.BucketProxy;
import io.quotagate.filter.store.QuotaBucket;
import io.quotagate.filter.store.StoreUnavailableException;
import io.quotagate.plans.StoreSettings;

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
 * command answers only that operation locally.
 */
final class Failover {
    private final RedisConnection redis;
    private final RedisHealth health;
    private final LocalShares shares;
    private final StoreSettings settings;
    private final LongAdder moves = new LongAdder();

    Failover(RedisConnection redis, RedisHealth health, LocalShares shares, StoreSettings settings) {
        this.redis = redis;
        this.health = health;
        this.shares = shares;
        this.settings = settings;
    }

    /** Runs {@code op} on the Redis bucket, or on the local share when Redis is unavailable or fails. */
    <T> T apply(FailoverBucket b, Function<QuotaBucket, T> op) {
        if (health.available()) { // volatile read: the whole cost of the failover on the happy path
            RemoteBucket remote = remote(b);
            if (remote != null) {
                try {
                    if (b.moveFirst()) {
                        remote.moveTo(b.limits());
                        b.moved();
                        moves.increment();
                    }
                    T result = op.apply(remote);
                    health.succeeded();
                    return result;
                } catch (RuntimeException e) {
                    // contention or one slow command: only this operation is decided locally
                    if (!health.failed(e)) return answerLocally(b, op);
                }
            }
        }
        if (settings.onFailure() == StoreSettings.OnFailure.CLOSED) {
            throw new StoreUnavailableException("the shared quota store is unreachable",
                    (settings.heartbeat().toMillis() + 999) / 1000);
        }
        return answerLocally(b, op);
    }

    /** Buckets moved to other limits in Redis by this instance. */
    long moves() {
        return moves.sum();
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
        BucketProxy proxy = redis.proxy(b.key(), b.limits().configuration());
        if (proxy == null) return null;
        r = new RemoteBucket(proxy);
        b.remote(r);
        return r;
    }
}

package io.quotagate.filter.redis;

import java.time.Duration;
import java.util.Collection;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * With a local allowance, a bucket's copy on this instance may hold admitted units Redis has not seen
 * yet: a bucket dropped from the store's table (idle, evicted, replaced by new limits) sends them
 * first, off the request path; closing the store sends every bucket's.
 *
 * <p>Best effort: while Redis is down they are lost, at most one allowance per bucket, the same bound
 * an instance's crash has.
 */
final class AllowanceFlusher {
    private static final System.Logger LOG = System.getLogger(RedisStore.class.getName());

    private final RedisHealth health;
    private final Executor background;

    /** @param background the store's single background thread (the heartbeat's) */
    AllowanceFlusher(RedisHealth health, Executor background) {
        this.health = health;
        this.background = background;
    }

    /** Flushes {@code b} on the background thread. */
    void flushLater(FailoverBucket b) {
        if (health.closed()) return;
        try {
            background.execute(() -> flush(b));
        } catch (RejectedExecutionException closing) {
            // close() flushes what is still cached
        }
    }

    /** Sends the units admitted on the bucket's local copy since its last synchronisation, if any. */
    void flush(FailoverBucket b) {
        if (!(b.currentRemote() instanceof RemoteBucket remote) || !health.available()) return;
        try {
            remote.proxy().getOptimizationController().syncByCondition(1, Duration.ZERO);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "quotagate: units on a local allowance not sent to Redis: " + e);
        }
    }

    /** Flushes every bucket, for at most {@code budget} in all (on close). */
    void flushAll(Collection<FailoverBucket> buckets, Duration budget) {
        long deadline = System.nanoTime() + budget.toNanos();
        for (FailoverBucket b : buckets) {
            if (System.nanoTime() - deadline > 0) return;
            flush(b);
        }
    }
}

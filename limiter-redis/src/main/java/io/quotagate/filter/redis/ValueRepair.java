package io.quotagate.filter.redis;

import io.github.bucket4j.distributed.serialization.InternalSerializationHelper;
import io.github.bucket4j.distributed.versioning.UsageOfUnsupportedApiException;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.ScriptOutputType;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A key whose value is no bucket this store can read (set by hand, by another program, or cut short):
 * a failure of that one key ({@link RedisHealth.Failure#VALUE}), never an outage. The key is looked at
 * once (one {@code GET}) and, if its value really cannot be read, removed by a compare-and-delete, so
 * the operation that failed is retried once on a fresh bucket (created from what this instance last saw
 * of it, see {@link FailoverBucket}); another instance that repaired it first is not undone. A value
 * written by a newer bucket4j (a rolling upgrade) is kept: that key is decided on the local share
 * instead. Each key is logged once (at most {@link #MAX_LOGGED} keys, then one line saying so).
 */
final class ValueRepair {
    private static final System.Logger LOG = System.getLogger(RedisStore.class.getName());
    /** Keys whose trouble is logged; past this many, one more line and then silence. */
    static final int MAX_LOGGED = 1_000;
    /**
     * bucket4j numbers its state formats 1, 2, 3...: a number a little above the largest this version
     * reads is a newer release's state, a huge one (the first four bytes of any text) is no state at all.
     */
    private static final int NEWER_FORMATS = 100;

    private final RedisConnection redis;
    private final Set<String> logged = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean overflowLogged = new AtomicBoolean();

    ValueRepair(RedisConnection redis) {
        this.redis = redis;
    }

    /**
     * Looks at {@code key} after an operation on it failed with {@code failure} (a {@code VALUE} failure).
     *
     * @return true if the key now holds no unreadable value (the operation may be retried on Redis);
     *         false if this key is to be decided locally
     * @throws io.lettuce.core.RedisException if Redis itself fails meanwhile (an outage or a slow command, as usual)
     */
    boolean repair(String key, RuntimeException failure) {
        byte[] value;
        try {
            value = redis.await(redis.link().commands().get(key));
        } catch (RedisCommandExecutionException e) {
            if (!RedisHealth.wrongType(e)) throw e;
            value = new byte[0]; // a hash, a list...: the script deletes any value that is no string
        }
        if (value == null) return true; // gone meanwhile (expired, or repaired by another instance)
        if (value.length > 0) {
            try {
                InternalSerializationHelper.deserializeState(value);
                logOnce(key, "failed on this key (" + failure + "); this operation is decided locally");
                return false;
            } catch (RuntimeException unreadable) {
                if (unreadable.getCause() instanceof UsageOfUnsupportedApiException newer
                        && newer.getRequestedFormatNumber() <= newer.getMaxSupportedFormatNumber() + NEWER_FORMATS) {
                    logOnce(key, "holds a bucket in a newer bucket4j format (" + newer.getRequestedFormatNumber()
                            + "); kept, and this key is decided on local buckets");
                    return false;
                }
            }
        }
        redis.await(LuaScript.COMPARE_AND_DELETE.<Long>run(redis.link().commands(), ScriptOutputType.INTEGER,
                new String[]{key}, value));
        logOnce(key, "held no bucket this store can read (" + failure + "); replaced by a fresh bucket");
        return true;
    }

    /** Logs (once per key) that the script found no bucket it can read at {@code key} and wrote a fresh one. */
    void replaced(String key) {
        logOnce(key, "held no bucket this store can read; replaced by a fresh bucket");
    }

    private void logOnce(String key, String what) {
        if (logged.size() >= MAX_LOGGED) {
            if (overflowLogged.compareAndSet(false, true)) {
                LOG.log(System.Logger.Level.WARNING, "quotagate: " + MAX_LOGGED
                        + " Redis keys held values this store cannot read; further keys are not logged");
            }
            return;
        }
        if (logged.add(key)) LOG.log(System.Logger.Level.WARNING, "quotagate: Redis key " + key + " " + what);
    }
}

package io.quotagate.filter.redis;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.SetArgs;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.store.QuotaBucket;
import io.quotagate.filter.store.QuotaCounters;
import io.quotagate.filter.store.StoreUnavailableException;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntSupplier;

/**
 * The calendar quotas' counters in Redis: one string per quota, tenant and period,
 * {@code <prefix>:quota:<quota>:<tenant>:<first day of the period>}, holding the units used, expiring
 * (PEXPIREAT) an hour after its period ends. One key per script ({@code quota-try-add.lua},
 * {@code quota-add.lua}), so it runs whole on the primary that owns the key's slot on Redis Cluster.
 * With the store's own script a request's counters are taken in its one script call, with its buckets
 * ({@link ScriptCounter}). These operations serve the rest, one call per quota each: the take in
 * bucket4j's modes, a settled request's refund or excess (in every mode), and a counter used alone.
 *
 * <p><b>A slow Redis.</b> A count that bills waits for Redis up to {@link RedisSettings#quotaTimeout()}
 * and is never decided on the local table because a call was slow: a request Redis has not counted
 * within that time is refused (503, {@link StoreUnavailableException}), and if Redis counted it after
 * all, its units are given back when the late reply comes. That holds also once slowness alone made Redis
 * down for the buckets ({@link RedisHealth#silent()}: timeouts, the connection standing): quota counts still
 * go to Redis then, never to the local table.
 *
 * <p><b>Redis losing its data.</b> Every operation sends the counter's floor ({@link #floor}: the most units
 * this instance saw in it, plus what it admitted locally in outages of the period); Redis rebuilds a missing
 * counter at it before counting, so a restart without persistence, {@code FLUSHALL} or a failover to a
 * replica that lagged grants no unit this instance knew of twice.
 *
 * <p>While Redis is unreachable ({@link RedisHealth}), under {@code on-failure: open} each instance
 * counts in its local table against its share of what was left of the limit when Redis last showed it
 * the counter ({@code (limit - used) / instances}, the whole limit if never), and those units are not
 * added to Redis afterwards; the local table keeps its count for the period, so a second outage goes on
 * from the first one's. Under {@code closed} a request with quotas is refused (503), as for buckets.
 */
final class RedisQuotaCounters implements QuotaCounters {
    private static final System.Logger LOG = System.getLogger(RedisStore.class.getName());
    private final RedisConnection redis;
    private final RedisHealth health;
    private final RedisSettings settings;
    private final QuotaCounters local;
    private final IntSupplier instances;
    private final String prefix;
    /** Where the claims of quota events live: {@code <prefix>:event:<quota>:<tenant>:<period>:<what>}. */
    private final String claimPrefix;
    private final Duration timeout;
    private final LongAdder lateRefunds = new LongAdder();
    /** The units used per counter as the latest reply showed them (for published fields). */
    private final Cache<String, Long> noted;
    /**
     * Per counter (one quota, tenant and period), the most units this instance knows it holds: the highest
     * count a reply showed, lowered only by the reply of a refund. Sent as the counter's floor with every
     * operation, so a counter Redis lost is rebuilt at no less than this instance saw ({@link #floor}).
     */
    private final Cache<String, Long> floors;

    RedisQuotaCounters(RedisConnection redis, RedisHealth health, RedisSettings settings, BucketStore local,
                       IntSupplier instances, int maxTracked) {
        this.redis = redis;
        this.health = health;
        this.settings = settings;
        this.local = local.quotaCounters().orElseThrow();
        this.instances = instances;
        this.prefix = settings.prefix() + ":quota:";
        this.claimPrefix = settings.prefix() + ":event:";
        this.timeout = settings.quotaTimeout();
        // bounded by size only: what was left of a quota when Redis last answered sizes the local share of
        // an outage, however long ago that was (a period's counter outlives idle minutes)
        this.noted = Caffeine.newBuilder().maximumSize(maxTracked).build();
        // bounded the same way: a counter not used for long is dropped first, its period most likely over
        this.floors = Caffeine.newBuilder().maximumSize(maxTracked).build();
    }

    /** The Redis key of a counter. */
    String key(String counter) {
        return prefix + counter;
    }

    @Override
    public long tryAdd(String key, long units, long limit, long nowMillis, long expiresAtMillis) {
        if (health.available() || health.silent()) {
            CompletableFuture<Long> added = null;
            try {
                added = LuaScript.QUOTA_TRY_ADD.<Long>run(redis.link().commands(), ScriptOutputType.INTEGER,
                        new String[]{key(key)}, bytes(units), bytes(limit), bytes(expiresAtMillis), bytes(floor(key)));
                Long r = await(added);
                health.succeeded();
                noted(key, r < 0 ? -1 - r : r);
                return r;
            } catch (RuntimeException e) {
                boolean down = health.failed(e);
                if (RedisHealth.classify(e) == RedisHealth.Failure.SLOW) {
                    // decided without this call's reply: units Redis adds after all go back when it comes
                    if (added != null) added.thenAccept(late -> {
                        if (late >= 0) giveBack(key, units, expiresAtMillis);
                    });
                    // a slow call is no outage for a count that bills, even when it makes Redis down for the
                    // buckets: refused (503), never counted on a local share
                    throw slow(settings);
                }
                if (!down) {
                    health.answeredLocally();
                    return local.tryAdd(key, units, share(key, limit), nowMillis, expiresAtMillis);
                }
            }
        }
        unavailable();
        health.answeredLocally();
        return local.tryAdd(key, units, share(key, limit), nowMillis, expiresAtMillis);
    }

    @Override
    public void add(String key, long units, long nowMillis, long expiresAtMillis) {
        // while Redis is only silent a refund or an excess still goes to Redis, which applies it in time
        if (health.available() || health.silent()) {
            try {
                Long used = await(LuaScript.QUOTA_ADD.<Long>run(redis.link().commands(), ScriptOutputType.INTEGER,
                        new String[]{key(key)}, bytes(units), bytes(expiresAtMillis), bytes(floor(key))));
                health.succeeded();
                noted(key, used, units < 0);
                return;
            } catch (RuntimeException e) {
                health.failed(e);
                // a slow add is still on its way to Redis, which applies it: counted once, not here too
                if (RedisHealth.classify(e) == RedisHealth.Failure.SLOW) return;
            }
        }
        local.add(key, units, nowMillis, expiresAtMillis);
    }

    /** Takes back {@code units} Redis added to counter {@code key} after its request stopped waiting. */
    private void giveBack(String key, long units, long expiresAtMillis) {
        try {
            LuaScript.QUOTA_ADD.<Long>run(redis.link().commands(), ScriptOutputType.INTEGER, new String[]{key(key)},
                    bytes(-units), bytes(expiresAtMillis), bytes(floor(key))).whenComplete((left, failure) -> {
                if (failure != null) {
                    LOG.log(System.Logger.Level.WARNING, "quotagate: could not give back {0} units to quota "
                            + "counter {1}, added by Redis after its request was refused: {2}", units, key,
                            String.valueOf(failure));
                } else {
                    noted(key, left, true);
                    lateRefunds.increment();
                }
            });
        } catch (RuntimeException notSent) {
            LOG.log(System.Logger.Level.WARNING, "quotagate: could not give back {0} units to quota counter {1}: {2}",
                    units, key, String.valueOf(notSent));
        }
    }

    /** Adds that Redis did after their requests stopped waiting, whose units went back. */
    long lateRefunds() {
        return lateRefunds.sum();
    }

    /**
     * The refusal of a request counted against a calendar quota that Redis did not answer within
     * {@link RedisSettings#quotaTimeout()}: retry in a second.
     */
    static StoreUnavailableException slow(RedisSettings settings) {
        return new StoreUnavailableException("the shared quota store did not count the request within "
                + settings.quotaTimeout().toMillis() + " ms", 1);
    }

    @Override
    public long used(String key) {
        if (health.available()) {
            try {
                byte[] v = await(redis.link().commands().get(key(key)));
                if (v == null) return floor(key); // lost with Redis's data: what the next write rebuilds it at
                long used = Long.parseLong(new String(v, StandardCharsets.UTF_8));
                noted(key, used);
                return used;
            } catch (RuntimeException e) {
                health.failed(e);
            }
        }
        return local.used(key);
    }

    /**
     * The counters in Redis, a page at a time: {@code SCAN} with {@code MATCH <prefix>:quota:*} and
     * {@code COUNT count}, over every primary of a Cluster one after the other (ordered by node id). The cursor
     * is {@code <node id>/<SCAN cursor>} ({@code -} for the node of a single Redis). Redis lists every key that
     * exists for the whole scan at least once, and a key twice only while its table shrinks (the export lists a
     * tenant once on the page of one chosen counter, see the core's usage export). A page may hold somewhat more
     * than {@code count} keys, or none before the last.
     *
     * @throws StoreUnavailableException if Redis cannot be reached (never listed from the local table: every
     *                                   instance must answer the same)
     */
    @Override
    public Page scan(String cursor, int count) {
        if (count < 1) throw new IllegalArgumentException("count must be >= 1, was " + count);
        String node = "-";
        String at = ScanCursor.INITIAL.getCursor();
        if (cursor != null) {
            int slash = cursor.lastIndexOf('/');
            if (slash <= 0 || slash == cursor.length() - 1) {
                throw new IllegalArgumentException("not a cursor of the Redis quota counters: " + cursor);
            }
            node = cursor.substring(0, slash);
            at = cursor.substring(slash + 1);
        }
        ScanArgs args = ScanArgs.Builder.matches(glob(prefix) + "*").limit(count);
        try {
            RedisTopology.Session session = redis.link().session();
            if (session.connection() instanceof StatefulRedisClusterConnection<String, byte[]> cluster) {
                List<String> primaries = new ArrayList<>();
                for (RedisClusterNode n : cluster.getPartitions()) {
                    if (n.is(RedisClusterNode.NodeFlag.UPSTREAM)) primaries.add(n.getNodeId());
                }
                Collections.sort(primaries);
                if (primaries.isEmpty()) throw new StoreUnavailableException("no Redis Cluster primary is known", 1);
                // the cursor names the primaries it was made with: after a failover (a replica promoted, with
                // another id) the slots of the old primary might be skipped, so the export must start again
                String topology = Integer.toHexString(primaries.hashCode());
                String current = primaries.get(0);
                if (cursor != null) {
                    int dot = node.indexOf('.');
                    if (dot <= 0 || !node.substring(0, dot).equals(topology)) {
                        throw new StoreUnavailableException("the Redis Cluster's primaries changed during the usage "
                                + "export (a failover?): start the export again", 1);
                    }
                    current = node.substring(dot + 1);
                }
                int index = Collections.binarySearch(primaries, current);
                if (index < 0) throw new IllegalArgumentException("not a cursor of the Redis quota counters: " + cursor);
                KeyScanCursor<String> step = await(cluster.getConnection(current).async().scan(ScanCursor.of(at), args));
                String next = !step.isFinished() ? topology + "." + current + "/" + step.getCursor()
                        : index + 1 < primaries.size()
                        ? topology + "." + primaries.get(index + 1) + "/" + ScanCursor.INITIAL.getCursor()
                        : null;
                return new Page(strip(step.getKeys()), next);
            }
            KeyScanCursor<String> step = await(session.commands().scan(ScanCursor.of(at), args));
            return new Page(strip(step.getKeys()), step.isFinished() ? null : "-/" + step.getCursor());
        } catch (StoreUnavailableException e) {
            throw e;
        } catch (RuntimeException e) {
            health.failed(e);
            throw new StoreUnavailableException("the shared quota store could not be read: " + e.getMessage(), 1);
        }
    }

    /**
     * The units in each counter as Redis holds them (0 for one it has not), all {@code GET}s sent before the
     * first reply is awaited: one round trip (one per primary on a Cluster).
     *
     * @throws StoreUnavailableException if Redis cannot be reached (never read from the local table)
     */
    @Override
    public long[] usedAll(List<String> keys) {
        long[] out = new long[keys.size()];
        try {
            RedisClusterAsyncCommands<String, byte[]> commands = redis.link().commands();
            List<CompletableFuture<byte[]>> reads = new ArrayList<>(keys.size());
            for (String k : keys) reads.add(commands.get(key(k)).toCompletableFuture());
            for (int i = 0; i < out.length; i++) {
                byte[] v = await(reads.get(i));
                out[i] = v == null ? 0 : Long.parseLong(new String(v, StandardCharsets.UTF_8));
            }
            return out;
        } catch (RuntimeException e) {
            health.failed(e);
            throw new StoreUnavailableException("the shared quota store could not be read: " + e.getMessage(), 1);
        }
    }

    /** The keys without the counters' prefix. */
    private List<String> strip(List<String> keys) {
        List<String> out = new ArrayList<>(keys.size());
        for (String k : keys) if (k.startsWith(prefix)) out.add(k.substring(prefix.length()));
        return out;
    }

    /** {@code s} as a SCAN pattern matching itself. */
    private static String glob(String s) {
        StringBuilder b = new StringBuilder(s.length() + 4);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if ("*?[]\\".indexOf(c) >= 0) b.append('\\');
            b.append(c);
        }
        return b.toString();
    }

    /**
     * {@code SET <prefix>:event:<key> 1 NX PXAT <expiresAtMillis>}: the first instance to ask gets it.
     * Called by the signals thread only, never on a request's; while Redis is unreachable it throws, and
     * the filter asks again at a later check (so an event is late rather than raised by every instance).
     */
    @Override
    public boolean claim(String key, long expiresAtMillis) {
        if (!health.available()) throw new IllegalStateException("the shared store is unreachable");
        String set = await(redis.link().commands().set(claimPrefix + key, bytes(1),
                SetArgs.Builder.nx().pxAt(expiresAtMillis)));
        return "OK".equals(set);
    }

    /** The noted use if this instance has seen the counter on Redis, else read; local while Redis is unreachable. */
    @Override
    public long notedUsed(String key) {
        if (health.available()) {
            Long used = noted.getIfPresent(key);
            if (used != null) return used;
        }
        return used(key);
    }

    /** Notes the units used in counter {@code key} (without the prefix) a reply showed. */
    void noted(String key, long used) {
        noted(key, used, false);
    }

    /**
     * As {@link #noted(String, long)}; a refund's reply ({@code refund}) may lower the counter's floor, any
     * other only raise it (replies of one counter may come back in another order than their calls).
     */
    void noted(String key, long used, boolean refund) {
        noted.put(key, used);
        if (refund) floors.put(key, used);
        else floors.asMap().merge(key, used, Math::max);
    }

    /**
     * The units this instance knows counter {@code key} holds: the most its replies showed, plus what it
     * admitted on its local share during outages in this period (units Redis never got). Redis rebuilds a
     * missing counter at this before it counts, so losing its data (a restart without persistence,
     * {@code FLUSHALL}, a failover to a replica that lagged) grants no unit this instance knew of twice. A
     * counter Redis holds is never raised to it (another instance's refund may have lowered it).
     */
    long floor(String key) {
        Long seen = floors.getIfPresent(key);
        return (seen == null ? 0 : seen) + local.used(key);
    }

    /**
     * The counter as one key of the store's script, so a request's quotas are counted in the same call
     * as its buckets; alone, it runs on this object's own operations.
     */
    @Override
    public QuotaBucket counter(String key, long limit, long nowNanos, long resetNanos, long expiresAtMillis) {
        return new ScriptCounter(this, key, limit, expiresAtMillis, nowNanos, resetNanos,
                QuotaCounters.super.counter(key, limit, nowNanos, resetNanos, expiresAtMillis),
                local.counter(key, share(key, limit), nowNanos, resetNanos, expiresAtMillis));
    }

    private void unavailable() {
        if (settings.onFailure() == RedisSettings.OnFailure.CLOSED) {
            throw new StoreUnavailableException("the shared quota store is unreachable",
                    (settings.heartbeat().toMillis() + 999) / 1000);
        }
    }

    /**
     * This instance's share of counter {@code key} while Redis is unreachable: {@code 1 / instances} of what
     * was left of the limit when Redis last showed the counter to this instance (all of the limit if it
     * never did), so that the instances together admit about what was left, not a whole limit more. The
     * local table keeps what it counted in the period, so a second outage takes the first one's off.
     */
    private long share(String key, long limit) {
        Long seen = noted.getIfPresent(key);
        long left = seen == null ? limit : Math.max(0, limit - seen);
        return left == 0 ? 0 : BucketStore.perInstanceShare(left, Math.max(1, instances.getAsInt()));
    }

    private static byte[] bytes(long v) {
        return Long.toString(v).getBytes(StandardCharsets.US_ASCII);
    }

    private <T> T await(CompletionStage<T> command) {
        try {
            return command.toCompletableFuture().get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
        } catch (TimeoutException e) {
            throw new io.lettuce.core.RedisCommandTimeoutException("quota counter: no answer within "
                    + timeout.toMillis() + " ms");
        }
    }
}

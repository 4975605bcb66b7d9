package io.quotagate.filter.redis;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.store.BucketLimits;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.store.LimitsChannel;
import io.quotagate.filter.store.Probe;
import io.quotagate.filter.store.QuotaBucket;
import io.quotagate.filter.store.QuotaClock;
import io.quotagate.filter.store.QuotaCounters;
import io.quotagate.filter.store.StoreHealth;

import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * {@link RedisStore} on the store's own bucket script ({@link BucketScript}: one round trip per request),
 * or with a local allowance on bucket4j's Lettuce compare-and-swap proxy manager: the composition of its parts, each with one job: {@link RedisConnection} (client, connection, proxies),
 * {@link InstanceRegistry} (heartbeat, instance count), {@link RedisHealth} (outage detection),
 * {@link Failover} with {@link LocalShares} (local decisions while Redis is down) and
 * {@link AllowanceFlusher} (units admitted on a local allowance). This class keeps the table of
 * buckets and runs the heartbeat.
 *
 * <p>A single background thread writes this instance into the heartbeat set every {@code heartbeat};
 * that same write is the probe: when it succeeds during an outage, the store returns to Redis.
 */
final class LettuceBucketStore implements RedisStore {
    private final RedisSettings settings;
    private final RedisConnection redis;
    private final InstanceRegistry registry;
    private final RedisHealth health;
    private final Failover failover;
    private final AllowanceFlusher flusher;
    private final RedisLimitsChannel limits;
    private final RedisQuotaCounters counters;
    private final Cache<String, FailoverBucket> buckets;
    private final ScheduledExecutorService heartbeat;
    private volatile Throwable lastFailure;
    private final RedisClock clock;

    LettuceBucketStore(RedisSettings settings, int maxTracked, Clock wallClock, QuotaClock localClock) {
        this.settings = Objects.requireNonNull(settings, "settings");
        if (maxTracked <= 0) throw new IllegalArgumentException("maxTracked must be > 0, was " + maxTracked);
        this.clock = new RedisClock(Objects.requireNonNull(wallClock, "wallClock"), localClock);
        this.redis = new RedisConnection(settings, clock);
        this.registry = new InstanceRegistry(redis, settings, clock);
        this.health = new RedisHealth(settings, registry::count);
        this.limits = new RedisLimitsChannel(redis, redis.topology(), settings, registry.instanceId());
        BucketStore local = BucketStore.local(maxTracked, localClock);
        LocalShares shares = new LocalShares(local, registry::count);
        this.counters = new RedisQuotaCounters(redis, health, settings, local, registry::count, maxTracked);
        this.failover = new Failover(redis, health, shares, settings);
        this.heartbeat = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "quotagate-redis-heartbeat");
            t.setDaemon(true);
            return t;
        });
        this.flusher = new AllowanceFlusher(health, heartbeat);
        // maintenance on the calling thread: no common-pool wake-up on the request path
        this.buckets = Caffeine.newBuilder().maximumSize(maxTracked).expireAfterAccess(Duration.ofMinutes(10))
                .executor(Runnable::run)
                .removalListener((String key, FailoverBucket b, RemovalCause cause) -> {
                    if (b != null && settings.localAllowance() != null) flusher.flushLater(b);
                })
                .build();

        beat(Duration.ofSeconds(2)); // connects, and learns the instance count before the first request
        if (health.available()) warmUp(failover.scripted());
        if (!health.available()) health.unreachableAtStart(lastFailure);
        Duration probeTimeout = settings.timeout().multipliedBy(4).compareTo(Duration.ofMillis(250)) > 0
                ? settings.timeout().multipliedBy(4) : Duration.ofMillis(250);
        // while Redis answers, a heartbeat slower than the probe's timeout is a busy moment, not an outage
        // (which would count calendar quotas on local shares): it waits as long as a quota's count does.
        // Requests still find an outage within moments (a refused connection, or calls without reply)
        Duration beatTimeout = settings.quotaTimeout().compareTo(probeTimeout) > 0 ? settings.quotaTimeout() : probeTimeout;
        long period = settings.heartbeat().toNanos();
        heartbeat.scheduleWithFixedDelay(() -> beat(health.available() ? beatTimeout : probeTimeout), period, period,
                TimeUnit.NANOSECONDS);
    }

    /**
     * The bucket this instance holds for the id, at whatever limits, never moved (a refund or an excess
     * charge of a request admitted before a reconfiguration must not move the bucket back); none held:
     * {@link #bucket} at these limits.
     */
    @Override
    public QuotaBucket bucketToSettle(BucketKind kind, String id, BucketLimits limits) {
        FailoverBucket kept = buckets.getIfPresent(key(kind, id));
        return kept != null ? kept : bucket(kind, id, limits);
    }

    /**
     * The bucket for this key at these limits. Same limits instance as last time: the cached bucket, no
     * round trip. Other limits: a new bucket that first moves the Redis bucket (once), since this
     * instance, or another one, may have created it at other limits. Limits the filter started with,
     * seen for the first time, need no move: every instance creates the key at those.
     */
    @Override
    public QuotaBucket bucket(BucketKind kind, String id, BucketLimits limits) {
        String key = key(kind, id);
        FailoverBucket b = buckets.getIfPresent(key);
        if (b != null && b.limits() == limits) return b;
        // limits the filter started with need no move, even when built once more (a first shared-limits
        // record of the same file rebuilds them): only other limits, or an older bucket at other ones, do
        return buckets.asMap().compute(key, (k, old) -> old != null && old.limits() == limits ? old
                : new FailoverBucket(failover, kind, id, k, limits,
                !limits.initial() || (old != null && !old.limits().equals(limits))).replacing(old));
    }

    /**
     * One script call for all of the request's buckets and quota counters while the buckets are the
     * script's (see {@link BucketScript}): its reply is the probe, tokens included.
     */
    @Override
    public Probe takeAll(QuotaBucket[] buckets, int count, long units, boolean remaining) {
        return scripted(buckets, count) ? failover.takeAll(buckets, count, units, remaining)
                : RedisStore.super.takeAll(buckets, count, units, remaining);
    }

    /** As {@link #takeAll}: one script call that reserves every bucket within the max wait, or none. */
    @Override
    public Probe reserveAll(QuotaBucket[] buckets, int count, long units, long maxWaitNanos, boolean remaining) {
        if (maxWaitNanos <= 0) return takeAll(buckets, count, units, remaining);
        return scripted(buckets, count) ? failover.reserveAll(buckets, count, units, maxWaitNanos, remaining)
                : RedisStore.super.reserveAll(buckets, count, units, maxWaitNanos, remaining);
    }

    @Override
    public Probe waits(QuotaBucket[] buckets, int count, long units, boolean remaining) {
        return scripted(buckets, count) ? failover.waits(buckets, count, units, remaining)
                : RedisStore.super.waits(buckets, count, units, remaining);
    }

    /** True if the buckets are this store's and decided by its script. */
    private boolean scripted(QuotaBucket[] buckets, int count) {
        if (!failover.scripted()) return false;
        for (int i = 0; i < count; i++) {
            QuotaBucket b = buckets[i];
            if (!(b instanceof FailoverBucket || b instanceof ScriptCounter c && c.owner() == counters)) return false;
        }
        return true;
    }

    /**
     * {@code wall} corrected by this instance's offset to Redis's clock ({@link RedisClock}): every instance
     * tells calendar periods, their keys, expiries and resets on Redis's clock, whatever its own says.
     */
    @Override
    public Clock clock(Clock wall) {
        return clock.corrected(wall);
    }

    @Override
    public Optional<QuotaCounters> quotaCounters() {
        return Optional.of(counters);
    }

    @Override
    public int instanceCount() {
        return registry.count();
    }

    @Override
    public Optional<LimitsChannel> limitsChannel() {
        return Optional.of(limits);
    }

    @Override
    public Optional<StoreHealth> health() {
        return Optional.of(health);
    }

    @Override
    public String key(BucketKind kind, String id) {
        return settings.prefix() + ":" + kind.keyPart() + ":" + id;
    }

    @Override
    public boolean available() {
        return health.available();
    }

    @Override
    public long outages() {
        return health.outages();
    }

    @Override
    public long fallbackDecisions() {
        return health.fallbackDecisions();
    }

    @Override
    public int persistence() {
        return health.persistence();
    }

    @Override
    public long reconfigurations() {
        return failover.moves();
    }

    @Override
    public String instanceId() {
        return registry.instanceId();
    }

    @Override
    public void close() {
        if (!health.close()) return;
        heartbeat.shutdownNow();
        if (settings.localAllowance() != null) flusher.flushAll(buckets.asMap().values(), Duration.ofSeconds(2));
        if (health.available()) registry.leave();
        limits.close();
        redis.close();
    }

    /**
     * Heartbeat and probe: connect if needed, announce this instance, read the instance count. Off the
     * hot path, so it may wait longer than a request would ({@code timeout}: the first beat of a cold
     * JVM loads Netty and Lettuce).
     */
    private void beat(Duration timeout) {
        if (health.closed()) return;
        try {
            registry.beat(timeout);
            health.markUp();
            if (health.persistenceDue()) askPersistence(timeout);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            lastFailure = e;
            health.markDown(e);
        }
    }

    /**
     * Asks Redis whether it keeps its data on disk ({@code CONFIG GET save} and {@code appendonly}; on a
     * cluster, the node Lettuce sends it to): a managed Redis may refuse {@code CONFIG}, then it cannot be told.
     */
    private void askPersistence(Duration timeout) throws InterruptedException {
        var commands = redis.link().commands();
        try {
            java.util.Map<String, String> save = commands.configGet("save").get(timeout.toNanos(), TimeUnit.NANOSECONDS);
            java.util.Map<String, String> aof = commands.configGet("appendonly").get(timeout.toNanos(), TimeUnit.NANOSECONDS);
            health.persistence(save.get("save"), aof.get("appendonly"), "CONFIG GET answered nothing");
        } catch (java.util.concurrent.ExecutionException | RuntimeException e) {
            Throwable cause = e instanceof java.util.concurrent.ExecutionException && e.getCause() != null ? e.getCause() : e;
            health.persistence(null, null, "CONFIG GET refused: " + cause.getMessage());
        } catch (java.util.concurrent.TimeoutException e) {
            // asked again with the next heartbeat
        }
    }

    /** See {@link RedisConnection#warmUp}: a failure there is an outage like any other. */
    private void warmUp(boolean script) {
        try {
            redis.warmUp(settings.prefix() + ":warmup:" + registry.instanceId(), script);
        } catch (RuntimeException e) {
            lastFailure = e;
            health.markDown(e);
        }
    }
}

package io.quotagate.filter.redis;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.BucketExceptions;
import io.github.bucket4j.ConfigurationBuilder;
import io.github.bucket4j.TimeMeter;
import io.github.bucket4j.distributed.BucketProxy;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import io.github.bucket4j.distributed.proxy.RemoteBucketBuilder;
import io.github.bucket4j.distributed.proxy.optimization.DelayParameters;
import io.github.bucket4j.distributed.proxy.optimization.OptimizationListener;
import io.github.bucket4j.distributed.proxy.optimization.Optimizations;
import io.github.bucket4j.distributed.proxy.optimization.delay.DelayOptimization;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import io.quotagate.filter.core.QuotaClock;
import io.quotagate.filter.core.BucketKind;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.store.StoreUnavailableException;
import io.quotagate.plans.StoreSettings;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;

/**
 * {@link RedisStore} on bucket4j's Lettuce compare-and-swap proxy manager.
 *
 * <p>Hot path: one volatile read ({@link #available}) decides between Redis and the fallback; while
 * Redis is up, a request costs bucket4j's GET + compare-and-swap script (2 round trips), each bounded
 * by the command timeout, retried at most {@code maxRetries} times on a conflict. Concurrent requests
 * on one key are combined by {@link Optimizations#batching()} (when enabled), which is what keeps a
 * single hot tenant from collapsing into conflicts. With a {@link StoreSettings.LocalAllowance local
 * allowance}, most decisions are taken on this instance's copy of the bucket and only one in so many
 * units, or one per {@code maxDelay}, goes to Redis (bucket4j's delaying optimisation, batched too).
 *
 * <p>Failure handling: a Redis error or timeout on any request flips {@link #available} to false
 * (once: the flip is a compare-and-set, so the outage is logged and counted once); from then on the
 * hot path never touches Redis. A single heartbeat thread writes this instance into the heartbeat set
 * every {@code heartbeat}; that same write is the probe: when it succeeds during an outage, the store
 * flips back. A conflict that outlives {@code maxRetries} is not an outage: that one operation is
 * answered locally.
 */
final class LettuceBucketStore implements RedisStore {
    private static final System.Logger LOG = System.getLogger(RedisStore.class.getName());

    /**
     * One round trip, one key (so fine on Redis Cluster), server time (so instances with skewed clocks
     * agree): announce this instance, forget the silent ones, keep the set itself expiring, count.
     */
    private static final String HEARTBEAT_SCRIPT = """
            local t = redis.call('TIME')
            local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
            local ttl = tonumber(ARGV[2])
            redis.call('ZADD', KEYS[1], now, ARGV[1])
            redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - ttl)
            redis.call('PEXPIRE', KEYS[1], ttl)
            return redis.call('ZCARD', KEYS[1])
            """;
    /** Extra life of a bucket key after it would be full again (a full bucket equals a missing one). */
    private static final Duration KEEP_AFTER_REFILL = Duration.ofSeconds(10);
    private static final RedisCodec<String, byte[]> CODEC = RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE);

    private final StoreSettings settings;
    private final RedisURI uri;
    private final String redactedUri;
    private final TimeMeter wallClock;
    private final ClientResources resources;
    private final RedisClient client;
    private final BucketStore fallback;
    private final Cache<String, FailoverBucket> buckets;
    private final String instanceId;
    private final String heartbeatKey;
    private final ScheduledExecutorService heartbeat;

    /** Connection and proxy manager; null until the first successful connect. */
    private volatile Link link;
    private volatile boolean available;
    private volatile int lastInstanceCount = 1;
    private volatile long outageStartNanos;
    private volatile Throwable lastFailure;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final LongAdder outages = new LongAdder();
    private final LongAdder fallbackDecisions = new LongAdder();
    /**
     * When an operation last succeeded on Redis. A refused or broken connection is an outage at once;
     * a timeout while other operations still succeed is a slow moment (a burst, a GC pause), so only
     * that operation is answered locally. A timeout with no success for {@link #silenceForOutageNanos}
     * is an outage.
     */
    private volatile long lastSuccessNanos = System.nanoTime();
    private final long silenceForOutageNanos;

    /** A live connection (Lettuce reconnects it after an outage) and the proxy manager on it. */
    record Link(StatefulRedisConnection<String, byte[]> connection, ProxyManager<String> proxies) {
    }

    LettuceBucketStore(StoreSettings settings, int maxTracked, Clock wallClock, QuotaClock localClock) {
        this.settings = Objects.requireNonNull(settings, "settings");
        if (settings.type() != StoreSettings.Type.REDIS) throw new IllegalArgumentException("settings are not of type redis");
        if (maxTracked <= 0) throw new IllegalArgumentException("maxTracked must be > 0, was " + maxTracked);
        Objects.requireNonNull(wallClock, "wallClock");
        // one hot key with batching has a single update in flight: allow several slow ones in a row
        this.silenceForOutageNanos = Math.max(settings.timeout().toNanos() * 10, Duration.ofMillis(500).toNanos());
        this.uri = RedisURI.create(settings.uri());
        // the connection handshake (HELLO) uses this; request commands get settings.timeout() below
        uri.setTimeout(Duration.ofSeconds(2));
        this.redactedUri = StoreSettings.redact(settings.uri());
        this.wallClock = new TimeMeter() {
            @Override
            public long currentTimeNanos() {
                Instant now = wallClock.instant();
                return now.getEpochSecond() * 1_000_000_000L + now.getNano();
            }

            @Override
            public boolean isWallClockBased() {
                return true;
            }
        };
        this.fallback = BucketStore.local(maxTracked, localClock);
        // maintenance on the calling thread: no common-pool wake-up on the request path
        this.buckets = Caffeine.newBuilder().maximumSize(maxTracked).expireAfterAccess(Duration.ofMinutes(10))
                .executor(Runnable::run)
                // a bucket on a local allowance may hold admitted units Redis has not seen yet: a proxy
                // dropped (idle, evicted, replaced by new limits) sends them first, off the request path
                .removalListener((String key, FailoverBucket b, RemovalCause cause) -> {
                    if (b != null && settings.localAllowance() != null) flushLater(b);
                })
                .build();
        this.instanceId = hostName() + ":" + ManagementFactory.getRuntimeMXBean().getPid() + ":"
                + UUID.randomUUID().toString().substring(0, 8);
        this.heartbeatKey = settings.prefix() + ":instances";

        this.resources = ClientResources.builder()
                .ioThreadPoolSize(2)
                .computationThreadPoolSize(2)
                // reconnect soon after Redis is back, whatever the length of the outage
                .reconnectDelay(Delay.constant(Duration.ofMillis(Math.min(500, settings.heartbeat().toMillis()))))
                .build();
        this.client = RedisClient.create(resources, uri);
        client.setOptions(ClientOptions.builder()
                .autoReconnect(true)
                // fail at once while disconnected instead of queueing requests behind a dead socket
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .timeoutOptions(TimeoutOptions.enabled(settings.timeout()))
                .socketOptions(SocketOptions.builder().connectTimeout(Duration.ofSeconds(2)).build())
                .build());

        this.heartbeat = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "quotagate-redis-heartbeat");
            t.setDaemon(true);
            return t;
        });
        beat(Duration.ofSeconds(2)); // connects, and learns the instance count before the first request
        Duration probeTimeout = settings.timeout().multipliedBy(4).compareTo(Duration.ofMillis(250)) > 0
                ? settings.timeout().multipliedBy(4) : Duration.ofMillis(250);
        if (available) warmUp();
        if (!available) {
            outages.increment();
            outageStartNanos = System.nanoTime();
            LOG.log(System.Logger.Level.WARNING, "quotagate: Redis at " + redactedUri + " unreachable at start ("
                    + lastFailure + "); answering from local buckets (" + describeFailureMode() + ") until it answers");
        }
        long period = settings.heartbeat().toNanos();
        heartbeat.scheduleWithFixedDelay(() -> beat(probeTimeout), period, period, TimeUnit.NANOSECONDS);
    }

    // ---- BucketStore ------------------------------------------------------------------------

    @Override
    public Bucket bucket(BucketKind kind, String id, BucketConfiguration configuration) {
        String key = key(kind, id);
        FailoverBucket b = buckets.getIfPresent(key);
        if (b == null || !b.configuration().equals(configuration)) {
            b = buckets.asMap().compute(key, (k, old) ->
                    old != null && old.configuration().equals(configuration) ? old : new FailoverBucket(this, kind, id, k, configuration));
        }
        return b;
    }

    @Override
    public int instanceCount() {
        return Math.max(1, lastInstanceCount);
    }

    @Override
    public String key(BucketKind kind, String id) {
        return settings.prefix() + ":" + kind.keyPart() + ":" + id;
    }

    // ---- RedisStore -------------------------------------------------------------------------

    @Override
    public boolean redisAvailable() {
        return available;
    }

    @Override
    public long outages() {
        return outages.sum();
    }

    @Override
    public long fallbackDecisions() {
        return fallbackDecisions.sum();
    }

    @Override
    public String instanceId() {
        return instanceId;
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) return;
        heartbeat.shutdownNow();
        if (settings.localAllowance() != null) flushAll(Duration.ofSeconds(2));
        Link l = link;
        if (l != null && available) {
            try {
                l.connection().sync().zrem(heartbeatKey, instanceId.getBytes(StandardCharsets.UTF_8));
            } catch (RuntimeException e) {
                // best effort: the entry expires after instanceTtl anyway
            }
        }
        if (l != null) l.connection().close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        resources.shutdown(0, 2, TimeUnit.SECONDS);
    }

    // ---- local allowance: units admitted on a copy reach Redis -------------------------------

    private void flushLater(FailoverBucket b) {
        if (closed.get()) return;
        try {
            heartbeat.execute(() -> flush(b));
        } catch (RejectedExecutionException closing) {
            // close() flushes what is still cached
        }
    }

    /**
     * Sends the units admitted on the bucket's local copy since its last synchronisation, if any (a
     * proxy without any sends nothing). Best effort: while Redis is down they are lost, at most one
     * allowance per bucket, the same bound an instance's crash has.
     */
    private void flush(FailoverBucket b) {
        BucketProxy proxy = b.currentProxy();
        if (proxy == null || !available) return;
        try {
            proxy.getOptimizationController().syncByCondition(1, Duration.ZERO);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "quotagate: units on a local allowance not sent to Redis: " + e);
        }
    }

    /** Flushes every cached bucket, for at most {@code budget} in all (on close). */
    private void flushAll(Duration budget) {
        long deadline = System.nanoTime() + budget.toNanos();
        for (FailoverBucket b : buckets.asMap().values()) {
            if (System.nanoTime() - deadline > 0) return;
            flush(b);
        }
    }

    // ---- used by FailoverBucket -------------------------------------------------------------

    /** Runs {@code op} on the Redis bucket, or on the fallback when Redis is unavailable or fails. */
    <T> T apply(FailoverBucket b, Function<Bucket, T> op) {
        if (available) { // volatile read: the whole cost of the failover on the happy path
            BucketProxy proxy = b.proxy();
            if (proxy != null) {
                try {
                    T result = op.apply(proxy);
                    long now = System.nanoTime();
                    // at most one shared write per millisecond, not one per request. With a local
                    // allowance most successes never reached Redis: a frozen Redis is then declared
                    // down by the heartbeat, whose probe times out too
                    if (now - lastSuccessNanos > 1_000_000) lastSuccessNanos = now;
                    return result;
                } catch (RuntimeException e) {
                    if (isContention(e)) return answerLocally(b, op);
                    if (!isTimeout(e) || System.nanoTime() - lastSuccessNanos > silenceForOutageNanos) {
                        markDown(e);
                    } else {
                        return answerLocally(b, op); // slow, not down: this one operation is decided locally
                    }
                }
            }
        }
        if (settings.onFailure() == StoreSettings.OnFailure.CLOSED) {
            throw new StoreUnavailableException("the shared quota store is unreachable",
                    (settings.heartbeat().toMillis() + 999) / 1000);
        }
        return answerLocally(b, op);
    }

    /** Counts a fallback decision and runs {@code op} on this instance's share of {@code b}. */
    private <T> T answerLocally(FailoverBucket b, Function<Bucket, T> op) {
        fallbackDecisions.increment();
        return op.apply(fallbackBucket(b));
    }

    /** A proxy for this bucket on the current link, or null when there is no connection yet. */
    BucketProxy newProxy(String key, BucketConfiguration configuration) {
        Link l = link;
        if (l == null) return null;
        return optimized(l.proxies().builder()).build(key, () -> configuration);
    }

    /**
     * The builder with the configured optimisation: a local allowance (bucket4j's delaying, which also
     * batches), or batching alone, or none.
     */
    private RemoteBucketBuilder<String> optimized(RemoteBucketBuilder<String> builder) {
        StoreSettings.LocalAllowance allowance = settings.localAllowance();
        if (allowance != null) {
            // on the store's clock (not bucket4j's default system clock), as the Redis state is
            return builder.withOptimization(new DelayOptimization(new DelayParameters(allowance.units(), allowance.maxDelay()),
                    OptimizationListener.createDefault(), wallClock));
        }
        return settings.batching() ? builder.withOptimization(Optimizations.batching()) : builder;
    }

    /** The local bucket holding this instance's share of {@code b}'s quota. */
    private Bucket fallbackBucket(FailoverBucket b) {
        int n = instanceCount();
        FailoverBucket.LocalShare s = b.localShare();
        if (s == null || s.instances() != n) {
            // the count is part of the id: a change of count gets a bucket of the new size
            s = new FailoverBucket.LocalShare(n, b.id() + "/" + n, share(b.configuration(), n));
            b.localShare(s);
        }
        return fallback.bucket(b.kind(), s.id(), s.configuration());
    }

    /** Every bandwidth divided by the instance count: capacity rounded down (at least 1), refill rate exact. */
    static BucketConfiguration share(BucketConfiguration configuration, int instances) {
        if (instances == 1) return configuration;
        ConfigurationBuilder builder = BucketConfiguration.builder();
        for (Bandwidth b : configuration.getBandwidths()) {
            long capacity = BucketStore.perInstanceShare(b.getCapacity(), instances);
            // tokens per (period x n) is exactly the n-th part of the rate, with no rounding
            Duration period = Duration.ofNanos(b.getRefillPeriodNanos()).multipliedBy(instances);
            long refill = b.getRefillTokens();
            builder.addLimit(l -> {
                var withCapacity = l.capacity(capacity);
                var built = b.isRefillIntervally() ? withCapacity.refillIntervally(refill, period)
                        : withCapacity.refillGreedy(refill, period);
                return b.getId() == null ? built : built.id(b.getId());
            });
        }
        return builder.build();
    }

    // ---- health -----------------------------------------------------------------------------

    private static boolean isTimeout(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof io.github.bucket4j.TimeoutException || t instanceof io.lettuce.core.RedisCommandTimeoutException
                    || t instanceof java.util.concurrent.TimeoutException) {
                return true;
            }
        }
        return false;
    }

    private static boolean isContention(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof io.github.bucket4j.TimeoutException) return false;
            if (t instanceof BucketExceptions.BucketExecutionException && String.valueOf(t.getMessage()).contains("retry attempts")) {
                return true;
            }
        }
        return false;
    }

    private void markDown(Throwable cause) {
        if (closed.get()) return;
        synchronized (this) {
            if (!available) return;
            available = false;
            outageStartNanos = System.nanoTime();
        }
        outages.increment();
        LOG.log(System.Logger.Level.WARNING, "quotagate: Redis at " + redactedUri + " failed (" + cause
                + "); answering from local buckets (" + describeFailureMode() + ") until it answers again");
    }

    private String describeFailureMode() {
        return settings.onFailure() == StoreSettings.OnFailure.CLOSED ? "on-failure: closed, answering 503"
                : "1/" + instanceCount() + " of each quota";
    }

    /**
     * Heartbeat and probe: connect if needed, announce this instance, read the instance count. Off the
     * hot path, so it may wait longer than a request would ({@code timeout}: the first beat of a cold
     * JVM loads Netty and Lettuce).
     */
    private void beat(Duration timeout) {
        if (closed.get()) return;
        try {
            Link l = link;
            if (l == null) l = connect();
            Long count = l.connection().async().<Long>eval(HEARTBEAT_SCRIPT, ScriptOutputType.INTEGER,
                    new String[]{heartbeatKey}, instanceId.getBytes(StandardCharsets.UTF_8),
                    Long.toString(settings.instanceTtl().toMillis()).getBytes(StandardCharsets.UTF_8))
                    .get(timeout.toNanos(), TimeUnit.NANOSECONDS);
            if (count != null && count > 0) lastInstanceCount = (int) Math.min(Integer.MAX_VALUE, count);
            lastSuccessNanos = System.nanoTime();
            markUp();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            lastFailure = e;
            markDown(e);
        }
    }

    private void markUp() {
        long since;
        synchronized (this) {
            if (available) return;
            available = true;
            since = outageStartNanos;
        }
        if (outages.sum() > 0) {
            LOG.log(System.Logger.Level.INFO, "quotagate: Redis at " + redactedUri + " answers again after "
                    + Duration.ofNanos(System.nanoTime() - since).toMillis() + " ms; buckets are shared again (instances: "
                    + instanceCount() + ")");
        }
    }

    /**
     * One bucket operation with a patient timeout before the first request: a cold JVM needs a few
     * hundred milliseconds to load bucket4j's remote classes and Redis to compile its script, which
     * would otherwise make the first request time out and start a needless outage. Its key expires
     * within seconds.
     */
    private void warmUp() {
        try {
            ProxyManager<String> patient = Bucket4jLettuce.casBasedBuilder(link.connection())
                    .clientClock(wallClock)
                    .requestTimeout(Duration.ofSeconds(2))
                    .expirationAfterWrite(ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ofSeconds(1)))
                    .build();
            BucketConfiguration one = BucketConfiguration.builder()
                    .addLimit(l -> l.capacity(1).refillGreedy(1, Duration.ofSeconds(1))).build();
            optimized(patient.builder()).build(settings.prefix() + ":warmup:" + instanceId, () -> one).tryConsume(1);
        } catch (RuntimeException e) {
            lastFailure = e;
            markDown(e);
        }
    }

    private Link connect() {
        StatefulRedisConnection<String, byte[]> connection = client.connect(CODEC, uri);
        connection.setTimeout(settings.timeout());
        ProxyManager<String> proxies = Bucket4jLettuce.casBasedBuilder(connection)
                .clientClock(wallClock)
                .requestTimeout(settings.timeout())
                .maxRetries(settings.maxRetries())
                .expirationAfterWrite(ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(KEEP_AFTER_REFILL))
                .build();
        Link l = new Link(connection, proxies);
        link = l;
        return l;
    }

    private static String hostName() {
        try {
            return java.net.InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            return "localhost";
        }
    }
}

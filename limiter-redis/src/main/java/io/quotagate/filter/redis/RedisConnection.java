package io.quotagate.filter.redis;

import io.github.bucket4j.BucketConfiguration;
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
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import io.quotagate.plans.StoreSettings;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;

/**
 * The client side of Redis: URI, Lettuce client and its options (timeouts, reconnect), the one
 * connection (Lettuce reconnects it after an outage) and bucket4j's proxy manager on it, and the
 * bucket proxies built with the configured optimisation. Knows nothing of health or failover.
 */
final class RedisConnection implements AutoCloseable {
    /** Extra life of a bucket key after it would be full again (a full bucket equals a missing one). */
    private static final Duration KEEP_AFTER_REFILL = Duration.ofSeconds(10);
    private static final RedisCodec<String, byte[]> CODEC = RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE);

    private final StoreSettings settings;
    private final RedisURI uri;
    private final TimeMeter wallClock;
    private final ClientResources resources;
    private final RedisClient client;
    /** Connection and proxy manager; null until the first successful connect. */
    private volatile Link link;

    /** A live connection (Lettuce reconnects it after an outage) and the proxy manager on it. */
    record Link(StatefulRedisConnection<String, byte[]> connection, ProxyManager<String> proxies) {
    }

    RedisConnection(StoreSettings settings, Clock wallClock) {
        this.settings = settings;
        this.uri = RedisURI.create(settings.uri());
        // the connection handshake (HELLO) uses this; request commands get settings.timeout() below
        uri.setTimeout(Duration.ofSeconds(2));
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
    }

    /** The link, connecting first if there is none yet. */
    Link link() {
        Link l = link;
        return l != null ? l : connect();
    }

    /** The link built so far, or null before the first successful connect. */
    Link current() {
        return link;
    }

    private synchronized Link connect() {
        if (link != null) return link;
        StatefulRedisConnection<String, byte[]> connection = client.connect(CODEC, uri);
        connection.setTimeout(settings.timeout());
        ProxyManager<String> proxies = Bucket4jLettuce.casBasedBuilder(connection)
                .clientClock(wallClock)
                .requestTimeout(settings.timeout())
                .maxRetries(settings.maxRetries())
                .expirationAfterWrite(expiringAfterRefillPlus(KEEP_AFTER_REFILL))
                .build();
        Link l = new Link(connection, proxies);
        link = l;
        return l;
    }

    /** A proxy for this key on the current link, or null when there is no connection yet. */
    BucketProxy proxy(String key, BucketConfiguration configuration) {
        Link l = link;
        if (l == null) return null;
        return optimized(l.proxies().builder()).build(key, () -> configuration);
    }

    /**
     * One bucket operation with a patient timeout before the first request: a cold JVM needs a few
     * hundred milliseconds to load bucket4j's remote classes and Redis to compile its script, which
     * would otherwise make the first request time out and start a needless outage. Its key expires
     * within seconds.
     */
    void warmUp(String key) {
        ProxyManager<String> patient = Bucket4jLettuce.casBasedBuilder(link().connection())
                .clientClock(wallClock)
                .requestTimeout(Duration.ofSeconds(2))
                .expirationAfterWrite(expiringAfterRefillPlus(Duration.ofSeconds(1)))
                .build();
        BucketConfiguration one = BucketConfiguration.builder()
                .addLimit(l -> l.capacity(1).refillGreedy(1, Duration.ofSeconds(1))).build();
        optimized(patient.builder()).build(key, () -> one).tryConsume(1);
    }

    /**
     * The builder with the configured optimisation: a local allowance (bucket4j's delaying, which also
     * batches), or batching alone, or none.
     */
    private RemoteBucketBuilder<String> optimized(RemoteBucketBuilder<String> builder) {
        StoreSettings.LocalAllowance allowance = settings.localAllowance();
        if (allowance != null) {
            // on the store's clock (not bucket4j's default system clock), as the Redis state is
            DelayParameters delay = new DelayParameters(allowance.units(), allowance.maxDelay());
            return builder.withOptimization(
                    new DelayOptimization(delay, OptimizationListener.createDefault(), wallClock));
        }
        return settings.batching() ? builder.withOptimization(Optimizations.batching()) : builder;
    }

    /** Keys expire {@code extra} after their bucket would be full again (a full bucket equals a missing one). */
    private static ExpirationAfterWriteStrategy expiringAfterRefillPlus(Duration extra) {
        return ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(extra);
    }

    /** Disconnects and stops Lettuce's threads. */
    @Override
    public void close() {
        Link l = link;
        if (l != null) l.connection().close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        resources.shutdown(0, 2, TimeUnit.SECONDS);
    }
}

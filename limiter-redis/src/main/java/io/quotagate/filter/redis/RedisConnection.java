package io.quotagate.filter.redis;

import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.TimeMeter;
import io.github.bucket4j.distributed.BucketProxy;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import io.github.bucket4j.distributed.proxy.generic.compare_and_swap.AbstractCompareAndSwapBasedProxyManager;
import io.github.bucket4j.distributed.remote.CommandResult;
import io.github.bucket4j.distributed.remote.RemoteCommand;
import io.github.bucket4j.distributed.remote.Request;
import io.github.bucket4j.distributed.proxy.RemoteBucketBuilder;
import io.github.bucket4j.distributed.proxy.optimization.DelayParameters;
import io.github.bucket4j.distributed.proxy.optimization.OptimizationListener;
import io.github.bucket4j.distributed.proxy.optimization.delay.DelayOptimization;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisException;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * The client side of Redis: the {@link RedisTopology} (one server, Sentinel's primary or a cluster)
 * with Lettuce's threads, the one connection (Lettuce reconnects it after an outage) and bucket4j's
 * proxy manager on it, and the bucket proxies of a local allowance. Knows nothing of
 * health or failover.
 */
final class RedisConnection implements AutoCloseable {
    /** Extra life of a bucket key after it would be full again (a full bucket equals a missing one). */
    private static final Duration KEEP_AFTER_REFILL = Duration.ofSeconds(10);

    private final RedisSettings settings;
    private final TimeMeter wallClock;
    private final ClientResources resources;
    private final RedisTopology topology;
    /** Connection and proxy manager; null until the first successful connect. */
    private volatile Link link;

    /** A live connection (Lettuce reconnects it after an outage) and the proxy manager on it. */
    record Link(RedisTopology.Session session, ProxyManager<String> proxies) {
        /** The connection's commands (on a cluster, each sent to the node owning its key). */
        RedisClusterAsyncCommands<String, byte[]> commands() {
            return session.commands();
        }
    }

    /** @param clock the instances' one clock (this instance's wall clock corrected to Redis's) */
    RedisConnection(RedisSettings settings, RedisClock clock) {
        this.settings = settings;
        this.wallClock = new TimeMeter() {
            @Override
            public long currentTimeNanos() {
                return clock.nowNanos();
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
        this.topology = RedisTopology.of(settings, resources);
    }

    /** The link, connecting first if there is none yet. */
    Link link() {
        Link l = link;
        return l != null ? l : connect();
    }

    /** How this connection reaches Redis (for a second, publish/subscribe connection). */
    RedisTopology topology() {
        return topology;
    }

    /** The link built so far, or null before the first successful connect. */
    Link current() {
        return link;
    }

    private synchronized Link connect() {
        if (link != null) return link;
        RedisTopology.Session session = topology.connect(settings.timeout());
        ProxyManager<String> proxies = session.proxies().get()
                .clientClock(wallClock)
                .requestTimeout(settings.timeout())
                .maxRetries(settings.maxRetries())
                .expirationAfterWrite(expiringAfterRefillPlus(KEEP_AFTER_REFILL))
                .build();
        Link l = new Link(session, proxies);
        link = l;
        return l;
    }

    /**
     * A proxy for this key on the current link, or null when there is no connection yet.
     *
     * @param creation the configuration to create the key with when it is missing, asked each time
     */
    BucketProxy proxy(String key, Supplier<BucketConfiguration> creation) {
        Link l = link;
        if (l == null) return null;
        return optimized(l.proxies().builder()).build(key, creation);
    }

    /**
     * Runs a command that only reads a bucket, on the bucket4j proxy manager itself rather than through a
     * proxy: a missing key is answered {@link CommandResult#isBucketNotFound() not found} and stays
     * missing (a proxy would create it), and no optimisation is involved. One {@code GET}; never writes.
     */
    <T> CommandResult<T> look(String key, RemoteCommand<T> command) {
        // bucket4j's compare-and-swap managers run a command on the client: public there, protected in general
        var manager = (AbstractCompareAndSwapBasedProxyManager<String>) link().proxies();
        return manager.execute(key, new Request<>(command, null, wallClock.currentTimeNanos(), null));
    }

    /**
     * The reply, within the command timeout; a failure as Lettuce's exception (a timeout as
     * {@link RedisCommandTimeoutException}), as bucket4j reports its own.
     */
    <T> T await(Future<T> future) {
        return await(future, settings.timeout());
    }

    /** As {@link #await(Future)}, within {@code timeout}. */
    <T> T await(Future<T> future, Duration timeout) {
        try {
            return future.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            // the caller decides what becomes of the command (a take that bills is watched for its reply)
            Thread.currentThread().interrupt();
            throw new RedisException(e);
        } catch (TimeoutException e) {
            throw new RedisCommandTimeoutException("no reply within " + timeout.toMillis() + " ms");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RedisException re) throw re;
            throw new RedisException(String.valueOf(e.getCause()), e.getCause()); // named in the outage's log line
        }
    }

    /** How long a command may take before it counts as failed. */
    Duration timeout() {
        return settings.timeout();
    }

    /** How long a request counted against a calendar quota waits for its script call. */
    Duration quotaTimeout() {
        return settings.quotaTimeout();
    }

    /**
     * The clock of the Redis buckets (bucket4j's client-side clock, the script's {@code now}): the wall
     * clock corrected to Redis's ({@link RedisClock}), in nanoseconds.
     */
    TimeMeter clock() {
        return wallClock;
    }

    /**
     * Loads every script of this store ({@link LuaScript}), then warms up the buckets: bucket4j's
     * ({@code script} false) by one bucket operation with a patient timeout before the first request: a
     * cold JVM needs a few hundred milliseconds to load bucket4j's remote classes, which would otherwise
     * make the first request time out and start a needless outage (its key expires within seconds). The
     * loading does the same for the scripts, which Redis compiles once.
     */
    void warmUp(String key, boolean script) {
        // loaded on every node of a cluster (Lettuce sends SCRIPT LOAD to each), so EVALSHA finds them
        List<Future<String>> loads = new ArrayList<>();
        for (LuaScript s : LuaScript.values()) loads.add(link().commands().scriptLoad(s.text()));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        try {
            for (Future<String> load : loads) load.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        } catch (ExecutionException | TimeoutException e) {
            throw new RedisException("SCRIPT LOAD failed", e);
        }
        if (script) return;
        ProxyManager<String> patient = link().session().proxies().get()
                .clientClock(wallClock)
                .requestTimeout(Duration.ofSeconds(2))
                .expirationAfterWrite(expiringAfterRefillPlus(Duration.ofSeconds(1)))
                .build();
        BucketConfiguration one = BucketConfiguration.builder()
                .addLimit(l -> l.capacity(1).refillGreedy(1, Duration.ofSeconds(1))).build();
        optimized(patient.builder()).build(key, () -> one).tryConsume(1);
    }

    /**
     * The builder with the local allowance (bucket4j's delaying optimisation, which also batches): bucket4j's
     * buckets serve only a local allowance, the store's script every exact decision.
     */
    private RemoteBucketBuilder<String> optimized(RemoteBucketBuilder<String> builder) {
        RedisSettings.LocalAllowance allowance = settings.localAllowance();
        if (allowance == null) throw new IllegalStateException("bucket4j's buckets serve only a local allowance");
        // on the store's clock (not bucket4j's default system clock), as the Redis state is
        DelayParameters delay = new DelayParameters(allowance.units(), allowance.maxDelay());
        return builder.withOptimization(new DelayOptimization(delay, OptimizationListener.createDefault(), wallClock));
    }

    /** Keys expire {@code extra} after their bucket would be full again (a full bucket equals a missing one). */
    private static ExpirationAfterWriteStrategy expiringAfterRefillPlus(Duration extra) {
        return ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(extra);
    }

    /** Disconnects and stops Lettuce's threads. */
    @Override
    public void close() {
        Link l = link;
        if (l != null) l.session().connection().close();
        topology.shutdown();
        resources.shutdown(0, 2, TimeUnit.SECONDS);
    }
}

package io.quotagate.filter.redis;

import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce.LettuceBasedProxyManagerBuilder;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.event.ClusterTopologyChangedEvent;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.protocol.ConnectionIntent;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;

import reactor.core.Disposable;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * How the store reaches Redis, chosen by the URI's scheme: one server ({@code redis://},
 * {@code rediss://}, or the primary that Sentinel names, {@code redis-sentinel://}) through a
 * {@link RedisClient}, or a Redis Cluster ({@code redis-cluster://host1:port1,...}) through a
 * {@link RedisClusterClient}. Each builds its Lettuce client and opens the one connection; the rest
 * of the store sees only {@link Session}: the commands both kinds share and bucket4j's builder on
 * that connection.
 */
sealed interface RedisTopology permits RedisTopology.Single, RedisTopology.Cluster {
    RedisCodec<String, byte[]> CODEC = RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE);
    /** The connection handshake (HELLO, and a cluster's first topology read); commands get the store's timeout. */
    Duration HANDSHAKE_TIMEOUT = Duration.ofSeconds(2);

    /** Opens the connection (Lettuce reconnects it after an outage), its commands bounded by {@code timeout}. */
    Session connect(Duration timeout);

    /** Opens a publish/subscribe connection (Lettuce subscribes again after a reconnect). */
    StatefulRedisPubSubConnection<String, String> connectPubSub();

    /** Stops the client (the resources are the caller's). */
    void shutdown();

    /**
     * One open connection: its commands (each key routed to the node owning its slot on a cluster) and
     * a fresh bucket4j compare-and-swap builder on it.
     */
    record Session(StatefulConnection<String, byte[]> connection, RedisClusterAsyncCommands<String, byte[]> commands,
                   Supplier<LettuceBasedProxyManagerBuilder<String>> proxies) {
    }

    /** How many quota timeouts a command is kept for its reply before Lettuce drops it. */
    int EXPIRY_FACTOR = 5;

    /** The topology {@code settings.uri()} names. */
    static RedisTopology of(RedisSettings settings, ClientResources resources) {
        ClientOptions options = ClientOptions.builder()
                .autoReconnect(true)
                // fail at once while disconnected instead of queueing requests behind a dead socket
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .timeoutOptions(timeouts(settings))
                .socketOptions(SocketOptions.builder().connectTimeout(HANDSHAKE_TIMEOUT).build())
                .build();
        return RedisSettings.isClusterUri(settings.uri()) ? new Cluster(settings, resources, options)
                : new Single(settings.uri(), resources, options);
    }

    /**
     * Lettuce's own expiry of a command: {@value #EXPIRY_FACTOR} × {@link RedisSettings#quotaTimeout()},
     * far beyond the store's timeout. Every caller waits for its reply only as long as it decides to (the
     * timeout for a bucket, bucket4j's request timeout, the quota timeout for a count that bills) and
     * still learns what Redis did with the call when its reply comes later, which a count that bills
     * needs: units Redis counted for a request that was refused meanwhile are given back.
     */
    private static TimeoutOptions timeouts(RedisSettings settings) {
        return TimeoutOptions.enabled(settings.quotaTimeout().multipliedBy(EXPIRY_FACTOR));
    }

    /**
     * One server, or Sentinel's primary. With {@code redis-sentinel://} Lettuce asks the sentinels
     * for the primary's address on every (re)connect, so after a promotion the reconnect lands on the
     * new primary.
     */
    final class Single implements RedisTopology {
        private final RedisURI uri;
        private final RedisClient client;

        Single(String uri, ClientResources resources, ClientOptions options) {
            this.uri = RedisURI.create(uri);
            this.uri.setTimeout(HANDSHAKE_TIMEOUT);
            this.client = RedisClient.create(resources, this.uri);
            client.setOptions(options);
        }

        @Override
        public Session connect(Duration timeout) {
            StatefulRedisConnection<String, byte[]> c = client.connect(CODEC, uri);
            c.setTimeout(timeout);
            return new Session(c, c.async(), () -> Bucket4jLettuce.casBasedBuilder(c));
        }

        @Override
        public StatefulRedisPubSubConnection<String, String> connectPubSub() {
            return client.connectPubSub(StringCodec.UTF8, uri);
        }

        @Override
        public void shutdown() {
            client.shutdown(Duration.ZERO, HANDSHAKE_TIMEOUT);
        }
    }

    /**
     * A Redis Cluster from its seed nodes. Every command carries one key, so Lettuce sends it to the
     * primary owning that key's slot; no command spans slots. The topology is read again periodically
     * and at once on the signs of a change (MOVED/ASK redirects, persistent reconnects to a node), so
     * a promoted replica receives its slots' commands within about a second of the promotion.
     */
    final class Cluster implements RedisTopology {
        /** Periodic topology read: bounds how long a promotion goes unnoticed when no trigger fires. */
        static final Duration REFRESH_PERIOD = Duration.ofSeconds(1);
        private final RedisClusterClient client;
        private final ClientResources resources;
        private volatile Disposable topologyChanges;

        Cluster(RedisSettings settings, ClientResources resources, ClientOptions options) {
            this.resources = resources;
            List<RedisURI> seeds = RedisSettings.clusterNodeUris(settings.uri()).stream().map(node -> {
                RedisURI u = RedisURI.create(node);
                u.setTimeout(HANDSHAKE_TIMEOUT);
                return u;
            }).toList();
            this.client = RedisClusterClient.create(resources, seeds);
            client.setOptions(ClusterClientOptions.builder(options)
                    .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                            .enablePeriodicRefresh(REFRESH_PERIOD)
                            .enableAllAdaptiveRefreshTriggers()
                            // the default (30 s) would ignore the triggers of a failover that follows another
                            .adaptiveRefreshTriggersTimeout(Duration.ofMillis(500))
                            // a dead primary: refresh after 2 failed reconnects (about 1 s), not 5
                            .refreshTriggersReconnectAttempts(2)
                            .build())
                    .build());
        }

        /**
         * Connects, then opens a connection to every node at once and again whenever the topology
         * changes. Why: Lettuce opens a node's connection on the first command for one of its slots,
         * and with {@code REJECT_COMMANDS} a command that finds that connection still opening is
         * refused, which the store would take for an outage (at start, and at the first command for a
         * promoted replica's slots). Connections are keyed by intent, host and port, the key that
         * routing by slot looks up, so the commands find them open.
         */
        @Override
        public Session connect(Duration timeout) {
            StatefulRedisClusterConnection<String, byte[]> c = client.connect(CODEC);
            c.setTimeout(timeout);
            try {
                openNodeConnections(c).get(HANDSHAKE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ExecutionException | TimeoutException e) {
                // a node that is down now: its connection opens with the first command or the next change
            }
            topologyChanges = resources.eventBus().get().filter(e -> e instanceof ClusterTopologyChangedEvent)
                    .subscribe(e -> {
                        try {
                            openNodeConnections(c);
                        } catch (RuntimeException closing) {
                            // a change seen while the store closes the connection: nothing left to open
                        }
                    });
            return new Session(c, c.async(), () -> Bucket4jLettuce.casBasedBuilder(c));
        }

        private static CompletableFuture<Void> openNodeConnections(StatefulRedisClusterConnection<String, byte[]> c) {
            List<CompletableFuture<?>> opening = new ArrayList<>();
            for (RedisClusterNode node : c.getPartitions()) {
                RedisURI u = node.getUri();
                // a failed attempt (a dead node) is left to Lettuce's reconnects and the next change
                opening.add(c.getConnectionAsync(u.getHost(), u.getPort(), ConnectionIntent.WRITE)
                        .exceptionally(e -> null));
            }
            return CompletableFuture.allOf(opening.toArray(CompletableFuture[]::new));
        }

        /** Classic publish/subscribe is cluster-wide: a subscription on any node hears every publish. */
        @Override
        public StatefulRedisPubSubConnection<String, String> connectPubSub() {
            return client.connectPubSub(StringCodec.UTF8);
        }

        @Override
        public void shutdown() {
            Disposable d = topologyChanges;
            if (d != null) d.dispose();
            client.shutdown(Duration.ZERO, HANDSHAKE_TIMEOUT);
        }
    }
}

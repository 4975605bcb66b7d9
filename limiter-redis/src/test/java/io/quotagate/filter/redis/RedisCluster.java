package io.quotagate.filter.redis;

import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.RedisServer;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * A Redis Cluster of this test's own on loopback: six {@code redis-server} processes on free ports
 * (each with its own cluster bus port and directory under a temporary one), joined by
 * {@code redis-cli --cluster create} into three primaries with a replica each. A node timeout of
 * one second lets a replica take over within a few seconds of its primary's death. Every process is
 * ended by its PID after the test class (register it as a static {@code @RegisterExtension}).
 * Without {@code redis-server}/{@code redis-cli}, fails under {@code CI=true} and is skipped
 * elsewhere (see {@link RedisServer#requireInstalled}).
 */
final class RedisCluster implements BeforeAllCallback, AfterAllCallback {
    private static final int NODES = 6;
    private final List<RedisServer> nodes = new ArrayList<>();
    private Path dir;

    /** Starts the six nodes, creates the cluster and waits until every node reports it ok. */
    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        RedisServer.requireInstalled("redis-server", "redis-cli");
        dir = Files.createTempDirectory("quotagate-cluster");
                try {
            List<String> addresses = new ArrayList<>();
            for (int i = 0; i < NODES; i++) {
                Path nodeDir = Files.createDirectory(dir.resolve("node" + i));
                // an explicit bus port: port + 10000 (the default) may be taken, or above 65535
                RedisServer node = RedisServer.startOwn(nodeDir, List.of(), List.of("--cluster-enabled", "yes",
                        "--cluster-node-timeout", "1000", "--cluster-port", Integer.toString(RedisServer.freePort()),
                        "--cluster-config-file", "nodes.conf", "--dir", nodeDir.toString()));
                nodes.add(node);
                addresses.add("127.0.0.1:" + node.port());
            }
            List<String> create = new ArrayList<>(List.of("redis-cli", "--cluster", "create"));
            create.addAll(addresses);
            create.addAll(List.of("--cluster-replicas", "1", "--cluster-yes"));
            Process p = new ProcessBuilder(create).redirectErrorStream(true)
                    .redirectOutput(dir.resolve("create.log").toFile()).start();
            if (!p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                throw new IllegalStateException("redis-cli --cluster create failed: "
                        + Files.readString(dir.resolve("create.log")));
            }
            Await.within(20, "every node: cluster_state:ok, every replica linked", this::healthy);
        } catch (Exception | Error e) {
            afterAll(context);
            throw e;
        }
    }

    /** {@code redis-cluster://} with three of the nodes as seeds. */
    String uri() {
        return "redis-cluster://" + String.join(",", nodes.subList(0, 3).stream()
                .map(n -> "127.0.0.1:" + n.port()).toList());
    }

    /** The running nodes that are primaries now. */
    List<RedisServer> primaries() {
        return nodes.stream().filter(RedisServer::alive).filter(n -> role(n).equals("master")).toList();
    }

    /** The running primary owning {@code key}'s slot, as the nodes see the topology now. */
    RedisServer primaryOf(String key) throws IOException {
        RedisServer any = nodes.stream().filter(RedisServer::alive).findFirst().orElseThrow();
        long slot = any.integer("CLUSTER", "KEYSLOT", key);
        for (RedisServer n : primaries()) {
            for (Object range : (List<?>) n.command("CLUSTER", "SLOTS")) {
                List<?> r = (List<?>) range;
                int port = Integer.parseInt((String) ((List<?>) r.get(2)).get(1));
                if (port == n.port() && Long.parseLong((String) r.get(0)) <= slot
                        && slot <= Long.parseLong((String) r.get(1))) {
                    return n;
                }
            }
        }
        throw new IllegalStateException("no running primary owns slot " + slot);
    }

    /** Keys on {@code node} whose names start with {@code prefix}. */
    static int keys(RedisServer node, String prefix) throws IOException {
        return ((List<?>) node.command("KEYS", prefix + "*")).size();
    }

    /**
     * True when every running node says {@code cluster_state:ok}, each primary has a linked replica
     * (else killing it would leave its slots without an owner) and the nodes agree on three primaries.
     */
    boolean healthy() {
        try {
            List<RedisServer> running = nodes.stream().filter(RedisServer::alive).toList();
            for (RedisServer n : running) {
                if (!((String) n.command("CLUSTER", "INFO")).contains("cluster_state:ok")) return false;
                if (role(n).equals("slave")
                        && !((String) n.command("INFO", "replication")).contains("master_link_status:up")) {
                    return false;
                }
            }
            return primaries().size() == 3;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    private static String role(RedisServer n) {
        try {
            return (String) ((List<?>) n.command("ROLE")).get(0);
        } catch (IOException e) {
            return "unreachable";
        }
    }

    /** Ends every node by its PID and deletes the directories. */
    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        for (RedisServer n : nodes) n.close();
        nodes.clear();
        deleteTree(dir);
    }

    /** Deletes a fixture's directory and everything below it. */
    static void deleteTree(Path dir) throws IOException {
        if (dir == null) return;
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path f : files.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(f);
        }
    }
}

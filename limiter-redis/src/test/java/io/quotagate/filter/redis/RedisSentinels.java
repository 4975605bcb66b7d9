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
import java.util.List;

/**
 * A Sentinel-managed pair of this test's own on loopback: a primary, its replica and three sentinels
 * ({@code redis-server <conf> --sentinel}, quorum 2, a primary silent for one second is down,
 * failover timeout three seconds), each on a free port with its own directory under a temporary one,
 * ended by PID after the test class (register it as a static {@code @RegisterExtension}). Fails
 * under {@code CI=true} and is skipped elsewhere without {@code redis-server} (see
 * {@link RedisServer#requireInstalled}).
 */
final class RedisSentinels implements BeforeAllCallback, AfterAllCallback {
    static final String MASTER = "mymaster";
    private final List<RedisServer> data = new ArrayList<>();
    private final List<RedisServer> sentinels = new ArrayList<>();
    private Path dir;

    /** Starts the pair and the sentinels; returns when every sentinel knows the replica and the others. */
    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        RedisServer.requireInstalled("redis-server");
        dir = Files.createTempDirectory("quotagate-sentinel");
                try {
            RedisServer primary = RedisServer.startOwn(Files.createDirectory(dir.resolve("primary")),
                    List.of(), List.of());
            data.add(primary);
            RedisServer replica = RedisServer.startOwn(Files.createDirectory(dir.resolve("replica")), List.of(),
                    List.of("--replicaof", "127.0.0.1", Integer.toString(primary.port())));
            data.add(replica);
            Await.within(20, "the replica linked", () -> info(replica).contains("master_link_status:up"));
            for (int i = 0; i < 3; i++) {
                Path d = Files.createDirectory(dir.resolve("sentinel" + i));
                // a sentinel rewrites its file (discovered replicas, sentinels, epochs): its own copy
                Path conf = Files.writeString(d.resolve("sentinel.conf"), "sentinel monitor " + MASTER
                        + " 127.0.0.1 " + primary.port() + " 2\n"
                        + "sentinel down-after-milliseconds " + MASTER + " 1000\n"
                        + "sentinel failover-timeout " + MASTER + " 3000\n");
                sentinels.add(RedisServer.startOwn(d, List.of(conf.toString(), "--sentinel"), List.of()));
            }
            // a failover needs the quorum to know each other (hello messages every 2 s) and the replica
            Await.within(20, "every sentinel sees the replica and two other sentinels", () ->
                    sentinels.stream().allMatch(n -> size(n, "REPLICAS") == 1 && size(n, "SENTINELS") == 2));
        } catch (Exception | Error e) {
            afterAll(context);
            throw e;
        }
    }

    /** Lettuce's Sentinel form: {@code redis-sentinel://host1:port1,host2:port2,host3:port3/0#mymaster}. */
    String uri() {
        return "redis-sentinel://" + String.join(",", sentinels.stream().map(n -> "127.0.0.1:" + n.port()).toList())
                + "/0#" + MASTER;
    }

    /** The data node the sentinels name as primary now. */
    RedisServer primary() throws IOException {
        RedisServer sentinel = sentinels.stream().filter(RedisServer::alive).findFirst().orElseThrow();
        List<?> address = (List<?>) sentinel.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER);
        int port = Integer.parseInt((String) address.get(1));
        return data.stream().filter(n -> n.port() == port).findFirst().orElseThrow();
    }

    /** True once every sentinel names {@code node} as primary and {@code node} says it is one. */
    boolean promoted(RedisServer node) {
        try {
            for (RedisServer sentinel : sentinels) {
                List<?> address = (List<?>) sentinel.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER);
                if (Integer.parseInt((String) address.get(1)) != node.port()) return false;
            }
            return "master".equals(((List<?>) node.command("ROLE")).get(0));
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /** The data node that is not {@code node}. */
    RedisServer other(RedisServer node) {
        return data.get(0) == node ? data.get(1) : data.get(0);
    }

    private static String info(RedisServer n) {
        try {
            return (String) n.command("INFO", "replication");
        } catch (IOException e) {
            return "";
        }
    }

    private static int size(RedisServer sentinel, String what) {
        try {
            return ((List<?>) sentinel.command("SENTINEL", what, MASTER)).size();
        } catch (IOException e) {
            return -1;
        }
    }

    /** Ends every process by its PID and deletes the directories. */
    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        for (RedisServer n : sentinels) n.close();
        for (RedisServer n : data) n.close();
        sentinels.clear();
        data.clear();
        RedisCluster.deleteTree(dir);
    }
}

package io.quotagate.loadtest.bench;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.quotagate.filter.redis.RedisSettings;

import java.util.List;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads {@code INFO commandstats} of the bench's Redis, to count the commands a run cost: of the one
 * server, or summed over a cluster's primaries (which serve every bucket command).
 */
final class RedisCommandStats implements AutoCloseable {
    private static final Pattern CALLS = Pattern.compile("cmdstat_(get|eval|evalsha):calls=(\\d+)");

    private final Runnable shutdown;
    private final StatefulConnection<String, String> connection;
    private final Supplier<Iterable<String>> commandStats;

    RedisCommandStats(String uri) {
        if (RedisSettings.isClusterUri(uri)) {
            RedisClusterClient client = RedisClusterClient.create(
                    RedisSettings.clusterNodeUris(uri).stream().map(RedisURI::create).toList());
            StatefulRedisClusterConnection<String, String> c = client.connect();
            this.shutdown = client::shutdown;
            this.connection = c;
            this.commandStats = () -> c.sync().upstream().commands().info("commandstats");
        } else {
            RedisClient client = RedisClient.create(uri);
            StatefulRedisConnection<String, String> c = client.connect();
            this.shutdown = client::shutdown;
            this.connection = c;
            this.commandStats = () -> List.of(c.sync().info("commandstats"));
        }
    }

    /** Calls of GET, of EVAL and of EVALSHA so far, in that order (GET counts those scripts ran too). */
    long[] calls() {
        long[] calls = new long[3];
        for (String info : commandStats.get()) {
            Matcher m = CALLS.matcher(info);
            while (m.find()) {
                calls[switch (m.group(1)) {
                    case "get" -> 0;
                    case "eval" -> 1;
                    default -> 2;
                }] += Long.parseLong(m.group(2));
            }
        }
        return calls;
    }

    @Override
    public void close() {
        connection.close();
        shutdown.run();
    }
}

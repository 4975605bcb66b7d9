package io.quotagate.loadtest.bench;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.quotagate.filter.redis.RedisSettings;

import java.util.List;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads {@code INFO commandstats} and {@code INFO cpu} of the bench's Redis, to count the commands and the
 * Redis CPU time a run cost: of the one server, or summed over a cluster's primaries (which serve every
 * bucket command).
 */
final class RedisCommandStats implements AutoCloseable {
    private static final Pattern CALLS = Pattern.compile("cmdstat_(get|eval|evalsha):calls=(\\d+)");
    /** The main process's CPU seconds, system and user (not the {@code _children}, forked for saves). */
    private static final Pattern CPU = Pattern.compile("used_cpu_(?:sys|user):([0-9.]+)");

    private final Runnable shutdown;
    private final StatefulConnection<String, String> connection;
    private final Function<String, Iterable<String>> info;

    RedisCommandStats(String uri) {
        if (RedisSettings.isClusterUri(uri)) {
            RedisClusterClient client = RedisClusterClient.create(
                    RedisSettings.clusterNodeUris(uri).stream().map(RedisURI::create).toList());
            StatefulRedisClusterConnection<String, String> c = client.connect();
            this.shutdown = client::shutdown;
            this.connection = c;
            this.info = section -> c.sync().upstream().commands().info(section);
        } else {
            RedisClient client = RedisClient.create(uri);
            StatefulRedisConnection<String, String> c = client.connect();
            this.shutdown = client::shutdown;
            this.connection = c;
            this.info = section -> List.of(c.sync().info(section));
        }
    }

    /** Calls of GET, of EVAL and of EVALSHA so far, in that order (GET counts those scripts ran too). */
    long[] calls() {
        long[] calls = new long[3];
        for (String text : info.apply("commandstats")) {
            Matcher m = CALLS.matcher(text);
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

    /** Redis's CPU time so far (system and user), in microseconds: what its calls cost on its side. */
    long cpuMicros() {
        double seconds = 0;
        for (String text : info.apply("cpu")) {
            Matcher m = CPU.matcher(text);
            while (m.find()) seconds += Double.parseDouble(m.group(1));
        }
        return Math.round(seconds * 1e6);
    }

    @Override
    public void close() {
        connection.close();
        shutdown.run();
    }
}

package io.quotagate.loadtest.bench;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Reads {@code INFO commandstats} of the bench's Redis, to count the commands a run cost. */
final class RedisCommandStats implements AutoCloseable {
    private static final Pattern CALLS = Pattern.compile("cmdstat_(get|eval):calls=(\\d+)");

    private final RedisClient client;
    private final StatefulRedisConnection<String, String> connection;

    RedisCommandStats(String uri) {
        this.client = RedisClient.create(uri);
        this.connection = client.connect();
    }

    /** Calls of GET and of EVAL so far, in that order. */
    long[] getsAndEvals() {
        long[] calls = new long[2];
        Matcher m = CALLS.matcher(connection.sync().info("commandstats"));
        while (m.find()) calls[m.group(1).equals("get") ? 0 : 1] = Long.parseLong(m.group(2));
        return calls;
    }

    @Override
    public void close() {
        connection.close();
        client.shutdown();
    }
}

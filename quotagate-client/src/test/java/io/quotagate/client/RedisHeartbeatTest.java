package io.quotagate.client;

import io.lettuce.core.RedisClient;
import io.quotagate.filter.testing.RedisServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Redis heartbeat against a real {@code redis-server} of the test's own on a free port. Beats are
 * triggered by the test (the period is an hour) and scored by a wall clock the test moves.
 */
class RedisHeartbeatTest {
    private static final Duration PERIOD = Duration.ofHours(1);
    private static final Duration TTL = Duration.ofHours(3);
    private final AtomicLong wall = new AtomicLong(1_800_000_000_000L);
    private final String key = RedisServer.randomPrefix() + ":workers";
    private final List<AutoCloseable> closing = new ArrayList<>();
    private RedisServer redis;
    private RedisClient client;

    @BeforeEach
    void start() throws Exception {
        redis = RedisServer.startOwn();
        client = RedisClient.create(redis.uri());
    }

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : closing) c.close();
        client.shutdown();
        redis.close();
    }

    private RedisHeartbeat heartbeat() {
        RedisHeartbeat h = new RedisHeartbeat(client, key, PERIOD, TTL, wall::get);
        closing.add(0, h);
        return h;
    }

    @Test
    void countsTheInstancesThatBeatAndTheLimiterDividesByThem() throws Exception {
        RedisHeartbeat one = heartbeat();
        assertThat(one.instances()).isEqualTo(1);
        RedisHeartbeat two = heartbeat();
        assertThat(two.instances()).isEqualTo(2);
        one.beat();
        assertThat(one.instances()).isEqualTo(2);
        assertThat(redis.integer("ZCARD", key)).isEqualTo(2);

        AdaptiveLimiter limiter = AdaptiveLimiter.builder().initialRate(900).instanceCount(one).build();
        assertThat(limiter.unitsPerMinute()).isEqualTo(450);
    }

    @Test
    void anInstanceThatStopsBeatingLeavesTheCountAfterTheTtl() throws Exception {
        RedisHeartbeat alive = heartbeat();
        redis.command("ZADD", key, Long.toString(wall.get()), "gone:1");
        alive.beat();
        assertThat(alive.instances()).isEqualTo(2);
        wall.addAndGet(TTL.toMillis() - 1);
        alive.beat();
        assertThat(alive.instances()).isEqualTo(2);   // not yet older than the TTL
        wall.addAndGet(2);
        alive.beat();
        assertThat(alive.instances()).isEqualTo(1);
        assertThat(redis.command("ZSCORE", key, "gone:1")).isNull();
        assertThat(redis.integer("PTTL", key)).isPositive();   // an abandoned set expires
    }

    @Test
    void redisDownKeepsTheLastKnownCountAndRecovers() throws Exception {
        RedisHeartbeat one = heartbeat();
        RedisHeartbeat two = heartbeat();
        one.beat();
        assertThat(one.instances()).isEqualTo(2);

        redis.kill();
        one.beat();
        assertThat(one.instances()).as("Redis down: last known count kept").isEqualTo(2);

        redis.start();   // empty: nothing persisted
        one.beat();
        assertThat(one.instances()).isEqualTo(1);
        two.beat();
        one.beat();
        assertThat(one.instances()).isEqualTo(2);
    }

    @Test
    void aSourceStartedWhileRedisIsDownCountsOneUntilRedisAnswers() throws Exception {
        redis.kill();
        RedisHeartbeat h = heartbeat();
        assertThat(h.instances()).isEqualTo(1);
        redis.start();
        redis.command("ZADD", key, Long.toString(wall.get()), "other:1");
        h.beat();
        assertThat(h.instances()).isEqualTo(2);
    }

    @Test
    void closeRemovesThisInstance() throws Exception {
        RedisHeartbeat one = heartbeat();
        RedisHeartbeat two = heartbeat();
        assertThat(redis.integer("ZCARD", key)).isEqualTo(2);
        two.close();
        assertThat(redis.integer("ZCARD", key)).isEqualTo(1);
        one.beat();
        assertThat(one.instances()).isEqualTo(1);
    }

    @Test
    void thePublicFactoryBeatsBeforeItReturns() throws Exception {
        try (InstanceCountSource source = InstanceCountSource.redisHeartbeat(client, key)) {
            assertThat(source.instances()).isEqualTo(1);
            assertThat(redis.integer("ZCARD", key)).isEqualTo(1);
        }
        assertThat(redis.integer("ZCARD", key)).isZero();
    }
}

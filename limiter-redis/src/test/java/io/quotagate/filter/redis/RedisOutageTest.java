package io.quotagate.filter.redis;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.metrics.QuotaMeterBinder;
import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.RedisServer;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Redis server of the test's own, killed (or frozen) while requests flow: the filter keeps
 * answering from local buckets (or 503 when failing closed), counts the outage once, and goes back
 * to Redis after a restart.
 */
class RedisOutageTest {
    private static final Plans PLANS = PlansFile.parse("outage.yml", """
            plans:
              big:
                limits: [ { capacity: 1000000, refill: 1000000, period: 1s } ]
            tenants:
              assignments: { acme: big }     # an assigned tenant: key <prefix>:tenant:acme (others are guests)
            """);

    private RedisServer redis;
    private RedisStore store;
    private JettyServer server;
    private String prefix;

    @BeforeEach
    void startRedis() throws Exception {
        redis = RedisServer.startOwn();
        prefix = RedisServer.randomPrefix();
    }

    @AfterEach
    void stopAll() throws Exception {
        if (server != null) server.close();
        if (store != null) store.close();
        if (redis != null) redis.close();
    }

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    private void startFilter(RedisSettings.OnFailure onFailure) throws Exception {
        startFilter(onFailure, null);
    }

    private void startFilter(RedisSettings.OnFailure onFailure, RedisSettings.LocalAllowance allowance) throws Exception {
        store = RedisStore.connect(RedisSettings.of(redis.uri()).withPrefix(prefix).withOnFailure(onFailure)
                .withTimeout(Duration.ofMillis(200)).withHeartbeat(Duration.ofMillis(200), Duration.ofSeconds(2))
                .withLocalAllowance(allowance), 1_000);
        QuotaFilter filter = QuotaFilter.builder().plans(PLANS).store(store).build();
        new QuotaMeterBinder(filter.control()).bindTo(registry);
        server = JettyServer.start(filter);
    }

    @Test
    void failOpenKeepsServingThroughAKillAndReturnsToRedisAfterARestart() throws Exception {
        startFilter(RedisSettings.OnFailure.OPEN);
        try (Load load = new Load(server, 2)) {
            assertThat(send(20)).containsOnly(200);
            assertThat(redis.integer("EXISTS", prefix + ":tenant:acme")).as("on Redis before the kill").isOne();

            killAndRestart(50, () -> {
                assertThat(registry.get(QuotaMeterBinder.STORE_FALLBACK).functionCounter().count()).isPositive();
                assertThat(registry.get(QuotaMeterBinder.STORE_OUTAGES).functionCounter().count()).isEqualTo(1.0);
                assertThat(registry.get(QuotaMeterBinder.STORE_AVAILABLE).gauge().value()).isZero();
            });
            assertThat(registry.get(QuotaMeterBinder.STORE_AVAILABLE).gauge().value()).isEqualTo(1.0);

            load.stop();
            assertThat(load.statuses).as("background load").containsOnlyKeys(200);
            assertThat(load.statuses.get(200).get()).isPositive();
        }
    }

    @Test
    void aLocalAllowanceFallsBackAtItsNextSynchronisationAndReturnsAfterARestart() throws Exception {
        startFilter(RedisSettings.OnFailure.OPEN, new RedisSettings.LocalAllowance(5, Duration.ofMillis(50)));
        assertThat(send(20)).containsOnly(200);
        assertThat(redis.integer("EXISTS", prefix + ":tenant:acme")).as("synchronised to Redis").isOne();

        // the first few may still be taken on the instance's copy; the next synchronisation fails over
        killAndRestart(30, () -> { });
    }

    /**
     * Kills Redis, sends {@code whileDead} requests (all answered from local buckets, one outage
     * counted), runs {@code duringOutage}, restarts Redis empty on the same port and checks the way back.
     */
    private void killAndRestart(int whileDead, ThrowingRunnable duringOutage) throws Exception {
        redis.kill();
        assertThat(send(whileDead)).as("statuses while Redis is dead").containsOnly(200);
        assertThat(store.available()).isFalse();
        assertThat(store.outages()).isEqualTo(1);
        assertThat(store.fallbackDecisions()).isPositive();
        duringOutage.run();

        redis.start(); // same port, empty: it kept nothing
        Await.within(5, "back on Redis after the restart", store::available);
        assertThat(send(20)).containsOnly(200);
        assertThat(redis.integer("EXISTS", prefix + ":tenant:acme")).as("buckets written to the new Redis").isOne();
        assertThat(store.outages()).as("one outage, counted once").isEqualTo(1);
    }

    @FunctionalInterface
    private interface ThrowingRunnable {
        void run() throws Exception;
    }

    @Test
    void failOpenSurvivesAFrozenRedisThroughTheCommandTimeout() throws Exception {
        startFilter(RedisSettings.OnFailure.OPEN);
        freezeAndThaw(() -> { }); // the requests' own timeouts declare it down
    }

    /**
     * Freezes Redis (SIGSTOP: connections stay open, nothing answers), runs {@code first}, sends
     * requests (all answered, one outage counted), thaws it and checks the way back.
     */
    private void freezeAndThaw(ThrowingRunnable first) throws Exception {
        assertThat(send(10)).containsOnly(200);
        redis.freeze(true);
        try {
            first.run();
            assertThat(send(20)).as("statuses while Redis answers nothing").containsOnly(200);
            assertThat(store.outages()).isEqualTo(1);
        } finally {
            redis.freeze(false);
        }
        Await.within(5, "back on Redis after it thaws", store::available);
        assertThat(send(10)).containsOnly(200);
    }

    /**
     * With an allowance most decisions succeed without Redis, so they cannot vouch for it: the
     * heartbeat, whose probe times out too, declares the outage.
     */
    @Test
    void aLocalAllowanceNoticesAFrozenRedisThroughTheHeartbeat() throws Exception {
        startFilter(RedisSettings.OnFailure.OPEN, new RedisSettings.LocalAllowance(5, Duration.ofMillis(50)));
        freezeAndThaw(() -> Await.within(5, "a frozen Redis declared down", () -> !store.available()));
    }

    @Test
    void failClosedAnswers503WithRetryAfterUntilRedisIsBack() throws Exception {
        startFilter(RedisSettings.OnFailure.CLOSED);
        assertThat(send(5)).containsOnly(200);

        redis.kill();
        HttpResponse<String> refused = Http.get(server.uri("/items/1"), "acme");
        assertThat(refused.statusCode()).isEqualTo(503);
        assertThat(refused.headers().firstValue("Retry-After")).contains("1");
        assertThat(refused.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t).startsWith("application/problem+json"));
        assertThat(refused.body()).contains("\"status\":503", "\"reason\":\"store_unavailable\"", "\"tenant\":\"acme\"");
        assertThat(send(10)).containsOnly(503);
        assertThat(store.outages()).isEqualTo(1);

        redis.start();
        Await.within(5, "back on Redis after the restart", store::available);
        assertThat(send(5)).containsOnly(200);
    }

    private List<Integer> send(int n) throws Exception {
        Integer[] statuses = new Integer[n];
        for (int i = 0; i < n; i++) statuses[i] = Http.get(server.uri("/items/" + i), "acme").statusCode();
        return List.of(statuses);
    }

    /** Background requests from a few threads, until stopped; statuses counted. */
    private static final class Load implements AutoCloseable {
        final ConcurrentMap<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final Thread[] threads;

        Load(JettyServer server, int threads) {
            this.threads = new Thread[threads];
            for (int t = 0; t < threads; t++) {
                String tenant = "load" + t;
                this.threads[t] = new Thread(() -> {
                    // bounded: at most 100,000 requests even if never stopped
                    for (int i = 0; i < 100_000 && running.get(); i++) {
                        int status;
                        try {
                            status = Http.get(server.uri("/items/" + i), tenant).statusCode();
                        } catch (Exception e) {
                            status = -1;
                        }
                        statuses.computeIfAbsent(status, s -> new AtomicInteger()).incrementAndGet();
                    }
                });
                this.threads[t].start();
            }
        }

        void stop() throws InterruptedException {
            running.set(false);
            for (Thread t : threads) t.join(10_000);
        }

        @Override
        public void close() throws InterruptedException {
            stop();
        }
    }
}

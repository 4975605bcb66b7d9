package io.quotagate.filter.redis;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.RedisServer;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.Test;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A plan's per-user buckets and a route's own with Redis: one bucket for every instance, under keys of
 * their own kinds ({@code user}, {@code route}, {@code route-guest}).
 */
class RedisScopedLimitsTest {
    private static final Plans PLANS = PlansFile.parse("scoped.yml", """
            plans:
              team:
                limits: [ { capacity: 100, refill: 100, period: 1h } ]
                per-user:
                  limits: [ { capacity: 3, refill: 3, period: 1h } ]
            routes:
              - name: export
                paths: ["/export"]
                limits:
                  - { capacity: 2, refill: 2, period: 1h }
                  - { per: client-address, capacity: 50, refill: 50, period: 1h }
            tenants:
              users:
                - { type: header, name: X-User-Id }
              assignments: { acme: team }
            """);
    private static final HttpClient CLIENT = HttpClient.newHttpClient();

    record Instance(RedisStore store, QuotaFilter filter, JettyServer server) implements AutoCloseable {
        static Instance start(RedisSettings settings) throws Exception {
            RedisStore store = RedisStore.connect(settings, 1_000);
            QuotaFilter filter = QuotaFilter.builder().plans(PLANS).store(store).build();
            return new Instance(store, filter, JettyServer.start(filter));
        }

        int get(String path, String user) throws Exception {
            HttpRequest r = HttpRequest.newBuilder(server.uri(path)).timeout(Duration.ofSeconds(10))
                    .header("X-Tenant-Id", "acme").header("X-User-Id", user).build();
            return CLIENT.send(r, HttpResponse.BodyHandlers.ofString()).statusCode();
        }

        @Override
        public void close() throws Exception {
            server.close();
            store.close();
        }
    }

    /** Two filters on {@code s}: alice's per-user bucket and acme's export bucket are one for both. */
    static void assertTwoInstancesShareScopedBuckets(RedisSettings s) throws Exception {
        try (Instance a = Instance.start(s); Instance b = Instance.start(s)) {
            assertThat(a.get("/items", "alice")).isEqualTo(200);
            assertThat(b.get("/items", "alice")).isEqualTo(200);
            assertThat(a.get("/items", "alice")).isEqualTo(200);
            assertThat(b.get("/items", "alice")).as("alice's 3 per hour, across instances").isEqualTo(429);
            assertThat(b.get("/export", "bob")).isEqualTo(200);
            assertThat(a.get("/export", "carol")).isEqualTo(200);
            assertThat(b.get("/export", "dave")).as("acme's 2 exports per hour, across instances").isEqualTo(429);
            assertThat(a.store().fallbackDecisions() + b.store().fallbackDecisions()).as("all decided in Redis").isZero();
        }
    }

    @Test
    void everyInstanceTakesFromTheSameUserAndRouteBucketsInRedis() throws Exception {
        RedisServer redis = RedisServer.shared();
        String prefix = RedisServer.randomPrefix();
        RedisSettings s = RedisSettings.of(redis.uri()).withPrefix(prefix).withTimeout(Duration.ofMillis(500));
        assertTwoInstancesShareScopedBuckets(s);
        assertThat(redis.command("EXISTS", prefix + ":user:acme/alice")).isEqualTo("1");
        assertThat(redis.command("EXISTS", prefix + ":route:export/acme")).isEqualTo("1");
        assertThat(redis.command("EXISTS", prefix + ":route-guest:export/@127.0.0.1")).isEqualTo("1");
    }
}

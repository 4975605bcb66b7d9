package io.quotagate.filter.redis;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.RedisServer;
import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import io.quotagate.plans.RouteRule;
import org.junit.jupiter.api.Test;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Per-user and route limits are part of the shared limits (record format 3): an instance running an
 * older plans file enforces the per-user and route limits of the file published last, on its own
 * routes (paths and costs its file's), and a file without them, published later, takes them away
 * from every instance. Two filters on one Redis prefix, real Jetty.
 */
class SharedScopedLimitsTest {
    /** The file published last: 3 per user, 2 exports per tenant, 2 logins per user. */
    static final Plans NEW = PlansFile.parse("new.yml", """
            plans:
              team:
                limits: [ { capacity: 100, refill: 100, period: 1h } ]
                per-user:
                  limits: [ { name: seat, capacity: 3, refill: 3, period: 1h } ]
            routes:
              - name: export
                paths: ["/export"]
                limits:
                  - { name: hourly, capacity: 2, refill: 2, period: 1h }
                  - { name: addr, per: client-address, capacity: 50, refill: 50, period: 1h }
              - name: login
                paths: ["/login"]
                limits: [ { per: user, capacity: 2, refill: 2, period: 1h } ]
            tenants:
              users:
                - { type: header, name: X-User-Id }
              assignments: { acme: team }
            """);
    /** The older file: no per-user limits, 5 items per tenant, 20 exports on two paths, no login route. */
    static final Plans OLDER = PlansFile.parse("older.yml", """
            plans:
              team:
                limits: [ { capacity: 100, refill: 100, period: 1h } ]
            routes:
              - name: items
                paths: ["/items/**"]
                limits: [ { capacity: 5, refill: 5, period: 1h } ]
              - name: export
                paths: ["/export", "/v1/export"]
                limits: [ { capacity: 20, refill: 20, period: 1h } ]
            tenants:
              users:
                - { type: header, name: X-User-Id }
              assignments: { acme: team }
            """);
    private static final HttpClient CLIENT = HttpClient.newHttpClient();

    record Instance(RedisStore store, QuotaFilter filter, JettyServer server) implements AutoCloseable {
        static Instance start(Plans plans, RedisSettings settings) throws Exception {
            RedisStore store = RedisStore.connect(settings, 1_000);
            QuotaFilter filter = QuotaFilter.builder().plans(plans).store(store).build();
            return new Instance(store, filter, JettyServer.start(filter));
        }

        HttpResponse<String> get(String path, String user) throws Exception {
            HttpRequest r = HttpRequest.newBuilder(server.uri(path)).timeout(Duration.ofSeconds(10))
                    .header("X-Tenant-Id", "acme").header("X-User-Id", user).build();
            return CLIENT.send(r, HttpResponse.BodyHandlers.ofString());
        }

        int status(String path, String user) throws Exception {
            return get(path, user).statusCode();
        }

        Plans plans() {
            return filter.control().plans();
        }

        RouteRule route(String name) {
            return plans().routes().stream().filter(r -> r.name().equals(name)).findFirst().orElseThrow();
        }

        @Override
        public void close() throws Exception {
            server.close();
            store.close();
        }
    }

    @Test
    void anInstanceWithAnOlderFileEnforcesThePublishedPerUserAndRouteLimits() throws Exception {
        RedisServer redis = RedisServer.shared();
        String prefix = RedisServer.randomPrefix();
        RedisSettings s = RedisSettings.of(redis.uri()).withPrefix(prefix).withTimeout(Duration.ofMillis(500));
        try (Instance b = Instance.start(OLDER, s)) {
            // alone, B enforces its own file: acme's 5 items an hour, no per-user limit
            List<Integer> before = new ArrayList<>();
            for (int i = 0; i < 6; i++) before.add(b.status("/items/1", "alice"));
            assertThat(before).containsExactly(200, 200, 200, 200, 200, 429);
            assertThat(String.valueOf(redis.command("HGET", prefix + ":limits", "body"))).startsWith("{\"format\":3,");

            try (Instance a = Instance.start(NEW, s)) {
                // A published last: B follows within the 2 s of every shared change
                Await.within(2, "B enforces the published per-user limits", () ->
                        b.plans().plan("team").orElseThrow().perUser().size() == 1);
                assertThat(b.plans().plan("team").orElseThrow().perUser())
                        .containsExactly(new Bandwidth("seat", 3, 3, Duration.ofHours(1)));
                assertThat(b.route("export").limits()).isEqualTo(NEW.routes().get(0).limits());
                assertThat(b.route("export").paths()).as("B's own route").isEqualTo(OLDER.routes().get(1).paths());
                assertThat(b.route("items").limits()).as("the published file limits no items").isEmpty();
                assertThat(b.filter.control().limitsStatus().fileAgrees()).isFalse();
                assertThat(b.filter.control().limitsStatus().source()).isEqualTo("new.yml");

                // items: B's own 5 an hour are gone (acme used them up above), each user has 3, over both instances
                List<Integer> items = new ArrayList<>();
                for (int i = 0; i < 4; i++) items.add((i % 2 == 0 ? b : a).status("/items/1", "bob"));
                assertThat(items).as("bob: 3 of the published per-user limit").containsExactly(200, 200, 200, 429);
                HttpResponse<String> refused = b.get("/items/2", "bob");
                assertThat(refused.statusCode()).isEqualTo(429);
                assertThat(refused.body()).contains("\"reason\":\"user_rate\"");
                for (int i = 0; i < 3; i++) assertThat(b.status("/items/1", "carol")).isEqualTo(200);

                // export: 2 an hour per tenant, taken through B's own path as through A's
                assertThat(a.status("/export", "dave")).isEqualTo(200);
                assertThat(b.status("/v1/export", "erin")).isEqualTo(200);
                HttpResponse<String> third = b.get("/v1/export", "frank");
                assertThat(third.statusCode()).as("the published 2, not B's 20").isEqualTo(429);
                assertThat(third.body()).contains("\"reason\":\"route_rate\"");

                // login: a route of A's only; B has none of that name and ignores its limits
                for (int i = 0; i < 2; i++) assertThat(a.status("/login", "gina")).isEqualTo(200);
                assertThat(a.get("/login", "gina").body()).contains("\"reason\":\"route_user_rate\"");
                assertThat(b.status("/login", "hank")).as("B: no login route, a plain request").isEqualTo(200);
                assertThat(a.store().fallbackDecisions() + b.store().fallbackDecisions()).as("all decided in Redis").isZero();

                // B publishes its file again (a reload): its limits, per-user none, now hold on A too
                b.filter.control().apply(OLDER);
                Await.within(2, "A drops the per-user limits", () ->
                        a.plans().plan("team").orElseThrow().perUser().isEmpty());
                assertThat(a.route("export").limits()).isEqualTo(OLDER.routes().get(1).limits());
                assertThat(a.route("login").limits()).as("the published file has no login limits").isEmpty();
                assertThat(String.valueOf(redis.command("HGET", prefix + ":limits", "body")))
                        .as("a file with route limits").startsWith("{\"format\":3,");
                for (int i = 0; i < 5; i++) {
                    assertThat(a.status("/login", "gina")).as("gina's login limit is gone on A").isEqualTo(200);
                }
            }
        }
    }
}

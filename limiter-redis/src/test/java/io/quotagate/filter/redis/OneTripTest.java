package io.quotagate.filter.redis;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.store.BucketLimits;
import io.quotagate.filter.store.QuotaBucket;
import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.Race;
import io.quotagate.filter.testing.RedisServer;
import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.PlansFile;

import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One round trip per request on real Jetty and a Redis of the test's own, counted by Redis itself
 * ({@code INFO commandstats}): a published plan with a global quota, a guest behind the guest pool, and
 * their refusals, whose Retry-After and {@code RateLimit} fields come from the same script call.
 */
class OneTripTest {

    /** A bucket of 100 units refilled by one a day: what a test takes does not come back during it. */
    private static final BucketLimits HUNDRED_A_DAY =
            BucketLimits.of(List.of(new Bandwidth("b", 100, 1, Duration.ofDays(1))));

    /** The store on its script (the default) at {@code own}, with a random prefix. */
    private static RedisStore scriptStore(RedisServer own, Duration timeout, Duration heartbeat) {
        return scriptStore(own, RedisServer.randomPrefix(), timeout, heartbeat);
    }

    /** As {@link #scriptStore(RedisServer, Duration, Duration)}, with {@code prefix}. */
    private static RedisStore scriptStore(RedisServer own, String prefix, Duration timeout, Duration heartbeat) {
        return RedisStore.connect(RedisSettings.of(own.uri()).withPrefix(prefix)
                .withTimeout(timeout).withHeartbeat(heartbeat, Duration.ofSeconds(2).plus(heartbeat)), 1_000);
    }

    /**
     * The script calls the requests made: every {@code EVALSHA} but the shared limits' version checks, which
     * a filter on the store runs once a second ({@code SharedLimits.CHECK_INTERVAL}) whatever the traffic, so
     * a slow machine's requests that take longer than that see one or two of them between the reset and the
     * count. Each check is one {@code limits-read.lua}, the only script that calls {@code HSTRLEN}.
     */
    private static long requestScriptCalls(RedisServer own) throws java.io.IOException {
        return own.calls("evalsha") - own.calls("hstrlen");
    }

    @Test
    void everyDecisionAdmittedOrRefusedPublishedOrNotCostsOneScriptCall() throws Exception {
        String prefix = RedisServer.randomPrefix();
        try (RedisServer own = RedisServer.startOwn();
             RedisStore store = RedisStore.connect(RedisSettings.of(own.uri()).withPrefix(prefix)
                     .withTimeout(Duration.ofSeconds(1)).withHeartbeat(Duration.ofMinutes(1), Duration.ofMinutes(2)),
                     1_000)) {
            QuotaFilter filter = QuotaFilter.builder().plans(PlansFile.parse("one-trip.yml", """
                    plans:
                      pro: { publish: true, limits: [ { capacity: 5, refill: 1, period: 1h } ] }
                      free: { limits: [ { capacity: 3, refill: 1, period: 1h } ] }
                    global: { limits: [ { capacity: 1000, refill: 1000, period: 1s } ] }
                    tenants:
                      default-plan: free
                      unknown: default
                      assignments: { acme: pro }
                      guests: { limits: [ { capacity: 100, refill: 1, period: 1h } ] }
                    """)).store(store).build();
            try (JettyServer server = JettyServer.start(filter)) {
                own.command("CONFIG", "RESETSTAT");
                int[] acme = new int[7];
                HttpResponse<String> last = null;
                for (int i = 0; i < acme.length; i++) {
                    last = Http.get(server.uri("/items/" + i), "acme");
                    acme[i] = last.statusCode();
                }
                int[] guest = new int[4];
                for (int i = 0; i < guest.length; i++) guest[i] = Http.get(server.uri("/items/" + i), "walk-in").statusCode();

                assertThat(acme).containsExactly(200, 200, 200, 200, 200, 429, 429);
                assertThat(guest).containsExactly(200, 200, 200, 429);
                assertThat(last.headers().firstValue("Retry-After")).as("the wait for one unit").hasValue("3600");
                assertThat(last.headers().firstValue("RateLimit")).isPresent();
                assertThat(requestScriptCalls(own)).as("one script call per request, whatever its buckets")
                        .isEqualTo(acme.length + guest.length);
                assertThat(own.calls("eval")).isZero();
                long keysRead = own.calls("get");
                assertThat(keysRead).as("only the script's own reads: acme 2 keys, the guest 3")
                        .isEqualTo(2L * acme.length + 3L * guest.length);
                assertThat(store.fallbackDecisions()).isZero();
            }
        }
    }

    /**
     * A plan whose one bucket counts a token bucket, a GCRA cell and a sliding window, and a GCRA global quota:
     * still one script call per request, admitted or refused, its Retry-After the sliding window's.
     */
    @Test
    void aRequestOnBucketsOfMixedAlgorithmsStillCostsOneScriptCall() throws Exception {
        String prefix = RedisServer.randomPrefix();
        try (RedisServer own = RedisServer.startOwn();
             RedisStore store = scriptStore(own, prefix, Duration.ofSeconds(1), Duration.ofMinutes(1))) {
            io.quotagate.plans.Plans parsed = PlansFile.parse("one-trip-mixed.yml", """
                    plans:
                      pro: { publish: true, limits: [ { capacity: 5, refill: 1, period: 1h } ] }
                    global: { limits: [ { capacity: 1000, refill: 1000, period: 1s } ] }
                    tenants:
                      assignments: { acme: pro }
                    """);
            io.quotagate.plans.Plans mixed = io.quotagate.plans.Plans.from(parsed)
                    .plan(io.quotagate.plans.Plan.from(parsed.plan("pro").orElseThrow()).limits(List.of(
                            new Bandwidth("burst", 5, 1, Duration.ofHours(1), io.quotagate.plans.Algorithm.TOKEN_BUCKET),
                            new Bandwidth("cell", 6, 1, Duration.ofHours(1), io.quotagate.plans.Algorithm.GCRA),
                            new Bandwidth("window", 4, 4, Duration.ofHours(1), io.quotagate.plans.Algorithm.SLIDING_WINDOW)))
                            .build())
                    .global(new io.quotagate.plans.GlobalQuota(List.of(
                            new Bandwidth("g", 1000, 1000, Duration.ofSeconds(1), io.quotagate.plans.Algorithm.GCRA))))
                    .build();
            QuotaFilter filter = QuotaFilter.builder().plans(mixed).store(store).build();
            try (JettyServer server = JettyServer.start(filter)) {
                own.command("CONFIG", "RESETSTAT");
                int[] statuses = new int[6];
                HttpResponse<String> last = null;
                for (int i = 0; i < statuses.length; i++) {
                    last = Http.get(server.uri("/items/" + i), "acme");
                    statuses[i] = last.statusCode();
                }
                assertThat(statuses).as("the window's 4 in any hour").containsExactly(200, 200, 200, 200, 429, 429);
                // the window lets its 4 go when their sub-window (6 minutes) leaves it: an hour and up to 6 minutes
                long retryAfter = Long.parseLong(last.headers().firstValue("Retry-After").orElseThrow());
                assertThat(retryAfter).isBetween(3600L, 3960L);
                assertThat(last.headers().firstValue("RateLimit").orElseThrow()).contains("\"window\";r=0");
                assertThat(requestScriptCalls(own)).as("one script call per request, whatever the algorithms")
                        .isEqualTo(statuses.length);
                assertThat(own.calls("eval")).isZero();
                assertThat(store.fallbackDecisions()).isZero();
            }
        }
    }

    @Test
    void aRequestWithAUserARouteAndAMonthlyQuotaStillCostsOneScriptCall() throws Exception {
        String prefix = RedisServer.randomPrefix();
        try (RedisServer own = RedisServer.startOwn();
             RedisStore store = scriptStore(own, prefix, Duration.ofSeconds(1), Duration.ofMinutes(1))) {
            QuotaFilter filter = QuotaFilter.builder().plans(PlansFile.parse("one-trip-scoped.yml", """
                    plans:
                      team:
                        limits: [ { capacity: 100, refill: 100, period: 1h } ]
                        quotas: [ { name: monthly, limit: 6, per: month } ]
                        per-user: { limits: [ { capacity: 4, refill: 4, period: 1h } ] }
                    routes:
                      - name: export
                        paths: ["/export"]
                        limits: [ { capacity: 50, refill: 50, period: 1h } ]
                    tenants:
                      users: [ { type: header, name: X-User-Id } ]
                      assignments: { acme: team }
                    """)).store(store).build();
            try (JettyServer server = JettyServer.start(filter)) {
                own.command("CONFIG", "RESETSTAT");
                int[] statuses = new int[8];
                HttpResponse<String> last = null;
                for (int i = 0; i < statuses.length; i++) {
                    // ann sends 5 (her 5th refused by her own bucket of 4), then bob 3 (his 3rd by the quota of 6)
                    String user = i < 5 ? "ann" : "bob";
                    java.net.http.HttpRequest r = java.net.http.HttpRequest.newBuilder(server.uri("/export"))
                            .header("X-Tenant-Id", "acme").header("X-User-Id", user).build();
                    last = java.net.http.HttpClient.newHttpClient().send(r, HttpResponse.BodyHandlers.ofString());
                    statuses[i] = last.statusCode();
                }
                assertThat(statuses).containsExactly(200, 200, 200, 200, 429, 200, 200, 429);
                assertThat(last.body()).contains("\"reason\":\"quota\"").contains("monthly");
                assertThat(requestScriptCalls(own)).as("tenant, user, route and quota: one call per request")
                        .isEqualTo(statuses.length);
                assertThat(own.calls("eval")).isZero();
                assertThat(own.command("GET", prefix + ":quota:monthly:acme:"
                        + java.time.LocalDate.now(java.time.ZoneOffset.UTC).withDayOfMonth(1)))
                        .as("the counter, as INCRBY keeps it").isEqualTo("6");
                assertThat(store.fallbackDecisions()).isZero();
            }
        }
    }

    /**
     * A calendar quota's counter sends the request's own wait until the reset with its limits; concurrent
     * requests of one tenant still share calls (the wait is not a limit), every request counted once.
     */
    @Test
    void concurrentRequestsOfATenantWithAMonthlyQuotaShareScriptCalls() throws Exception {
        String prefix = RedisServer.randomPrefix();
        try (RedisServer own = RedisServer.startOwn();
             RedisStore store = scriptStore(own, prefix, Duration.ofSeconds(2), Duration.ofMinutes(1))) {
            QuotaFilter filter = QuotaFilter.builder().plans(PlansFile.parse("one-trip-monthly.yml", """
                    plans:
                      team:
                        limits: [ { capacity: 100000, refill: 100000, period: 1h } ]
                        quotas: [ { name: monthly, limit: 100000, per: month } ]
                    tenants:
                      assignments: { acme: team }
                    """)).store(store).build();
            try (JettyServer server = JettyServer.start(filter)) {
                java.net.http.HttpClient client = java.net.http.HttpClient.newHttpClient();
                java.net.http.HttpRequest r = java.net.http.HttpRequest.newBuilder(server.uri("/items"))
                        .header("X-Tenant-Id", "acme").build();
                client.send(r, HttpResponse.BodyHandlers.discarding()); // connections and classes warm
                own.command("CONFIG", "RESETSTAT");
                int threads = 8;
                int each = 40;
                Race.run(threads, t -> {
                    for (int i = 0; i < each; i++) {
                        assertThat(client.sendAsync(r, HttpResponse.BodyHandlers.discarding()).join().statusCode())
                                .isEqualTo(200);
                    }
                });
                long decisions = (long) threads * each;
                assertThat(own.calls("evalsha")).as("script calls for %d concurrent requests", decisions)
                        .isPositive().isLessThan(decisions);
                assertThat(own.command("GET", prefix + ":quota:monthly:acme:"
                        + java.time.LocalDate.now(java.time.ZoneOffset.UTC).withDayOfMonth(1)))
                        .as("every request counted once").isEqualTo(Long.toString(decisions + 1));
                assertThat(store.fallbackDecisions()).isZero();
            }
        }
    }

    /**
     * Decisions that come while a script call is out go together in the next one: fewer calls than
     * decisions, and each still decided on its own (a hot bucket hands out exactly its capacity, each
     * thread's own bucket loses exactly what it took).
     */
    @Test
    void concurrentDecisionsShareScriptCallsAndEachIsStillDecidedExactly() throws Exception {
        try (RedisServer own = RedisServer.startOwn();
             RedisStore store = scriptStore(own, Duration.ofSeconds(2), Duration.ofMinutes(1))) {
            BucketLimits limits = HUNDRED_A_DAY;
            int threads = 8;
            int each = 50;
            own.command("CONFIG", "RESETSTAT");
            AtomicLong admitted = new AtomicLong();
            Race.run(threads, t -> {
                QuotaBucket hot = store.bucket(BucketKind.TENANT, "hot", limits);
                QuotaBucket mine = store.bucket(BucketKind.TENANT, "thread-" + t, limits);
                for (int i = 0; i < each; i++) {
                    if (hot.tryTake(1)) admitted.incrementAndGet();
                    assertThat(mine.tryTake(1)).isTrue();
                }
            });

            assertThat(admitted.get()).as("the hot bucket's capacity, exactly").isEqualTo(100);
            for (int t = 0; t < threads; t++) {
                assertThat(store.bucket(BucketKind.TENANT, "thread-" + t, limits).available()).isEqualTo(100 - each);
            }
            long decisions = 2L * threads * each;
            assertThat(own.calls("evalsha")).as("script calls for %d concurrent decisions", decisions)
                    .isPositive().isLessThan(decisions);
            assertThat(store.fallbackDecisions()).isZero();
        }
    }

    /**
     * Calls sent while Redis is frozen (connections open, nothing answered) and the decisions queued
     * behind them time out and are decided locally; once Redis thaws, the next decisions go to Redis
     * again: nothing stays queued behind a call that did not answer in time.
     */
    @Test
    void decisionsQueuedBehindACallThatTimedOutDoNotHoldBackTheOnesAfterRedisAnswersAgain() throws Exception {
        try (RedisServer own = RedisServer.startOwn();
             RedisStore store = scriptStore(own, Duration.ofMillis(200), Duration.ofMillis(200))) {
            QuotaBucket bucket = store.bucket(BucketKind.TENANT, "frozen", HUNDRED_A_DAY);
            assertThat(bucket.tryTake(1)).isTrue();
            own.freeze(true);
            try {
                Race.run(4, t -> bucket.tryTake(1));
            } finally {
                own.freeze(false);
            }
            assertThat(store.fallbackDecisions()).as("decided locally while frozen").isPositive();
            Await.within(10, "back on Redis after it thaws", store::available);
            long local = store.fallbackDecisions();
            own.command("CONFIG", "RESETSTAT");
            for (int i = 0; i < 5; i++) assertThat(bucket.tryTake(1)).isTrue();
            assertThat(store.fallbackDecisions()).as("decided on Redis").isEqualTo(local);
            assertThat(own.calls("evalsha")).isEqualTo(5);
        }
    }

    /**
     * A published plan with a calendar quota: the response's {@code RateLimit} fields for the quota come
     * from the request's own script call (what it noted of the counter), not from one more read.
     */
    @Test
    void aPublishedQuotaIsPublishedFromTheScriptCallWithoutAnotherRead() throws Exception {
        String prefix = RedisServer.randomPrefix();
        try (RedisServer own = RedisServer.startOwn();
             RedisStore store = scriptStore(own, prefix, Duration.ofSeconds(1), Duration.ofMinutes(1))) {
            QuotaFilter filter = QuotaFilter.builder().plans(PlansFile.parse("one-trip-quota.yml", """
                    plans:
                      pro:
                        publish: true
                        limits: [ { name: burst, capacity: 100, refill: 100, period: 1h } ]
                        quotas: [ { name: monthly, limit: 3, per: month } ]
                    tenants: { assignments: { acme: pro } }
                    """)).store(store).build();
            try (JettyServer server = JettyServer.start(filter)) {
                own.command("CONFIG", "RESETSTAT");
                List<String> fields = new java.util.ArrayList<>();
                int[] statuses = new int[4];
                for (int i = 0; i < statuses.length; i++) {
                    HttpResponse<String> r = Http.get(server.uri("/items"), "acme");
                    statuses[i] = r.statusCode();
                    fields.add(r.headers().firstValue("RateLimit").orElseThrow());
                }
                assertThat(statuses).containsExactly(200, 200, 200, 429);
                assertThat(fields.get(0)).contains("\"monthly\";r=2;");
                assertThat(fields.get(1)).contains("\"monthly\";r=1;");
                assertThat(fields.get(2)).contains("\"monthly\";r=0;");
                assertThat(fields.get(3)).startsWith("\"monthly\";r=0;");
                assertThat(requestScriptCalls(own)).as("one script call per request").isEqualTo(statuses.length);
                assertThat(own.calls("get")).as("the script's reads only: the bucket and the counter")
                        .isEqualTo(2L * statuses.length);
                assertThat(store.fallbackDecisions()).isZero();
            }
        }
    }

    /**
     * A published plan's per-user and route limits: each response's fields for them, the 429's that name
     * the refusing one included, come from the request's own script call, without another read.
     */
    @Test
    void perUserAndRouteLimitsArePublishedFromTheScriptCallWithoutAnotherRead() throws Exception {
        String prefix = RedisServer.randomPrefix();
        try (RedisServer own = RedisServer.startOwn();
             RedisStore store = scriptStore(own, prefix, Duration.ofSeconds(1), Duration.ofMinutes(1))) {
            QuotaFilter filter = QuotaFilter.builder().plans(PlansFile.parse("one-trip-published-scoped.yml", """
                    plans:
                      team:
                        publish: true
                        limits: [ { name: minute, capacity: 600, refill: 600, period: 1h } ]
                        per-user: { limits: [ { name: seat, capacity: 3, refill: 3, period: 1h } ] }
                    routes:
                      - name: login
                        paths: ["/login"]
                        limits: [ { name: attempts, per: client-address, capacity: 5, refill: 5, period: 1h } ]
                    tenants:
                      users: [ { type: header, name: X-User-Id } ]
                      assignments: { acme: team }
                    """)).store(store).build();
            try (JettyServer server = JettyServer.start(filter)) {
                own.command("CONFIG", "RESETSTAT");
                int[] statuses = new int[7];
                List<String> fields = new java.util.ArrayList<>();
                for (int i = 0; i < statuses.length; i++) {
                    // ann sends 4 (her 4th refused by her seat of 3), then bob 3 (his 3rd by the address's 5)
                    java.net.http.HttpRequest r = java.net.http.HttpRequest.newBuilder(server.uri("/login"))
                            .header("X-Tenant-Id", "acme").header("X-User-Id", i < 4 ? "ann" : "bob").build();
                    HttpResponse<String> response = java.net.http.HttpClient.newHttpClient()
                            .send(r, HttpResponse.BodyHandlers.ofString());
                    statuses[i] = response.statusCode();
                    fields.add(response.headers().firstValue("RateLimit").orElseThrow());
                }
                assertThat(statuses).containsExactly(200, 200, 200, 429, 200, 200, 429);
                assertThat(fields.get(0)).contains("\"per-user.seat\";r=2;").contains("\"login.client-address.attempts\";r=4;");
                assertThat(fields.get(2)).contains("\"per-user.seat\";r=0;").contains("\"login.client-address.attempts\";r=2;");
                assertThat(fields.get(3)).as("the seat alone, as its refusal's call left it")
                        .matches("\"per-user\\.seat\";r=0;t=\\d+;pk=:[A-Za-z0-9+/=]+:");
                assertThat(fields.get(5)).contains("\"per-user.seat\";r=1;").contains("\"login.client-address.attempts\";r=0");
                assertThat(fields.get(6)).as("the address's attempts alone, without pk")
                        .matches("\"login\\.client-address\\.attempts\";r=0;t=\\d+");
                assertThat(requestScriptCalls(own)).as("one script call per request").isEqualTo(statuses.length);
                assertThat(own.calls("get")).as("the script's reads only: the tenant's, the user's and the address's")
                        .isEqualTo(3L * statuses.length);
                assertThat(store.fallbackDecisions()).isZero();
            }
        }
    }
}

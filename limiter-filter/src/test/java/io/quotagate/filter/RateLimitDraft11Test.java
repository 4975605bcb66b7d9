package io.quotagate.filter;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.PlansFile;
import org.greenbytes.http.sfv.ByteSequenceItem;
import org.greenbytes.http.sfv.IntegerItem;
import org.greenbytes.http.sfv.Item;
import org.greenbytes.http.sfv.ListElement;
import org.greenbytes.http.sfv.Parser;
import org.greenbytes.http.sfv.StringItem;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The published fields read as draft-ietf-httpapi-ratelimit-headers-11 defines them, parsed by an
 * RFC 8941/9651 structured-fields parser this project did not write (greenbytes' {@code structured-fields}),
 * and their meaning on a 429 from each kind of limit.
 */
class RateLimitDraft11Test {
    private static final String PLANS = """
            global: { limits: [ { name: api, capacity: 60, refill: 60, period: 1m } ] }
            plans:
              open:
                publish: true
                concurrency: { reports: 1 }
                limits:
                  - { name: burst, capacity: 20, refill: 10, period: 10s }
                  - { name: daily, capacity: 50, refill: 50, period: 1d }
            routes:
              - { name: reports, paths: ["/reports/*"], group: reports }
            tenants:
              default-plan: open
              assignments: { acme: open, globex: open, initech: open, hooli: open }
              guests: { limits: [ { name: pool, capacity: 3, refill: 3, period: 1m } ] }
            """;

    private final ManualClock clock = new ManualClock();
    private JettyServer server;

    /** One item of a field: the policy name and its parameters, as the independent parser read them. */
    record Member(String name, Map<String, Object> params) {
        long integer(String key) {
            return (Long) params.get(key);
        }
    }

    private void start() throws Exception {
        QuotaFilter filter = QuotaFilter.builder().plans(PlansFile.parse("t.yml", PLANS)).clock(clock).build();
        server = JettyServer.start(filter);
    }

    @AfterEach
    void stop() throws Exception {
        if (server != null) server.close();
    }

    static List<Member> parse(HttpResponse<?> r, String field) {
        List<String> values = r.headers().allValues(field);
        assertThat(values).as(field).isNotEmpty();
        List<Member> out = new java.util.ArrayList<>();
        for (ListElement<?> e : Parser.parseList(String.join(", ", values)).get()) {
            assertThat(e).as("a list of items, not inner lists").isInstanceOf(Item.class);
            Item<?> item = (Item<?>) e;
            assertThat(item).as("§3, §4.1: the policy identifier is a String").isInstanceOf(StringItem.class);
            Map<String, Object> params = new LinkedHashMap<>();
            item.getParams().forEach((k, v) -> params.put(k, v instanceof ByteSequenceItem b
                    ? new String(toBytes(b.get()), StandardCharsets.UTF_8) : v.get()));
            item.getParams().forEach((k, v) -> {
                if (k.equals("q") || k.equals("w") || k.equals("r") || k.equals("t")) {
                    assertThat(v).as(k + " is an Integer").isInstanceOf(IntegerItem.class);
                    assertThat((Long) v.get()).as(k + " is non-negative").isNotNegative();
                }
                if (k.equals("pk")) assertThat(v).as("pk is a Byte Sequence").isInstanceOf(ByteSequenceItem.class);
            });
            out.add(new Member((String) item.get(), params));
        }
        return out;
    }

    private static byte[] toBytes(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }

    private static JsonNode body(HttpResponse<String> r) throws Exception {
        return new ObjectMapper().readTree(r.body());
    }

    private static long retryAfter(HttpResponse<?> r) {
        return Long.parseLong(r.headers().firstValue("Retry-After").orElseThrow());
    }

    @Test
    void anAdmittedResponseCarriesEveryPolicyWithQuotaWindowPartitionKeyAndTheWaitForTheNextUnit() throws Exception {
        start();
        Http.get(server.uri("/items/1"), "acme");
        Http.get(server.uri("/items/1"), "acme");
        HttpResponse<String> r = Http.get(server.uri("/items/1"), "acme");
        assertThat(r.statusCode()).isEqualTo(200);
        List<Member> policies = parse(r, "RateLimit-Policy");
        assertThat(policies).extracting(Member::name).containsExactly("burst", "daily");
        assertThat(policies.get(0).integer("q")).isEqualTo(20);
        assertThat(policies.get(0).integer("w")).as("20 units at 1/s").isEqualTo(20);
        assertThat(policies.get(1).integer("w")).isEqualTo(86_400);
        assertThat(policies).allSatisfy(p -> assertThat(p.params()).containsEntry("pk", "acme").doesNotContainKey("qu"));
        List<Member> limits = parse(r, "RateLimit");
        assertThat(limits).extracting(Member::name).containsExactly("burst", "daily");
        assertThat(limits.get(0).integer("r")).isEqualTo(17);
        // t: within it the client can count on no more than r; burst gains a unit every second, daily every
        // 1728 s (not the time until the bandwidth is full again: 3 s and 5184 s)
        assertThat(limits.get(0).integer("t")).isEqualTo(1);
        assertThat(limits.get(1).integer("r")).isEqualTo(47);
        assertThat(limits.get(1).integer("t")).isEqualTo(1728);
        assertThat(limits).allSatisfy(l -> assertThat(l.params()).containsEntry("pk", "acme"));
    }

    @Test
    void a429FromTheBurstListsOnlyTheExhaustedPolicyWithTNoLaterThanRetryAfterAndNamesItAsViolated() throws Exception {
        start();
        for (int i = 0; i < 20; i++) assertThat(Http.get(server.uri("/items/1"), "acme").statusCode()).isEqualTo(200);
        HttpResponse<String> r = Http.get(server.uri("/items/1"), "acme");
        assertThat(r.statusCode()).isEqualTo(429);
        long retryAfter = retryAfter(r);
        assertThat(retryAfter).isEqualTo(1);
        List<Member> limits = parse(r, "RateLimit");
        assertThat(limits).as("B.1.2: the policies not exhausted are left out").extracting(Member::name)
                .containsExactly("burst");
        assertThat(limits.get(0).integer("r")).isZero();
        assertThat(limits.get(0).integer("t")).as("§6").isLessThanOrEqualTo(retryAfter);
        assertThat(parse(r, "RateLimit-Policy")).extracting(Member::name).containsExactly("burst", "daily");
        JsonNode problem = body(r);
        assertThat(problem.get("type").asText()).isEqualTo("https://iana.org/assignments/http-problem-types#quota-exceeded");
        assertThat(problem.get("violated-policies")).extracting(JsonNode::asText).containsExactly("burst");
        assertThat(problem.get("reason").asText()).isEqualTo("tenant_rate");
        assertThat(problem.get("status").asInt()).isEqualTo(429);
    }

    @Test
    void a429FromTheDailyQuotaNamesTheDailyPolicyAndCapsItsTAtRetryAfter() throws Exception {
        start();
        int admitted = 0;
        while (admitted < 50) {
            HttpResponse<String> r = Http.get(server.uri("/items/1"), "acme");
            if (r.statusCode() == 200) admitted++;
            else clock.advance(Duration.ofSeconds(20)); // the burst refills; the daily quota barely moves
        }
        clock.advance(Duration.ofSeconds(20));
        HttpResponse<String> r = Http.get(server.uri("/items/1"), "acme");
        assertThat(r.statusCode()).isEqualTo(429);
        long retryAfter = retryAfter(r);
        List<Member> limits = parse(r, "RateLimit");
        assertThat(limits).extracting(Member::name).containsExactly("daily");
        assertThat(limits.get(0).integer("r")).isZero();
        assertThat(limits.get(0).integer("t")).isPositive().isLessThanOrEqualTo(retryAfter);
        assertThat(body(r).get("violated-policies")).extracting(JsonNode::asText).containsExactly("daily");
        // waiting t then Retry-After admits the request: the window is a promise too
        clock.advance(Duration.ofSeconds(retryAfter));
        assertThat(Http.get(server.uri("/items/1"), "acme").statusCode()).isEqualTo(200);
    }

    @Test
    void a429FromTheHiddenGlobalQuotaKeepsEveryPolicyEachCappedAtRetryAfterAndStaysAboutBlank() throws Exception {
        start();
        for (String tenant : List.of("acme", "globex", "initech")) { // 3 x 20: the global quota's 60
            for (int i = 0; i < 20; i++) assertThat(Http.get(server.uri("/items/1"), tenant).statusCode()).isEqualTo(200);
        }
        HttpResponse<String> r = Http.get(server.uri("/items/1"), "hooli");
        assertThat(r.statusCode()).isEqualTo(429);
        assertThat(body(r).get("reason").asText()).isEqualTo("global_rate");
        long retryAfter = retryAfter(r);
        List<Member> limits = parse(r, "RateLimit");
        assertThat(limits).extracting(Member::name).containsExactly("burst", "daily");
        assertThat(limits).allSatisfy(l -> assertThat(l.integer("t")).isLessThanOrEqualTo(retryAfter));
        assertThat(r.headers().allValues("RateLimit").toString()).as("the global quota stays hidden").doesNotContain("api");
        assertThat(body(r).get("type").asText()).isEqualTo("about:blank");
        assertThat(body(r).has("violated-policies")).isFalse();
    }

    @Test
    void a429FromTheGuestPoolPublishesTheGuestsOwnPlanButNotThePool() throws Exception {
        start();
        HttpResponse<String> r = null;
        for (int i = 0; i < 4; i++) r = Http.get(server.uri("/items/1"), "stranger" + i);
        assertThat(r.statusCode()).isEqualTo(429);
        assertThat(body(r).get("reason").asText()).isEqualTo("guest_rate");
        long retryAfter = retryAfter(r);
        List<Member> limits = parse(r, "RateLimit");
        assertThat(limits).extracting(Member::name).containsExactly("burst", "daily").doesNotContain("pool");
        assertThat(limits).allSatisfy(l -> assertThat(l.integer("t")).isLessThanOrEqualTo(retryAfter));
        assertThat(body(r).get("type").asText()).isEqualTo("about:blank");
    }

    @Test
    void a429FromAConcurrencyCapPublishesNoQuotaFields() throws Exception {
        QuotaFilter filter = QuotaFilter.builder().plans(PlansFile.parse("t.yml", PLANS)).clock(clock).build();
        java.util.concurrent.CountDownLatch inside = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        var context = new org.eclipse.jetty.ee10.servlet.ServletContextHandler();
        context.addFilter(new org.eclipse.jetty.ee10.servlet.FilterHolder(filter), "/*",
                java.util.EnumSet.of(jakarta.servlet.DispatcherType.REQUEST));
        context.addServlet(new org.eclipse.jetty.ee10.servlet.ServletHolder(new jakarta.servlet.http.HttpServlet() {
            @Override
            protected void service(jakarta.servlet.http.HttpServletRequest req, jakarta.servlet.http.HttpServletResponse resp) {
                inside.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }), "/");
        server = JettyServer.start(context);
        var first = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
            try {
                return Http.get(server.uri("/reports/1"), "acme").statusCode();
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        inside.await();
        HttpResponse<String> r = Http.get(server.uri("/reports/2"), "acme");
        release.countDown();
        assertThat(first.get()).isEqualTo(200);
        assertThat(r.statusCode()).isEqualTo(429);
        assertThat(body(r).get("reason").asText()).isEqualTo("concurrency");
        assertThat(r.headers().firstValue("RateLimit")).isEmpty();
        assertThat(body(r).get("type").asText()).isEqualTo("about:blank");
    }

    /**
     * A published plan with a limit per user and a route with a limit per client address: beside the
     * tenant's generous minute, the user's seat and the login attempts of an address.
     */
    private static final String SCOPED = """
            plans:
              team:
                publish: true
                limits: [ { name: minute, capacity: 600, refill: 600, period: 1m } ]
                per-user:
                  limits: [ { name: seat, capacity: 10, refill: 10, period: 1m } ]
            routes:
              - name: login
                paths: ["/login"]
                limits:
                  - { name: attempts, per: client-address, capacity: 3, refill: 3, period: 1m }
            tenants:
              users:
                - { type: header, name: X-User-Id }
              assignments: { acme: team }
            """;

    private HttpResponse<String> asUser(String path, String user) throws Exception {
        java.net.http.HttpRequest r = java.net.http.HttpRequest.newBuilder(server.uri(path))
                .timeout(Duration.ofSeconds(10)).header("X-Tenant-Id", "acme").header("X-User-Id", user).build();
        return java.net.http.HttpClient.newHttpClient().send(r, HttpResponse.BodyHandlers.ofString());
    }

    private void startScoped() throws Exception {
        server = JettyServer.start(QuotaFilter.builder().plans(PlansFile.parse("t.yml", SCOPED)).clock(clock).build());
    }

    @Test
    void aPerUserLimitIsItsOwnPolicyPartitionedByTenantAndUserAndIts429ListsItAloneAsExhausted() throws Exception {
        startScoped();
        HttpResponse<String> last = null;
        for (int i = 0; i < 10; i++) {
            last = asUser("/items/1", "alice");
            assertThat(last.statusCode()).isEqualTo(200);
        }
        assertThat(parse(last, "RateLimit-Policy")).extracting(Member::name).containsExactly("minute", "per-user.seat");
        Member seat = parse(last, "RateLimit-Policy").get(1);
        assertThat(seat.integer("q")).isEqualTo(10);
        assertThat(seat.integer("w")).isEqualTo(60);
        assertThat(seat.params()).as("quotas are allocated per partition key: the user's inside its tenant")
                .containsEntry("pk", "acme/alice");
        assertThat(parse(last, "RateLimit").get(1).integer("r")).isZero();

        HttpResponse<String> r = asUser("/items/1", "alice");
        assertThat(r.statusCode()).isEqualTo(429);
        assertThat(body(r).get("reason").asText()).isEqualTo("user_rate");
        long retryAfter = retryAfter(r);
        assertThat(retryAfter).as("10 a minute: a unit every 6 s").isEqualTo(6);
        List<Member> limits = parse(r, "RateLimit");
        assertThat(limits).as("only the exhausted policy, never the tenant's healthy minute").extracting(Member::name)
                .containsExactly("per-user.seat");
        assertThat(limits.get(0).integer("r")).isZero();
        assertThat(limits.get(0).integer("t")).as("§6").isPositive().isLessThanOrEqualTo(retryAfter);
        assertThat(limits.get(0).params()).containsEntry("pk", "acme/alice");
        assertThat(parse(r, "RateLimit-Policy")).extracting(Member::name).containsExactly("minute", "per-user.seat");
        assertThat(parse(r, "RateLimit-Policy").get(0).params()).containsEntry("pk", "acme");
        assertThat(body(r).get("type").asText()).isEqualTo("https://iana.org/assignments/http-problem-types#quota-exceeded");
        assertThat(body(r).get("violated-policies")).extracting(JsonNode::asText).containsExactly("per-user.seat");

        HttpResponse<String> bob = asUser("/items/1", "bob");
        assertThat(bob.statusCode()).as("a colleague has a seat of his own").isEqualTo(200);
        assertThat(parse(bob, "RateLimit").get(1).params()).containsEntry("pk", "acme/bob");
        assertThat(parse(bob, "RateLimit").get(1).integer("r")).isEqualTo(9);
        assertThat(parse(bob, "RateLimit").get(0).integer("r")).as("the tenant paid for 11").isEqualTo(589);
        clock.advance(Duration.ofSeconds(retryAfter));
        assertThat(asUser("/items/1", "alice").statusCode()).as("Retry-After is a promise").isEqualTo(200);
    }

    @Test
    void aRouteLimitPerClientAddressIsItsOwnPolicyWithoutAPartitionKeyAndIts429ListsItAloneAsExhausted()
            throws Exception {
        startScoped();
        for (int i = 0; i < 3; i++) assertThat(asUser("/login", "alice").statusCode()).isEqualTo(200);
        HttpResponse<String> r = asUser("/login", "alice");
        assertThat(r.statusCode()).isEqualTo(429);
        assertThat(body(r).get("reason").asText()).isEqualTo("route_address_rate");
        long retryAfter = retryAfter(r);
        assertThat(retryAfter).as("3 a minute: a unit every 20 s").isEqualTo(20);
        List<Member> limits = parse(r, "RateLimit");
        assertThat(limits).as("neither the tenant's minute nor alice's seat, which hold units").extracting(Member::name)
                .containsExactly("login.client-address.attempts");
        assertThat(limits.get(0).integer("r")).isZero();
        assertThat(limits.get(0).integer("t")).isPositive().isLessThanOrEqualTo(retryAfter);
        assertThat(limits.get(0).params()).as("a client address is never sent back").doesNotContainKey("pk");
        List<Member> policies = parse(r, "RateLimit-Policy");
        assertThat(policies).extracting(Member::name)
                .containsExactly("minute", "per-user.seat", "login.client-address.attempts");
        assertThat(policies.get(2).integer("q")).isEqualTo(3);
        assertThat(policies.get(2).integer("w")).isEqualTo(60);
        assertThat(policies.get(2).params()).doesNotContainKey("pk");
        assertThat(body(r).get("violated-policies")).extracting(JsonNode::asText)
                .containsExactly("login.client-address.attempts");
        assertThat(parse(asUser("/items/1", "alice"), "RateLimit-Policy")).as("the route's own on that route only")
                .extracting(Member::name).containsExactly("minute", "per-user.seat");
    }
}

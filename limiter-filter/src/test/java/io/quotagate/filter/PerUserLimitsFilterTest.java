package io.quotagate.filter;

import io.quotagate.filter.signals.QuotaEvent;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.InvalidPlansException;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A plan's {@code per-user} limits on real Jetty: one user's script inside a tenant no longer starves
 * its colleagues, the 429's contract, and what a tenant is charged for a refused request.
 */
class PerUserLimitsFilterTest {
    /** Two plans alike but for {@code per-user}: acme is on the fair one, initech on the other. */
    private static final String PLANS = """
            plans:
              team:
                limits: [ { capacity: 10, refill: 10, period: 1s } ]
              fair-team:
                limits: [ { capacity: 10, refill: 10, period: 1s } ]
                per-user:
                  limits: [ { capacity: 4, refill: 4, period: 1s } ]
            tenants:
              default-plan: team
              users:
                - { type: header, name: X-User-Id }
              assignments: { acme: fair-team, initech: team }
            """;
    private static final HttpClient CLIENT = HttpClient.newHttpClient();

    private final ManualClock clock = new ManualClock();
    private QuotaFilter filter;
    private JettyServer server;

    private void start() throws Exception {
        filter = QuotaFilter.builder().plans(PlansFile.parse("plans.yml", PLANS)).clock(clock).build();
        server = JettyServer.start(filter);
    }

    @AfterEach
    void stop() throws Exception {
        if (server != null) server.close();
    }

    private HttpResponse<String> get(String tenant, String user) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(server.uri("/items")).timeout(Duration.ofSeconds(10))
                .header("X-Tenant-Id", tenant);
        if (user != null) b.header("X-User-Id", user);
        return CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Each second a user's script sends 20 requests, then a colleague 3; the colleague's admitted requests. */
    private int colleagueAdmitted(String tenant, int seconds) throws Exception {
        int admitted = 0;
        for (int s = 0; s < seconds; s++) {
            for (int i = 0; i < 20; i++) get(tenant, "script");
            for (int i = 0; i < 3; i++) if (get(tenant, "alice").statusCode() == 200) admitted++;
            clock.advance(Duration.ofSeconds(1));
        }
        return admitted;
    }

    @Test
    void oneUsersScriptNoLongerStarvesAColleagueInsideTheTenant() throws Exception {
        start();
        int before = colleagueAdmitted("initech", 5); // no per-user limits: the script takes all 10 each second
        int after = colleagueAdmitted("acme", 5);     // per-user 4/s: 6 of the tenant's 10 stay for the others
        assertThat(before).as("colleague's admitted requests of 15, without per-user").isZero();
        assertThat(after).as("colleague's admitted requests of 15, with per-user").isEqualTo(15);
    }

    @Test
    void aUserOverItsShareIsA429UserRateAndTheTenantIsNotChargedForIt() throws Exception {
        start();
        for (int i = 0; i < 4; i++) assertThat(get("acme", "script").statusCode()).isEqualTo(200);
        HttpResponse<String> refused = get("acme", "script");
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.headers().firstValue("Retry-After")).hasValue("1"); // 250 ms for a unit, rounded up
        assertThat(refused.body()).contains("\"reason\":\"user_rate\"")
                .contains("This user's share of the tenant's rate limit (per-user) is exhausted; retry after 1 s.");
        for (int i = 0; i < 10; i++) get("acme", "script");
        assertThat(filter.control().tenantLimits("acme").get(0).remaining())
                .as("only the 4 admitted requests are charged to the tenant").isEqualTo(6);
    }

    @Test
    void aUserOverItsShareRaisesNoTenantEventAsTheTenantsOwnBucketDoes() throws Exception {
        java.util.concurrent.BlockingQueue<QuotaEvent> events = new java.util.concurrent.LinkedBlockingQueue<>();
        filter = QuotaFilter.builder().plans(PlansFile.parse("plans.yml", PLANS)).clock(clock).listener(events::add)
                .build();
        server = JettyServer.start(filter);
        try {
            for (int i = 0; i < 6; i++) get("acme", "script"); // 4 admitted, 2 refused: user_rate
            ((FilterRuntime) filter.control()).signals.check();
            for (int i = 0; i < 12; i++) get("initech", "script"); // the tenant's own bucket: tenant_rate
            ((FilterRuntime) filter.control()).signals.check();
            // events are delivered in order, off the request path: wait for initech's, then look at all
            java.util.List<String> exhausted = new java.util.ArrayList<>();
            for (QuotaEvent e; !exhausted.contains("initech") && (e = events.poll(5, java.util.concurrent.TimeUnit.SECONDS)) != null; ) {
                if (e instanceof QuotaEvent.Exhausted x) exhausted.add(x.tenant());
            }
            assertThat(exhausted).as("tenants exhausted").containsExactly("initech");
        } finally {
            filter.destroy();
        }
    }

    @Test
    void requestsWithoutAUserShareOneBucketAndAnInvalidUserIdIsA400() throws Exception {
        start();
        for (int i = 0; i < 4; i++) assertThat(get("acme", null).statusCode()).isEqualTo(200);
        assertThat(get("acme", null).body()).as("leaving the user out escapes nothing").contains("user_rate");
        assertThat(get("acme", "alice").statusCode()).isEqualTo(200);
        HttpResponse<String> invalid = get("acme", "no/such");
        assertThat(invalid.statusCode()).isEqualTo(400);
        assertThat(invalid.body()).contains("\"reason\":\"invalid_user\"");
        assertThat(filter.control().tenantLimits("acme").get(0).remaining()).isEqualTo(5);
    }

    /**
     * A user header that names no single valid id is refused as the tenant header is (its 400 has the same
     * shape: no tenant member, the reason and a detail): it never falls into the tenant's bucket of requests
     * without a user, where a client repeating or folding the header would otherwise be let through on
     * someone else's units, or pass unnoticed behind a gateway that appends the header instead of replacing it.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            repeated                        | X-User-Id: alice\\r\\nX-User-Id: bob\\r\\n          | repeated
            repeated with one value         | X-User-Id: alice\\r\\nX-User-Id: alice\\r\\n        | repeated
            repeated, names in other cases  | x-user-id: alice\\r\\nX-USER-ID: bob\\r\\n          | repeated
            folded by a proxy               | X-User-Id: alice, bob\\r\\n                         | a list
            folded without a space          | X-User-Id: alice,bob\\r\\n                          | a list
            empty                           | X-User-Id: \\r\\n                                   | 1-64 characters
            too long (65 characters)        | X-User-Id: uuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuu\\r\\n | 1-64 characters
            a slash                         | X-User-Id: alice/bob\\r\\n                          | 1-64 characters
            non-ASCII                       | X-User-Id: caf\u00e9\\r\\n                         | 1-64 characters
            dots only                       | X-User-Id: ..\\r\\n                                 | 1-64 characters
            """)
    void aUserHeaderThatNamesNoSingleValidUserIsA400InvalidUserAndChargesNothing(String description, String headers,
                                                                                 String detail) throws Exception {
        start();
        String lines = headers.replace("\\r\\n", "\r\n");
        for (int i = 0; i < 6; i++) { // more than the 4 a second of a user: none of them may be admitted
            String raw = Http.rawHead(server.port(), "GET /items HTTP/1.1\r\nHost: localhost\r\nX-Tenant-Id: acme\r\n"
                    + lines);
            assertThat(Http.status(raw)).as(raw).isEqualTo(400);
            assertThat(raw).containsIgnoringCase("Content-Type: application/problem+json");
            String body = raw.substring(raw.indexOf("\r\n\r\n") + 4);
            assertThat(body).startsWith("{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,\"detail\":")
                    .contains("\"reason\":\"invalid_user\"").contains(detail)
                    .as("the same shape as the tenant header's 400: no tenant member").doesNotContain("\"tenant\"")
                    .doesNotContain("alice", "bob");
        }
        for (int i = 0; i < 4; i++) {
            assertThat(get("acme", null).statusCode()).as("the bucket of requests without a user is untouched")
                    .isEqualTo(200);
        }
        assertThat(filter.control().tenantLimits("acme").get(0).remaining()).as("the tenant paid for 4").isEqualTo(6);
    }

    @Test
    void aUserHeaderIsOnlyReadWhereALimitIsKeptPerUser() throws Exception {
        start();
        String raw = Http.rawHead(server.port(), "GET /items HTTP/1.1\r\nHost: localhost\r\nX-Tenant-Id: initech\r\n"
                + "X-User-Id: alice\r\nX-User-Id: bob\r\n");
        assertThat(Http.status(raw)).as("initech's plan keeps no limit per user: " + raw).isEqualTo(200);
    }

    @Test
    void anEstimatedRouteChargesTheUsersBucketItsEstimatedCostNotItsMinimum() throws Exception {
        filter = QuotaFilter.builder().plans(PlansFile.parse("plans.yml", PLANS.replace("tenants:",
                        "routes:\n  - { name: gen, methods: [POST], paths: [\"/gen\"] }\ntenants:")))
                .costEstimator("gen", CostReconciliationTest.BODY_NUMBER).clock(clock).build();
        server = JettyServer.start(filter);
        assertThat(post("alice", "3").statusCode()).isEqualTo(200); // alice's seat: 4, 1 left
        HttpResponse<String> refused = post("alice", "3");
        assertThat(refused.statusCode()).as("3 more do not fit alice's 1 left, though the minimum (1) would")
                .isEqualTo(429);
        assertThat(refused.body()).contains("\"reason\":\"user_rate\"");
        assertThat(post("bob", "3").statusCode()).isEqualTo(200);
        assertThat(filter.control().tenantLimits("acme").get(0).remaining()).as("3 + 3 charged").isEqualTo(4);
    }

    private HttpResponse<String> post(String user, String body) throws Exception {
        HttpRequest r = HttpRequest.newBuilder(server.uri("/gen")).timeout(Duration.ofSeconds(10))
                .header("X-Tenant-Id", "acme").header("X-User-Id", user)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        return CLIENT.send(r, HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void perUserLimitsWithoutAUserResolverFailAtStartNamingFileLineAndField() {
        String noUsers = PLANS.replace("  users:\n    - { type: header, name: X-User-Id }\n", "");
        assertThatThrownBy(() -> PlansFile.parse("plans.yml", noUsers)).isInstanceOf(InvalidPlansException.class)
                .hasMessageContaining("plans.yml:6: plans.fair-team.per-user: per-user limits need tenants.users");
    }
}

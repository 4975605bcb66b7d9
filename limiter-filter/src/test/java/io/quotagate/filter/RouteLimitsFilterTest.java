package io.quotagate.filter;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quotagate.filter.metrics.QuotaMeterBinder;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.InvalidPlansException;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A route's own limits ({@code routes[].limits}) on real Jetty: per tenant, per user, per client address. */
class RouteLimitsFilterTest {
    private static final String PLANS = """
            plans:
              pro:
                limits: [ { capacity: 100, refill: 100, period: 1s } ]
            routes:
              - name: export
                paths: ["/export"]
                limits:
                  - { name: exports, capacity: 2, refill: 2, period: 1h }
              - name: login
                paths: ["/login"]
                limits:
                  - { per: client-address, capacity: 3, refill: 3, period: 1m }
              - name: report
                paths: ["/report"]
                limits:
                  - { per: user, capacity: 1, refill: 1, period: 1m }
                  - { per: client-address, capacity: 2, refill: 2, period: 1h }
            tenants:
              users:
                - { type: header, name: X-User-Id }
              assignments: { acme: pro, initech: pro }
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

    private HttpResponse<String> get(String path, String tenant, String user) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(server.uri(path)).timeout(Duration.ofSeconds(10))
                .header("X-Tenant-Id", tenant);
        if (user != null) b.header("X-User-Id", user);
        return CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aRouteLimitPerTenantIsTakenBesideThePlansAndItsRefusalNamesItAndChargesTheTenantNothing() throws Exception {
        start();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new QuotaMeterBinder(filter.control()).bindTo(registry);
        assertThat(get("/export", "acme", null).statusCode()).isEqualTo(200);
        assertThat(get("/export", "acme", null).statusCode()).isEqualTo(200);
        HttpResponse<String> refused = get("/export", "acme", null);
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.headers().firstValue("Retry-After")).hasValue("1800"); // 2 per hour: a unit in 30 min
        assertThat(refused.body()).contains("\"reason\":\"route_rate\"")
                .contains("The route's limit 'export per tenant' is exhausted; retry after 1800 s.");
        assertThat(get("/export", "initech", null).statusCode()).as("each tenant its own").isEqualTo(200);
        assertThat(get("/items", "acme", null).statusCode()).as("other routes untouched").isEqualTo(200);
        assertThat(filter.control().tenantLimits("acme").get(0).remaining())
                .as("2 exports and 1 item charged, not the refused export").isEqualTo(97);
        assertThat(registry.get(QuotaMeterBinder.REQUESTS).tags("route", "export", "reason", "route_rate")
                .functionCounter().count()).isEqualTo(1.0);
        assertThat(registry.get(QuotaMeterBinder.SCOPED_REFUSALS).tags("route", "export", "scope", "tenant")
                .counter().count()).isEqualTo(1.0);
        assertThat(registry.find(QuotaMeterBinder.SCOPED_REFUSALS).meters()).singleElement()
                .satisfies(m -> assertThat(m.getId().getTags()).extracting(t -> t.getKey()).containsOnly("route", "scope"));
    }

    @Test
    void aLimitPerClientAddressCountsEveryTenantFromThatAddress() throws Exception {
        start();
        assertThat(get("/login", "acme", null).statusCode()).isEqualTo(200);
        assertThat(get("/login", "acme", null).statusCode()).isEqualTo(200);
        assertThat(get("/login", "initech", null).statusCode()).isEqualTo(200);
        HttpResponse<String> refused = get("/login", "initech", null);
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.body()).contains("\"reason\":\"route_address_rate\"").contains("'login per client-address'");
        assertThat(refused.headers().firstValue("Retry-After")).hasValue("20");
    }

    @Test
    void retryAfterIsTheLongestWaitAmongTheRefusingLimitsAndNothingIsHeldByTheOthers() throws Exception {
        start();
        assertThat(get("/report", "acme", "alice").statusCode()).isEqualTo(200);
        // alice's bucket waits a minute, the address's still has one: the minute is the answer
        HttpResponse<String> alice = get("/report", "acme", "alice");
        assertThat(alice.body()).contains("\"reason\":\"route_user_rate\"");
        assertThat(alice.headers().firstValue("Retry-After")).hasValue("60");
        assertThat(get("/report", "acme", "bob").statusCode()).as("the address kept its unit").isEqualTo(200);
        // now both refuse alice: the address's half hour is the longer wait
        HttpResponse<String> again = get("/report", "acme", "alice");
        assertThat(again.body()).contains("\"reason\":\"route_address_rate\"");
        assertThat(again.headers().firstValue("Retry-After")).hasValue("1800");
    }

    @Test
    void whenThePlansBucketRefusesARouteBucketThatWaitsLongerAnswers() throws Exception {
        filter = QuotaFilter.builder().plans(PlansFile.parse("plans.yml", PLANS.replace(
                "limits: [ { capacity: 100, refill: 100, period: 1s } ]",
                "limits: [ { capacity: 2, refill: 1, period: 1s } ]"))).clock(clock).build();
        server = JettyServer.start(filter);
        get("/export", "acme", null);
        get("/export", "acme", null); // the plan's 2 and the route's 2 per hour: both empty
        HttpResponse<String> refused = get("/export", "acme", null);
        assertThat(refused.body()).as("not the plan's second").contains("\"reason\":\"route_rate\"");
        assertThat(refused.headers().firstValue("Retry-After")).hasValue("1800");
    }

    @Test
    void aRouteLimitBelowTheRoutesCostOrPerUserWithoutUsersFailsAtStart() {
        assertThatThrownBy(() -> PlansFile.parse("plans.yml", PLANS.replace("paths: [\"/export\"]",
                "paths: [\"/export\"]\n    cost: 3"))).isInstanceOf(InvalidPlansException.class)
                .hasMessageContaining("plans.yml:9: routes[0].limits[0].capacity: capacity 2 is below the route's cost 3");
        assertThatThrownBy(() -> PlansFile.parse("plans.yml",
                PLANS.replace("  users:\n    - { type: header, name: X-User-Id }\n", "")))
                .isInstanceOf(InvalidPlansException.class)
                .hasMessageContaining("plans.yml:16: routes[2].limits[0].per: a limit per user needs tenants.users");
        assertThatThrownBy(() -> PlansFile.parse("plans.yml", PLANS.replace("per: client-address, capacity: 3",
                "per: address, capacity: 3"))).isInstanceOf(InvalidPlansException.class)
                .hasMessageContaining("routes[1].limits[0].per: unknown value 'address', expected one of [tenant, user, client-address]");
    }
}

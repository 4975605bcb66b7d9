package io.quotagate.filter;

import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The tenant's own usage endpoint on real Jetty: never charged, only the caller, hidden plans stay hidden. */
class OwnUsageEndpointTest {
    private static final String PLANS = """
            plans:
              open:
                publish: true
                limits: [ { name: burst, capacity: 5, refill: 5, period: 1m } ]
                quotas: [ { name: monthly, limit: 3, per: month, zone: UTC } ]
              hidden:
                limits: [ { capacity: 5, refill: 5, period: 1m } ]
            tenants:
              default-plan: open
              unknown: %s
              assignments: { acme: open, globex: open, secret: hidden }
            """;

    private final ManualClock clock = new ManualClock();
    private QuotaFilter filter;
    private JettyServer server;

    @AfterEach
    void stop() throws Exception {
        if (server != null) server.close();
    }

    private void start(String unknown, boolean showHidden) throws Exception {
        QuotaFilter.Builder b = QuotaFilter.builder().plans(PlansFile.parse("plans.yml", PLANS.formatted(unknown)))
                .clock(clock).wallClock(clock.wallClock(Instant.parse("2027-03-31T22:00:00Z")));
        filter = b.usageEndpoint("/rate_limit", showHidden).build();
        server = JettyServer.start(filter);
    }

    private HttpResponse<String> get(String pathAndQuery, String tenant) throws Exception {
        return Http.get(server.uri(pathAndQuery), tenant);
    }

    @Test
    void answersTheCallersOwnLimitsAndQuotasAsJsonWithoutChargingAnything() throws Exception {
        start("default", false);
        assertThat(get("/items/1", "acme").statusCode()).isEqualTo(200); // 1 unit and 1 of the month's 3
        for (int i = 0; i < OwnUsage.ANSWERS_PER_SECOND_EACH; i++) {
            HttpResponse<String> own = get("/rate_limit", "acme");
            assertThat(own.statusCode()).isEqualTo(200);
            assertThat(own.headers().firstValue("Content-Type").orElseThrow()).startsWith("application/json");
            assertThat(own.headers().firstValue("Cache-Control")).hasValue("no-store");
            assertThat(own.body()).isEqualTo("{\"tenant\":\"acme\",\"plan\":\"open\",\"guest\":false,"
                    + "\"limits\":[{\"name\":\"burst\",\"limit\":5,\"remaining\":4,\"windowSeconds\":60,\"resetSeconds\":12}],"
                    + "\"quotas\":[{\"name\":\"monthly\",\"per\":\"month\",\"limit\":3,\"used\":1,\"remaining\":2,"
                    + "\"resetsAt\":\"2027-04-01T00:00:00Z\"}]}");
        }
        assertThat(filter.control().tenantQuotas("acme").get(0).used()).as("the reads counted nothing").isEqualTo(1);
        assertThat(filter.control().tenantLimits("acme").get(0).remaining()).isEqualTo(4);
        assertThat(filter.control().statistics().cells().stream().mapToLong(c -> c.count()).sum())
                .as("not in the request statistics").isEqualTo(1);
    }

    @Test
    void neverShowsAnotherTenantWhateverTheQueryOrPathSays() throws Exception {
        start("default", false);
        get("/items/1", "globex");
        get("/items/1", "globex");
        HttpResponse<String> own = get("/rate_limit?tenant=globex&X-Tenant-Id=globex", "acme");
        assertThat(own.statusCode()).isEqualTo(200);
        assertThat(own.body()).startsWith("{\"tenant\":\"acme\"").contains("\"used\":0").doesNotContain("globex");
        assertThat(get("/rate_limit/globex", "acme").body()).as("not the endpoint: a request like any")
                .doesNotContain("\"tenant\":\"globex\"");
    }

    @Test
    void aHiddenPlanGets404UnlessTheFilterShowsHiddenPlans() throws Exception {
        start("default", false);
        HttpResponse<String> hidden = get("/rate_limit", "secret");
        assertThat(hidden.statusCode()).isEqualTo(404);
        assertThat(hidden.body()).doesNotContain("secret").doesNotContain("hidden");
        stop();
        start("default", true);
        assertThat(get("/rate_limit", "secret").body()).startsWith("{\"tenant\":\"secret\",\"plan\":\"hidden\"");
    }

    @Test
    void noTenantIs401AnInvalidOne400AnUnknownOneAsItsRequestsAndOtherMethods405() throws Exception {
        start("default", false);
        assertThat(Http.get(server.uri("/rate_limit"), null).statusCode()).isEqualTo(401);
        assertThat(get("/rate_limit", "bad id!").statusCode()).isEqualTo(400);
        HttpResponse<String> guest = get("/rate_limit", "stranger");
        assertThat(guest.statusCode()).isEqualTo(200);
        assertThat(guest.body()).startsWith("{\"tenant\":\"stranger\",\"plan\":\"open\",\"guest\":true,")
                .endsWith("\"quotas\":[]}");
        HttpResponse<String> post = HttpClient.newHttpClient().send(HttpRequest.newBuilder(server.uri("/rate_limit"))
                .header("X-Tenant-Id", "acme").POST(HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(post.statusCode()).isEqualTo(405);
        assertThat(post.headers().firstValue("Allow")).hasValue("GET, HEAD");
        stop();
        start("reject", false);
        assertThat(get("/rate_limit", "stranger").statusCode()).isEqualTo(403);
        assertThat(get("/items/1", "stranger").statusCode()).as("as its requests").isEqualTo(403);
    }

    @Test
    void offByDefaultAndAPathThatIsNotAbsoluteAndNormalisedIsRefusedAtBuild() throws Exception {
        filter = QuotaFilter.builder().plans(PlansFile.parse("plans.yml", PLANS.formatted("default"))).clock(clock).build();
        server = JettyServer.start(filter);
        assertThat(get("/rate_limit", "acme").body()).as("a request like any, to the application")
                .doesNotContain("\"quotas\"");
        for (String bad : new String[]{"rate_limit", "/", "/a/", "/a/../b", "//a"}) {
            assertThatThrownBy(() -> QuotaFilter.builder().usageEndpoint(bad, false)).as(bad)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("usage endpoint");
        }
    }

    @Test
    void aContainerCreatedFilterTakesTheEndpointAndThePeriodsKeptFromItsInitParams(@org.junit.jupiter.api.io.TempDir
                                                                                    java.nio.file.Path dir) throws Exception {
        java.nio.file.Path plans = java.nio.file.Files.writeString(dir.resolve("plans.yml"), PLANS.formatted("default"));
        QuotaFilter container = new QuotaFilter();
        container.init(io.quotagate.filter.testing.FilterConfigs.of(java.util.Map.of(QuotaFilter.PLANS_PARAM,
                plans.toString(), QuotaFilter.USAGE_ENDPOINT_PARAM, "/usage", QuotaFilter.USAGE_ENDPOINT_HIDDEN_PARAM,
                "true", QuotaFilter.CLOSED_PERIODS_KEPT_PARAM, "0")));
        server = JettyServer.start(container);
        assertThat(get("/usage", "secret").body()).startsWith("{\"tenant\":\"secret\",\"plan\":\"hidden\"");
        get("/items/1", "acme");
        assertThat(container.control().usage(null, 10).tenants().get(0).periods()).as("the current period alone")
                .hasSize(1);
        for (String bad : new String[]{"-1", "37", "three"}) {
            assertThatThrownBy(() -> new QuotaFilter().init(io.quotagate.filter.testing.FilterConfigs.of(java.util.Map.of(
                    QuotaFilter.PLANS_PARAM, plans.toString(), QuotaFilter.CLOSED_PERIODS_KEPT_PARAM, bad))))
                    .as(bad).hasMessageContaining("closed-periods-kept");
        }
        assertThatThrownBy(() -> new QuotaFilter().init(io.quotagate.filter.testing.FilterConfigs.of(java.util.Map.of(
                QuotaFilter.PLANS_PARAM, plans.toString(), QuotaFilter.USAGE_ENDPOINT_PARAM, "rate_limit"))))
                .hasMessageContaining("usage-endpoint");
    }

    /**
     * Never charged, so never a free way to load the store: an instance works out at most
     * {@link OwnUsage#ANSWERS_PER_SECOND} answers a second, at most {@link OwnUsage#ANSWERS_PER_SECOND_EACH} for one
     * tenant and as many for all guests together, so no client takes the endpoint from the others; the rest get 429
     * with {@code Retry-After: 1}, and a second later it answers again. The API itself is not touched.
     */
    @Test
    void aTenantTheGuestsTogetherAndTheInstanceEachGetAFewAnswersASecondTheRestRetryAfterOneSecond() throws Exception {
        int tenants = OwnUsage.ANSWERS_PER_SECOND / OwnUsage.ANSWERS_PER_SECOND_EACH + 1;
        StringBuilder assignments = new StringBuilder("acme: open, globex: open, secret: hidden");
        for (int i = 0; i < tenants; i++) assignments.append(", t").append(i).append(": open");
        filter = QuotaFilter.builder().plans(PlansFile.parse("plans.yml", PLANS.formatted("default")
                        .replace("acme: open, globex: open, secret: hidden", assignments)))
                .clock(clock).wallClock(clock.wallClock(Instant.parse("2027-03-31T22:00:00Z")))
                .usageEndpoint("/rate_limit", false).build();
        server = JettyServer.start(filter);

        for (int i = 0; i < OwnUsage.ANSWERS_PER_SECOND_EACH; i++) {
            assertThat(get("/rate_limit", "acme").statusCode()).as("acme's answer %d", i).isEqualTo(200);
        }
        HttpResponse<String> busy = get("/rate_limit", "acme");
        assertThat(busy.statusCode()).as("acme asks once more in the same second").isEqualTo(429);
        assertThat(busy.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(busy.body()).contains("\"reason\":\"usage_endpoint_busy\"").doesNotContain("Exception");
        assertThat(get("/rate_limit", "globex").statusCode()).as("another tenant is still answered").isEqualTo(200);
        for (int i = 0; i < OwnUsage.ANSWERS_PER_SECOND_EACH; i++) {
            assertThat(get("/rate_limit", "made-up-" + i).statusCode()).as("guest %d", i).isEqualTo(200);
        }
        assertThat(get("/rate_limit", "made-up-rotated").statusCode()).as("rotating guest ids share one allowance")
                .isEqualTo(429);
        int answered = OwnUsage.ANSWERS_PER_SECOND_EACH * 2 + 1;
        int refused = 0;
        for (int t = 0; t < tenants; t++) {
            for (int i = 0; i < OwnUsage.ANSWERS_PER_SECOND_EACH; i++) {
                if (get("/rate_limit", "t" + t).statusCode() == 200) answered++; else refused++;
            }
        }
        assertThat(answered).as("answers in one second on this instance").isEqualTo(OwnUsage.ANSWERS_PER_SECOND);
        assertThat(refused).isPositive();
        assertThat(get("/items/1", "t0").statusCode()).as("the API is not limited by it").isEqualTo(200);
        clock.advance(java.time.Duration.ofSeconds(1));
        assertThat(get("/rate_limit", "acme").statusCode()).as("after the Retry-After").isEqualTo(200);
    }
}

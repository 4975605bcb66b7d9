package io.quotagate.spring.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.micrometer.core.instrument.MeterRegistry;
import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.metrics.QuotaMeterBinder;
import io.quotagate.filter.testing.Await;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.web.servlet.ServletRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.async.DeferredResult;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.time.Duration;
import java.util.Base64;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A real Spring Boot application on embedded Tomcat with Spring Security (HTTP Basic), Actuator and the starter:
 * only {@code quotagate.plans} is set, and the plans file resolves tenants by {@code principal}. The same source
 * runs on Boot 3.5 here and on Boot 4.0 in module {@code spring-boot4-it}.
 */
@SpringBootTest(classes = QuotagateApplicationTest.App.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
                "quotagate.plans=classpath:it-plans.yml",
                "management.endpoints.web.exposure.include=health,quotagate",
                "management.endpoint.health.show-details=always"})
class QuotagateApplicationTest {

    private static final Duration PATIENCE = Duration.ofSeconds(10);
    private final HttpClient client = HttpClient.newHttpClient();
    private final ObjectMapper json = new ObjectMapper();

    @LocalServerPort
    int port;
    @Autowired
    Api api;
    @Autowired
    QuotaFilter filter;
    @Autowired
    MeterRegistry registry;

    @Test
    void answers429WithRetryAfterOnceTheAuthenticatedUsersBurstIsSpent() throws Exception {
        for (int i = 0; i < 3; i++) {
            HttpResponse<String> ok = send(get("/whoami", "acme"));
            assertThat(ok.statusCode()).isEqualTo(200);
            assertThat(ok.body()).isEqualTo("acme");
        }
        HttpResponse<String> refused = send(get("/whoami", "acme"));
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(Long.parseLong(refused.headers().firstValue("Retry-After").orElseThrow())).isPositive();
        assertThat(refused.body()).contains("tenant_rate");
        // the bucket was the authenticated user's own: another user of the same plan is untouched
        assertThat(send(get("/whoami", "hooli")).statusCode()).isEqualTo(200);
        // and the meters are in Boot's registry
        assertThat(registry.get(QuotaMeterBinder.REQUESTS).tag("tenant", "acme").tag("outcome", "rejected")
                .functionCounter().count()).isEqualTo(1.0);
    }

    @Test
    void anUnauthenticatedRequestMeetsSpringSecurityBeforeTheQuotaFilter() throws Exception {
        HttpResponse<String> response = send(HttpRequest.newBuilder(uri("/whoami")).GET().build());
        assertThat(response.statusCode()).isEqualTo(401);
        // Security's challenge, not the filter's missing_tenant problem: the security chain ran first
        assertThat(response.headers().firstValue("WWW-Authenticate").orElse("")).startsWith("Basic");
        assertThat(response.body()).doesNotContain("missing_tenant");
    }

    @Test
    void holdsTheConcurrencySlotOfADeferredResultUntilItCompletes() throws Exception {
        CompletableFuture<HttpResponse<String>> first =
                client.sendAsync(get("/slow", "globex"), HttpResponse.BodyHandlers.ofString());
        DeferredResult<String> running = api.pending.poll(PATIENCE.toSeconds(), TimeUnit.SECONDS);
        assertThat(running).as("the first request reached the controller").isNotNull();

        HttpResponse<String> second = send(get("/slow", "globex"));
        assertThat(second.statusCode()).isEqualTo(429);
        assertThat(second.body()).contains("concurrency");

        running.setResult("done");
        assertThat(first.get(PATIENCE.toSeconds(), TimeUnit.SECONDS).body()).isEqualTo("done");
        // the slot is freed when the async request completes, which may be a moment after the client has its answer
        Await.within(PATIENCE, "the slow slot released", () -> filter.control().concurrency().inflight("slow") == 0);

        CompletableFuture<HttpResponse<String>> third =
                client.sendAsync(get("/slow", "globex"), HttpResponse.BodyHandlers.ofString());
        DeferredResult<String> again = api.pending.poll(PATIENCE.toSeconds(), TimeUnit.SECONDS);
        assertThat(again).as("the slot was free again").isNotNull();
        again.setResult("again");
        assertThat(third.get(PATIENCE.toSeconds(), TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    }

    @Test
    void aDeferredResultThatTimesOutGivesItsSlotBack() throws Exception {
        // never completed: Spring MVC ends it after its 300 ms time-out (503); the slot must come back
        HttpResponse<String> timedOut = send(get("/slow?timeoutMs=300", "initech"));
        assertThat(timedOut.statusCode()).isEqualTo(503);
        Await.within(PATIENCE, "initech's slow slot released", () -> filter.control().concurrency().inflight("slow", "initech") == 0);
        api.pending.clear();
    }

    @Test
    void holdsTheConcurrencySlotOfAnAsyncServletUntilItCompletes() throws Exception {
        CompletableFuture<HttpResponse<String>> first =
                client.sendAsync(get("/servlet-report", "hooli"), HttpResponse.BodyHandlers.ofString());
        AsyncContext running = App.REPORTS.poll(PATIENCE.toSeconds(), TimeUnit.SECONDS);
        assertThat(running).as("the first request reached the servlet").isNotNull();

        HttpResponse<String> second = send(get("/servlet-report", "hooli"));
        assertThat(second.statusCode()).isEqualTo(429);
        assertThat(second.body()).contains("concurrency");

        running.getResponse().getWriter().write("report");
        running.complete();
        assertThat(first.get(PATIENCE.toSeconds(), TimeUnit.SECONDS).body()).isEqualTo("report");
        Await.within(PATIENCE, "hooli's slow slot released", () -> filter.control().concurrency().inflight("slow", "hooli") == 0);
    }

    @Test
    void endpointShowsWhatIsInForceAndChangesTheGlobalQuota() throws Exception {
        JsonNode before = json.readTree(send(get("/actuator/quotagate", "ops")).body());
        assertThat(before.at("/plans/free/limits/0/capacity").asLong()).isEqualTo(3);
        assertThat(before.at("/global/limits/0/name").asText()).isEqualTo("api");
        assertThat(before.at("/global/capacity").asLong()).isEqualTo(1000);

        HttpResponse<String> changed = send(post("/actuator/quotagate",
                "{\"capacity\": 2000, \"refill\": 2000, \"period\": \"1m\"}"));
        assertThat(changed.statusCode()).isEqualTo(200);
        assertThat(filter.control().globalQuotaCapacity()).isEqualTo(2000);
        JsonNode after = json.readTree(send(get("/actuator/quotagate", "ops")).body());
        assertThat(after.at("/global/capacity").asLong()).isEqualTo(2000);
    }

    @Test
    void endpointShowsOneTenantsRemainingUnitsAndRequestsInFlight() throws Exception {
        HttpResponse<String> response = send(get("/actuator/quotagate/initech", "ops"));
        assertThat(response.statusCode()).isEqualTo(200);
        JsonNode tenant = json.readTree(response.body());
        assertThat(tenant.at("/limits/0/name").asText()).isEqualTo("burst");
        assertThat(tenant.at("/limits/0/remaining").asLong()).isEqualTo(3);
        assertThat(tenant.at("/inflight/slow").asInt()).isZero();

        HttpResponse<String> invalid = send(get("/actuator/quotagate/in%20valid", "ops"));
        assertThat(invalid.statusCode()).isEqualTo(400);
    }

    @Test
    void endpointChangesAPlansLimitsAndAnswers400ToBadValues() throws Exception {
        HttpResponse<String> changed = send(post("/actuator/quotagate/pro",
                "{\"capacity\": 50, \"refill\": 5, \"period\": \"1m\"}"));
        assertThat(changed.statusCode()).isEqualTo(200);
        assertThat(filter.control().tenantLimits("umbrella").get(0).capacity()).isEqualTo(50);

        HttpResponse<String> zero = send(post("/actuator/quotagate/pro",
                "{\"capacity\": 0, \"refill\": 5, \"period\": \"1m\"}"));
        assertThat(zero.statusCode()).isEqualTo(400);
        assertThat(zero.body()).contains("capacity");
        HttpResponse<String> period = send(post("/actuator/quotagate/pro",
                "{\"capacity\": 5, \"refill\": 5, \"period\": \"0\"}"));
        assertThat(period.statusCode()).isEqualTo(400);
        assertThat(period.body()).contains("period");
        assertThat(send(post("/actuator/quotagate/nosuch",
                "{\"capacity\": 5, \"refill\": 5, \"period\": \"1m\"}")).body()).contains("unknown plan");
        assertThat(send(post("/actuator/quotagate/pro", "{\"capacity\": 5}")).statusCode()).isEqualTo(400);
        assertThat(filter.control().tenantLimits("umbrella").get(0).capacity()).isEqualTo(50);

        // protected as the application protects Actuator
        HttpResponse<String> user = send(HttpRequest.newBuilder(uri("/actuator/quotagate/pro"))
                .header("Authorization", basic("acme")).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"capacity\": 9, \"refill\": 9, \"period\": \"1m\"}"))
                .build());
        assertThat(user.statusCode()).isEqualTo(403);
    }

    @Test
    void endpointSetsReadsAndClearsATenantsContract() throws Exception {
        // wayne is no user and unknown to the plans file (unknown: reject): nothing knows it yet
        HttpResponse<String> unknown = send(get("/actuator/quotagate/wayne", "ops"));
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(json.readTree(unknown.body()).at("/error").asText()).contains("unknown tenant 'wayne'");

        HttpResponse<String> set = send(post("/actuator/quotagate/tenant/wayne",
                "{\"plan\": \"pro\", \"capacity\": 7, \"refill\": 7, \"period\": \"1m\", \"bandwidth\": \"burst\"}"));
        assertThat(set.statusCode()).as(set.body()).isEqualTo(200);
        assertThat(json.readTree(set.body()).at("/contract/limits/0/capacity").asLong()).isEqualTo(7);
        // a second write adds a bandwidth to the tenant's own limits on the same plan
        HttpResponse<String> daily = send(post("/actuator/quotagate/tenant/wayne",
                "{\"plan\": \"pro\", \"capacity\": 500, \"refill\": 500, \"period\": \"1d\", \"bandwidth\": \"daily\"}"));
        assertThat(daily.statusCode()).as(daily.body()).isEqualTo(200);

        for (String path : new String[] {"/actuator/quotagate/wayne", "/actuator/quotagate/tenant/wayne"}) {
            HttpResponse<String> read = send(get(path, "ops"));
            assertThat(read.statusCode()).as(path).isEqualTo(200);
            JsonNode tenant = json.readTree(read.body());
            assertThat(tenant.at("/contract/plan").asText()).isEqualTo("pro");
            assertThat(tenant.at("/contract/limits/0/period").asText()).isEqualTo("PT1M");
            // the bucket is sized by the tenant's own limits, not the plan's 100
            assertThat(tenant.at("/limits/0/capacity").asLong()).isEqualTo(7);
            assertThat(tenant.at("/limits/1/name").asText()).isEqualTo("daily");
        }
        JsonNode all = json.readTree(send(get("/actuator/quotagate", "ops")).body());
        assertThat(all.at("/limits/shared").asBoolean()).as("a local store").isFalse();
        assertThat(all.at("/limits/fileAgrees").asBoolean()).isTrue();
        assertThat(all.at("/limits/overrides/tenants/wayne/plan").asText()).isEqualTo("pro");

        // on a plan alone: the plan's limits
        assertThat(send(post("/actuator/quotagate/tenant/wayne", "{\"plan\": \"free\"}")).statusCode()).isEqualTo(200);
        JsonNode onPlan = json.readTree(send(get("/actuator/quotagate/wayne", "ops")).body());
        assertThat(onPlan.at("/contract/limits").size()).isZero();
        assertThat(onPlan.at("/limits/0/capacity").asLong()).isEqualTo(3);

        HttpResponse<String> cleared = send(delete("/actuator/quotagate/tenant/wayne"));
        assertThat(cleared.statusCode()).isEqualTo(200);
        assertThat(json.readTree(cleared.body()).at("/cleared").asBoolean()).isTrue();
        assertThat(send(get("/actuator/quotagate/wayne", "ops")).statusCode()).isEqualTo(404);
        assertThat(json.readTree(send(delete("/actuator/quotagate/tenant/wayne")).body()).at("/cleared").asBoolean())
                .as("nothing left to clear").isFalse();
    }

    @Test
    void endpointRefusesABadTenantWriteNamingTheFieldAndChangesNothing() throws Exception {
        String[][] cases = {
                {"{}", "plan: required"},
                {"{\"plan\": \"gold\"}", "plan: unknown plan 'gold'"},
                {bandwidth("\"capacity\": 1, \"refill\": 1, \"period\": \"1m\""),
                        "capacity: capacity 1 of limit 'burst' is below the cost 2 of route export"},
                {bandwidth("\"capacity\": 0, \"refill\": 1, \"period\": \"1m\""), "capacity: must be a whole number > 0"},
                {bandwidth("\"capacity\": 5, \"refill\": 1.5, \"period\": \"1m\""),
                        "refill: must be a whole number > 0, was '1.5'"},
                {bandwidth("\"capacity\": 5, \"period\": \"1m\""), "refill: required"},
                {bandwidth("\"capacity\": 5, \"refill\": 5, \"period\": \"0\""), "period:"},
                {bandwidth("\"capacity\": 5, \"refill\": 5"), "period: required"},
                {bandwidth("\"capacity\": 5, \"refill\": 5, \"period\": \"1m\", \"bandwidth\": \"Burst Limit\""),
                        "bandwidth: must match"},
        };
        for (String[] c : cases) {
            HttpResponse<String> refused = send(post("/actuator/quotagate/tenant/acme", c[0]));
            assertThat(refused.statusCode()).as(c[0]).isEqualTo(400);
            assertThat(json.readTree(refused.body()).at("/error").asText()).as(c[0]).startsWith(c[1]);
        }
        // Actuator reads a write's body as flat text fields: a list is refused before the endpoint, still a 400
        HttpResponse<String> nested = send(post("/actuator/quotagate/tenant/acme", "{\"plan\": \"pro\", \"limits\": []}"));
        assertThat(nested.statusCode()).isEqualTo(400);
        assertThat(nested.body()).doesNotContain("\tat ");
        HttpResponse<String> badId = send(post("/actuator/quotagate/tenant/in%20valid", "{\"plan\": \"pro\"}"));
        assertThat(badId.statusCode()).isEqualTo(400);
        assertThat(json.readTree(badId.body()).at("/error").asText()).startsWith("tenant: not a valid tenant id");
        assertThat(send(delete("/actuator/quotagate/tenant/in%20valid")).statusCode()).isEqualTo(400);
        assertThat(send(post("/actuator/quotagate/invalidate/in%20valid", "{}")).statusCode()).isEqualTo(400);

        // nothing changed: acme is on the file's plan, with no runtime entry
        JsonNode acme = json.readTree(send(get("/actuator/quotagate/acme", "ops")).body());
        assertThat(acme.at("/contract/plan").asText()).isEqualTo("free");
        assertThat(filter.control().overrides().tenants()).doesNotContainKey("acme");
        // no stack trace in any refusal
        assertThat(badId.body()).doesNotContain("Exception").doesNotContain("\tat ");
    }

    @Test
    void endpointPathsAreToldApartBySegmentCountSoNoPlanNameClashes() throws Exception {
        // one segment: the plan write, whatever the plan is called (here no plan is named "tenant")
        HttpResponse<String> plan = send(post("/actuator/quotagate/tenant",
                "{\"capacity\": 5, \"refill\": 5, \"period\": \"1m\"}"));
        assertThat(plan.statusCode()).isEqualTo(400);
        assertThat(plan.body()).contains("plan: unknown plan 'tenant'");
        // two segments: only tenant/ and invalidate/ exist
        assertThat(send(post("/actuator/quotagate/nosuch/acme", "{\"plan\": \"pro\"}")).statusCode()).isEqualTo(404);
        assertThat(send(get("/actuator/quotagate/nosuch/acme", "ops")).statusCode()).isEqualTo(404);
        assertThat(send(delete("/actuator/quotagate/nosuch")).statusCode()).isEqualTo(404);
        // invalidate takes no body (the content type of every Actuator write)
        HttpResponse<String> invalidated = send(HttpRequest.newBuilder(uri("/actuator/quotagate/invalidate/acme"))
                .header("Authorization", basic("ops")).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.noBody()).build());
        assertThat(invalidated.statusCode()).isEqualTo(200);
        assertThat(json.readTree(invalidated.body()).at("/invalidated").asBoolean()).isTrue();
    }

    @Test
    void endpointClearsEveryRuntimeChange() throws Exception {
        assertThat(send(post("/actuator/quotagate/pro", "{\"capacity\": 60, \"refill\": 6, \"period\": \"1m\"}"))
                .statusCode()).isEqualTo(200);
        assertThat(send(post("/actuator/quotagate/tenant/wayne", "{\"plan\": \"pro\"}")).statusCode()).isEqualTo(200);
        JsonNode before = json.readTree(send(get("/actuator/quotagate", "ops")).body());
        assertThat(before.at("/limits/overrides/plans/pro/0/capacity").asLong()).isEqualTo(60);
        assertThat(before.at("/limits/overrides/tenants/wayne/plan").asText()).isEqualTo("pro");

        HttpResponse<String> cleared = send(delete("/actuator/quotagate/overrides"));
        assertThat(cleared.statusCode()).isEqualTo(200);
        JsonNode after = json.readTree(send(get("/actuator/quotagate", "ops")).body());
        assertThat(after.at("/plans/pro/limits/0/capacity").asLong()).as("the file's again").isEqualTo(100);
        assertThat(after.at("/limits/overrides/plans").size()).isZero();
        assertThat(after.at("/limits/overrides/tenants").size()).isZero();
        assertThat(after.at("/limits/overrides/global").isMissingNode()).isTrue();
        assertThat(send(get("/actuator/quotagate/wayne", "ops")).statusCode()).isEqualTo(404);
    }

    @Test
    void healthReportsTheLocalStore() throws Exception {
        HttpResponse<String> response = send(get("/actuator/health/quotagate", "ops"));
        assertThat(response.statusCode()).isEqualTo(200);
        JsonNode health = json.readTree(response.body());
        assertThat(health.at("/status").asText()).isEqualTo("UP");
        assertThat(health.at("/details/store").asText()).isEqualTo("local");
        assertThat(health.at("/details/limitsVersion").isMissingNode()).as("limits are not shared").isTrue();
    }

    private HttpResponse<String> send(HttpRequest request) throws Exception {
        return client.send(request, HttpResponse.BodyHandlers.ofString());
    }

    private HttpRequest delete(String path) {
        return HttpRequest.newBuilder(uri(path)).header("Authorization", basic("ops")).DELETE().build();
    }

    /** A tenant write placing it on pro with a bandwidth of its own: these fields. */
    private static String bandwidth(String fields) {
        return "{\"plan\": \"pro\", " + fields + "}";
    }

    private HttpRequest get(String path, String user) {
        return HttpRequest.newBuilder(uri(path)).header("Authorization", basic(user)).GET().build();
    }

    private HttpRequest post(String path, String body) {
        return HttpRequest.newBuilder(uri(path)).header("Authorization", basic("ops"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
    }

    private URI uri(String path) {
        return URI.create("http://localhost:" + port + path);
    }

    private static String basic(String user) {
        return "Basic " + Base64.getEncoder().encodeToString((user + ":pw").getBytes(StandardCharsets.UTF_8));
    }

    /** The application: a controller, HTTP Basic users, Actuator for the role OPS only. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Api.class)
    static class App {

        @Bean
        SecurityFilterChain security(HttpSecurity http) throws Exception {
            http.authorizeHttpRequests(a -> a.requestMatchers("/actuator/**").hasRole("OPS")
                            .anyRequest().authenticated())
                    .httpBasic(Customizer.withDefaults())
                    .csrf(csrf -> csrf.disable());
            return http.build();
        }

        /** Async reports started by {@link #reportServlet()}, completed by the test. */
        static final BlockingQueue<AsyncContext> REPORTS = new LinkedBlockingQueue<>();

        /** A plain async servlet beside Spring MVC, in the same concurrency group as {@code /slow}. */
        @Bean
        ServletRegistrationBean<HttpServlet> reportServlet() {
            ServletRegistrationBean<HttpServlet> registration = new ServletRegistrationBean<>(new HttpServlet() {
                @Override
                protected void doGet(HttpServletRequest req, HttpServletResponse resp) {
                    REPORTS.add(req.startAsync());
                }
            }, "/servlet-report");
            registration.setAsyncSupported(true);
            return registration;
        }

        @Bean
        UserDetailsService users() {
            InMemoryUserDetailsManager users = new InMemoryUserDetailsManager();
            for (String name : new String[] {"acme", "globex", "initech", "hooli", "umbrella"}) {
                users.createUser(User.withUsername(name).password("{noop}pw").roles("USER").build());
            }
            users.createUser(User.withUsername("ops").password("{noop}pw").roles("OPS").build());
            return users;
        }
    }

    /** The application's API: who is calling, and a slow async report completed by the test. */
    @RestController
    static class Api {
        final BlockingQueue<DeferredResult<String>> pending = new LinkedBlockingQueue<>();

        @GetMapping("/whoami")
        String whoami(Principal principal) {
            return principal.getName();
        }

        @GetMapping("/slow")
        DeferredResult<String> slow(@RequestParam(name = "timeoutMs", required = false) Long timeoutMs) {
            DeferredResult<String> result = new DeferredResult<>(timeoutMs != null ? timeoutMs : PATIENCE.toMillis());
            pending.add(result);
            return result;
        }
    }
}

package io.quotagate.example;

import io.quotagate.filter.servlet.QuotaFilter;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code POST /v1/completions} (reserve, then reconcile) and {@code PUT /admin/quota}, with a manual clock. */
class CompletionsAndAdminTest {
    private static final HttpClient CLIENT = HttpClient.newHttpClient();
    private final ManualClock clock = new ManualClock();
    private ExampleApp.Running app;

    private void start(String adminToken) throws Exception {
        Plans plans = PlansFile.load(ExampleApp.DEFAULT_PLANS);
        QuotaFilter filter = ExampleApp.withEstimators(QuotaFilter.builder().plans(plans).clock(clock), plans).build();
        app = ExampleApp.start("127.0.0.1", 0, filter, adminToken);
    }

    @AfterEach
    void stop() throws Exception {
        if (app != null) app.close();
    }

    private HttpResponse<String> send(String method, String path, String tenant, String auth, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(app.baseUri() + path)).timeout(Duration.ofSeconds(10))
                .method(method, HttpRequest.BodyPublishers.ofString(body)).header("Content-Type", "application/json");
        if (tenant != null) b.header("X-Tenant-Id", tenant);
        if (auth != null) b.header("Authorization", auth);
        return CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> complete(String tenant, int promptChars, int maxTokens) throws Exception {
        return send("POST", "/v1/completions", tenant, null,
                "{\"prompt\": \"" + "x".repeat(promptChars) + "\", \"max_tokens\": " + maxTokens + "}");
    }

    @Test
    void aCompletionReservesPromptPlusMaxTokensAndRefundsWhatItDidNotUse() throws Exception {
        start(null);
        // acme is on pro: burst 200. 40 chars = 10 prompt tokens; reserve 10 + 100 = 110, use 10 + 25 = 35
        HttpResponse<String> r = complete("acme", 40, 100);
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).contains("\"prompt_tokens\":10", "\"completion_tokens\":25", "\"total_tokens\":35",
                "\"reserved_tokens\":110");
        // 200 - 35 = 165 left thanks to the refund (only 90 without it)
        assertThat(complete("acme", 40, 155).statusCode()).isEqualTo(200);
        // 165 - 10 - 39 = 116 left after that one's refund
        assertThat(complete("acme", 40, 106).statusCode()).isEqualTo(200);
        HttpResponse<String> refused = complete("acme", 40, 100);
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.body()).contains("\"reason\":\"tenant_rate\"");
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "{\"prompt\": \"hi\", \"max_tokens\": 10",          // malformed JSON
            "[1, 2]",                                           // not an object
            "{\"max_tokens\": 10}",                             // no prompt
            "{\"prompt\": 5, \"max_tokens\": 10}",              // prompt not a string
            "{\"prompt\": \"hi\"}",                             // no max_tokens
            "{\"prompt\": \"hi\", \"max_tokens\": \"ten\"}",    // non-numeric
            "{\"prompt\": \"hi\", \"max_tokens\": -1}",         // negative
            "{\"prompt\": \"hi\", \"max_tokens\": 0}",          // zero
            "{\"prompt\": \"hi\", \"max_tokens\": 2.5}",        // fractional
            "{\"prompt\": \"hi\", \"max_tokens\": 1000000000000}", // absurd
            ""})
    void badCompletionBodiesAre400AndChargeNothing(String body) throws Exception {
        start(null);
        HttpResponse<String> r = send("POST", "/v1/completions", "acme", null, body);
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(r.body()).contains("\"reason\":\"invalid_request\"").doesNotContain("Exception", "\tat ");
        assertThat(complete("acme", 4, 199).statusCode()).as("acme's 200 untouched").isEqualTo(200);
    }

    @Test
    void aCompletionLargerThanThePlanCanEverAdmitIs400() throws Exception {
        start(null);
        HttpResponse<String> r = complete("globex", 40, 100); // free: burst 20
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(r.body()).contains("\"reason\":\"cost_too_large\"", "110 units", "is 20");
        assertThat(complete("globex", 8, 18).statusCode()).isEqualTo(200);
    }

    @Test
    void theAdminEndpointIsOffWithoutAToken() throws Exception {
        start(null);
        assertThat(send("PUT", "/admin/quota", null, "Bearer x", "{}").statusCode()).isEqualTo(404);
    }

    @Test
    void theAdminEndpointRefusesAMissingOrWrongToken() throws Exception {
        start("s3cret");
        String body = "{\"capacity\": 10, \"refill\": 10, \"period\": \"1m\"}";
        for (String auth : new String[]{null, "Bearer wrong", "Bearer s3cret2", "Basic s3cret", "Bearer "}) {
            HttpResponse<String> r = send("PUT", "/admin/quota", null, auth, body);
            assertThat(r.statusCode()).as(String.valueOf(auth)).isEqualTo(401);
            assertThat(r.headers().firstValue("WWW-Authenticate")).hasValueSatisfying(v -> assertThat(v).startsWith("Bearer"));
        }
        assertThat(send("GET", "/admin/quota", null, "Bearer s3cret", "").body()).contains("\"capacity\":3000");
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "{\"capacity\": 10, \"refill\": 10",
            "{\"capacity\": 0, \"refill\": 10, \"period\": \"1m\"}",
            "{\"capacity\": -5, \"refill\": 10, \"period\": \"1m\"}",
            "{\"capacity\": \"ten\", \"refill\": 10, \"period\": \"1m\"}",
            "{\"capacity\": 10, \"refill\": 10, \"period\": \"1x\"}",
            "{\"capacity\": 10, \"refill\": 10, \"period\": 60}",
            "{\"capacity\": 10, \"refill\": 10}",
            "{\"capacity\": 10, \"refill\": 10, \"period\": \"1m\", \"burst\": 3}",
            "{\"capacity\": 4, \"refill\": 4, \"period\": \"1m\"}",        // below the reports route's cost 5
            "null"})
    void aBadQuotaIs400AndChangesNothing(String body) throws Exception {
        start("s3cret");
        HttpResponse<String> r = send("PUT", "/admin/quota", null, "Bearer s3cret", body);
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(r.body()).contains("\"status\":400").doesNotContain("Exception");
        assertThat(send("GET", "/admin/quota", null, "Bearer s3cret", "").body()).contains("\"capacity\":3000");
    }

    @Test
    void aNewGlobalQuotaTakesEffectAtOnceWithoutARestart() throws Exception {
        start("s3cret");
        for (int i = 0; i < 3; i++) assertThat(Http.get(URI.create(app.baseUri() + "/items/1"), "t" + i).statusCode()).isEqualTo(200);
        HttpResponse<String> r = send("PUT", "/admin/quota", null, "Bearer s3cret",
                "{\"capacity\": 6, \"refill\": 6, \"period\": \"1m\"}");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).contains("\"capacity\":6", "\"period\":\"PT1M\"");
        // 2997 tokens kept, capped at 6
        for (int i = 0; i < 6; i++) assertThat(Http.get(URI.create(app.baseUri() + "/items/1"), "u" + i).statusCode()).isEqualTo(200);
        HttpResponse<String> refused = Http.get(URI.create(app.baseUri() + "/items/1"), "fresh");
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.body()).contains("\"reason\":\"global_rate\"");
        assertThat(refused.headers().firstValue("Retry-After")).contains("10"); // 6 per minute
        assertThat(refused.headers().map().keySet()).noneMatch(h -> h.toLowerCase().contains("ratelimit"));
    }
}

package io.quotagate.example;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/**
 * {@code POST /v1/completions} (reserve, then reconcile) and {@code PUT /admin/quota} (on the
 * management port), with a manual clock.
 */
class CompletionsAndAdminTest {
    private static final HttpClient CLIENT = HttpClient.newHttpClient();
    private final ManualClock clock = new ManualClock();
    private ExampleApp.Running app;

    private void start(String adminToken) throws Exception {
        Plans plans = PlansFile.load(ExampleApp.DEFAULT_PLANS);
        QuotaFilter filter = ExampleApp.withEstimators(QuotaFilter.builder().plans(plans).clock(clock), plans).build();
        app = ExampleApp.start("127.0.0.1", 0, "127.0.0.1", 0, filter, adminToken, clock::nanoTime);
    }

    @AfterEach
    void stop() throws Exception {
        if (app != null) app.close();
    }

    private HttpResponse<String> send(String method, String path, String tenant, String auth, String body) throws Exception {
        // the admin endpoint is served on the management port only
        String base = path.startsWith("/admin/") ? app.managementUri() : app.baseUri();
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(10))
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
            "{\"prompt\": \"hi\", \"max_tokens\": 10}{\"max_tokens\": 4096}",   // a second object: once priced by the first
            "{\"prompt\": \"hi\", \"max_tokens\": 10} trailing",                 // trailing text: once ignored
            "{\"prompt\": \"hi\", \"max_tokens\": 4096, \"max_tokens\": 10}",   // a field twice: once the last won
            ""})
    void badCompletionBodiesAre400AndChargeOnlyTheRoutesMinimum(String body) throws Exception {
        start(null);
        HttpResponse<String> r = send("POST", "/v1/completions", "acme", null, body);
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(r.body()).contains("\"reason\":\"invalid_request\"").doesNotContain("Exception", "\tat ");
        // the body was read and refused: it keeps the route's minimum cost (1) of acme's 200
        assertThat(complete("acme", 4, 199).statusCode()).as("only 199 left").isEqualTo(429);
        assertThat(complete("acme", 4, 198).statusCode()).isEqualTo(200);
    }

    @Test
    void aCompletionWithASecondObjectOrAFieldTwiceIs400NamingTheProblem() throws Exception {
        start(null);
        HttpResponse<String> second = send("POST", "/v1/completions", "acme", null,
                "{\"prompt\": \"hi\", \"max_tokens\": 10}{\"max_tokens\": 4096}");
        assertThat(second.statusCode()).isEqualTo(400);
        assertThat(second.body()).contains("\"reason\":\"invalid_request\"",
                "The body must be one JSON object {\\\"prompt\\\": \\\"...\\\", \\\"max_tokens\\\": N} "
                        + "(more data after the JSON value at line 1, column 35).");
        HttpResponse<String> twice = send("POST", "/v1/completions", "acme", null,
                "{\"prompt\": \"hi\", \"max_tokens\": 4096, \"max_tokens\": 10}");
        assertThat(twice.statusCode()).isEqualTo(400);
        assertThat(twice.body()).contains("(Duplicate field 'max_tokens')");
    }

    @Test
    void aCompletionLargerThanThePlanCanEverAdmitIs400() throws Exception {
        start(null);
        HttpResponse<String> r = complete("globex", 40, 100); // free: burst 20
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(r.body()).contains("\"reason\":\"cost_too_large\"", "110 units", "is 20");
        // the refused body was read, so it kept the route's minimum (1): 19 of the 20 are left
        assertThat(complete("globex", 8, 18).statusCode()).isEqualTo(429);
        assertThat(complete("globex", 8, 17).statusCode()).isEqualTo(200);
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "{\"prompt\":\"hello world hello\",\"max_tokens\":11}", // 5 + 11 = 16
            "{\"prompt\":\"hello world hello\",\"max_tokens\":15}"}) // 5 + 15 = 20
    void aRefusedCompletionIsToldTheWaitForItsOwnCostAndWaitingItIsEnough(String body) throws Exception {
        start(null);
        int spent = 0; // a guest on the free plan: spend its 20 units on cheap items
        while (send("GET", "/items/1", "t1", null, "").statusCode() == 200) spent++;
        assertThat(spent).isEqualTo(20);
        long cost = Completions.parse(body.getBytes(StandardCharsets.UTF_8)).reservation();
        HttpResponse<String> refused = send("POST", "/v1/completions", "t1", null, body);
        assertThat(refused.statusCode()).isEqualTo(429);
        // free refills 1 unit a second: the wait for this request's cost, not for the route's minimum (1)
        assertThat(refused.headers().firstValue("Retry-After")).contains(Long.toString(cost));
        clock.advance(Duration.ofSeconds(cost));
        assertThat(send("POST", "/v1/completions", "t1", null, body).statusCode()).isEqualTo(200);
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
            "{\"capacity\": 10, \"refill\": 10, \"period\": \"1m\"}{\"capacity\": 1}", // a second object: once ignored
            "{\"capacity\": 10, \"refill\": 10, \"period\": \"1m\"} trailing",         // trailing text: once ignored
            "{\"capacity\": 10, \"refill\": 10, \"period\": \"P1000000000D\"}",       // past 292 years: once a 500
            "{\"capacity\": 10, \"refill\": 10, \"period\": \"106752d\"}",
            "null"})
    void aBadQuotaIs400AndChangesNothing(String body) throws Exception {
        start("s3cret");
        HttpResponse<String> r = send("PUT", "/admin/quota", null, "Bearer s3cret", body);
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(r.body()).contains("\"status\":400").doesNotContain("Exception");
        assertThat(send("GET", "/admin/quota", null, "Bearer s3cret", "").body()).contains("\"capacity\":3000");
    }

    @Test
    void aBodyWithAFieldTwiceIsRefusedNotLastOneWins() throws Exception {
        start("s3cret");
        HttpResponse<String> r = send("PUT", "/admin/quota", null, "Bearer s3cret",
                "{\"capacity\": 10, \"refill\": 10, \"period\": \"1m\", \"capacity\": 5000000}");
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t).startsWith("application/problem+json"));
        assertThat(r.body()).contains("Duplicate field 'capacity'");
        assertThat(send("GET", "/admin/quota", null, "Bearer s3cret", "").body()).contains("\"capacity\":3000");
    }

    @Test
    void aBadPeriodIsNamedIntactInTheProblem() throws Exception {
        start("s3cret");
        HttpResponse<String> r = send("PUT", "/admin/quota", null, "Bearer s3cret", "{\"capacity\": 10, \"refill\": 10, \"period\": \"0\"}");
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(r.body()).contains("\"detail\":\"period: unknown period '0': use a number with a unit (ms, s, m, h, d) "
                + "or ISO-8601 like PT10S\"");
    }

    static Stream<Arguments> badQuotaMessages() {
        return Stream.of(
                arguments("{\"capacity\": 10, \"refill\": 10, \"period\": \"0\"}",
                        "period: unknown period '0': use a number with a unit (ms, s, m, h, d) or ISO-8601 like PT10S"),
                arguments("{\"capacity\": 10, \"refill\": 10, \"period\": \"10\"}",
                        "period: unknown period '10': use a number with a unit (ms, s, m, h, d) or ISO-8601 like PT10S"),
                arguments("{\"capacity\": 10, \"refill\": 10, \"period\": \"0s\"}", "period: must be > 0, was '0s'"),
                arguments("{\"capacity\": 10, \"refill\": 10, \"period\": \"PT0S\"}", "period: must be > 0, was 'PT0S'"),
                arguments("{\"capacity\": 10, \"refill\": 10, \"period\": \"P1X\"}", "period: not an ISO-8601 duration: 'P1X'"),
                arguments("{\"capacity\": 10, \"refill\": 10, \"period\": \"99999999999999999999d\"}",
                        "period: number out of range: 99999999999999999999d"),
                arguments("{\"capacity\": 10, \"refill\": 10, \"period\": \"\"}", "period: a period is required, e.g. 10s, 1m, 1d or PT10S"),
                arguments("{\"capacity\": 10, \"refill\": 10, \"period\": 60}", "period must be a string such as \"1m\", was 60."),
                arguments("{\"capacity\": 10, \"refill\": 10}", "period is required, a string such as \"1m\"."),
                arguments("{\"capacity\": 0, \"refill\": 10, \"period\": \"1m\"}", "capacity must be a whole number > 0, was 0."),
                arguments("{\"capacity\": -5, \"refill\": 10, \"period\": \"1m\"}", "capacity must be a whole number > 0, was -5."),
                arguments("{\"capacity\": \"ten\", \"refill\": 10, \"period\": \"1m\"}",
                        "capacity must be a whole number > 0, was \"ten\"."),
                arguments("{\"capacity\": 10, \"refill\": 2.5, \"period\": \"1m\"}", "refill must be a whole number > 0, was 2.5."),
                arguments("{\"capacity\": 99999999999999999999, \"refill\": 10, \"period\": \"1m\"}",
                        "capacity must be a whole number > 0, was 99999999999999999999."),
                arguments("{\"refill\": 10, \"period\": \"1m\"}", "capacity is required, a whole number > 0."),
                arguments("{\"capacity\": 10, \"refill\": 10, \"period\": \"1m\", \"burst\": 3}",
                        "Unknown field \"burst\"; expected capacity, refill and period (and optionally algorithm)."),
                arguments("{\"capacity\": 10, \"refill\": 10, \"period\": \"1m\", \"algorithm\": \"leaky\"}",
                        "algorithm must be token-bucket, gcra or sliding-window, was \"leaky\"."),
                arguments("{\"capacity\": 10, \"refill\": 10, \"period\": \"1m\", \"algorithm\": \"sliding-window\"}",
                        "refill: a sliding window takes no refill: it admits at most capacity in any period."),
                arguments("{\"capacity\": 10, \"period\": \"1m\", \"algorithm\": \"gcra\"}",
                        "refill is required, a whole number > 0."),
                arguments("[10, 10, \"1m\"]", "The body must be a JSON object such as " + EXAMPLE + ", was [10,10,\"1m\"]."),
                arguments("null", "The body must be a JSON object such as " + EXAMPLE + ", was null."),
                arguments("", "The body must be a JSON object such as " + EXAMPLE + ", was empty."),
                arguments("{\"capacity\": 1, \"capacity\": 2}",
                        "The body is not valid JSON (Duplicate field 'capacity'); expected " + EXAMPLE + "."),
                arguments("{\"capacity\": 10, \"refill\": 10, \"period\": \"1m\"}{\"capacity\": 1}",
                        "The body is not valid JSON (more data after the JSON value at line 1, column 47); expected " + EXAMPLE + "."),
                arguments("{\"capacity\": 10, \"refill\": 10, \"period\": \"1m\"}\n[1]",
                        "The body is not valid JSON (more data after the JSON value at line 2, column 1); expected " + EXAMPLE + "."),
                arguments("{\"capacity\": 10, \"refill\": 10, \"period\": \"1m\"} trailing",
                        "The body is not valid JSON (Unrecognized token 'trailing': was expecting (JSON String, Number, Array, "
                                + "Object or token 'null', 'true' or 'false')); expected " + EXAMPLE + "."),
                arguments("{\"capacity\": 10, \"refill\": 10, \"period\": \"P1000000000D\"}",
                        "period: must be at most 3650d (10 years), was 'P1000000000D'"),
                arguments("{\"capacity\": 10, \"refill\": 10, \"period\": \"106752d\"}",
                        "period: must be at most 3650d (10 years), was '106752d'"));
    }

    private static final String EXAMPLE = "{\"capacity\": 1500, \"refill\": 1500, \"period\": \"1m\"}";

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("badQuotaMessages")
    void everyMistakeIsNamedWithTheValueAsSent(String body, String message) {
        assertThatThrownBy(() -> AdminQuota.parse(body.getBytes(StandardCharsets.UTF_8), "api"))
                .isInstanceOf(IllegalArgumentException.class).hasMessage(message);
    }

    /** The admin endpoint asked from another loopback address: raw, since the JDK client cannot choose its source. */
    private String fromAddress(String source, String method, String auth, String body) throws Exception {
        int port = URI.create(app.managementUri()).getPort();
        try (Socket s = new Socket(InetAddress.getByName("127.0.0.1"), port, InetAddress.getByName(source), 0)) {
            s.setSoTimeout(10_000);
            byte[] content = body.getBytes(StandardCharsets.UTF_8);
            OutputStream out = s.getOutputStream();
            out.write((method + " /admin/quota HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nAuthorization: " + auth
                    + "\r\nContent-Type: application/json\r\nContent-Length: " + content.length + "\r\n\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1));
            out.write(content);
            out.flush();
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void repeatedWrongTokensLockTheirAddressOutToOneComparisonASecond() throws Exception {
        start("s3cret");
        String body = "{\"capacity\": 10, \"refill\": 10, \"period\": \"1m\"}";
        for (int i = 0; i < 5; i++) {
            assertThat(send("PUT", "/admin/quota", null, i % 2 == 0 ? null : "Basic czNjcmV0", body).statusCode())
                    .as("no bearer token: nothing compared, nothing counted").isEqualTo(401);
        }
        for (int i = 1; i <= WrongTokenBackoff.FREE_FAILURES; i++) {
            assertThat(send("PUT", "/admin/quota", null, "Bearer guess-" + i, body).statusCode()).isEqualTo(401);
        }
        HttpResponse<String> locked = send("PUT", "/admin/quota", null, "Bearer s3cret", body);
        assertThat(locked.statusCode()).as("even the right token: this second's comparison was the third guess").isEqualTo(429);
        assertThat(locked.headers().firstValue("Retry-After")).contains("1");
        assertThat(locked.body()).contains("\"status\":429",
                "Too many wrong admin tokens from this address: one token a second is compared; retry after 1 s.");
        assertThat(send("GET", "/admin/quota", null, "Bearer s3cret", "").statusCode()).isEqualTo(429);
        assertThat(send("GET", "/admin/quota", null, null, "").statusCode()).as("no token: nothing to ration").isEqualTo(401);
        assertThat(app.filter().control().plans().global().orElseThrow().limits().get(0).capacity()).as("nothing changed").isEqualTo(3000);

        assertThat(Http.status(fromAddress("127.0.0.2", "PUT", "Bearer s3cret", body)))
                .as("the right token from another address is unaffected").isEqualTo(200);
        assertThat(app.filter().control().plans().global().orElseThrow().limits().get(0).capacity()).isEqualTo(10);

        clock.advance(Duration.ofSeconds(1));
        assertThat(send("PUT", "/admin/quota", null, "Bearer guess-4", body).statusCode()).as("compared: wrong").isEqualTo(401);
        assertThat(send("PUT", "/admin/quota", null, "Bearer guess-5", body).statusCode()).as("this second's turn is taken")
                .isEqualTo(429);
        clock.advance(Duration.ofSeconds(1));
        assertThat(app.filter().control().plans().global().orElseThrow().limits().get(0).capacity()).isEqualTo(10);
        assertThat(send("PUT", "/admin/quota", null, "Bearer s3cret", body).statusCode())
                .as("1 s into the 4th guess's 2 s lockout, the right token gets its turn").isEqualTo(200);
        assertThat(send("PUT", "/admin/quota", null, "Bearer guess-6", body).statusCode()).isEqualTo(401);
        assertThat(send("PUT", "/admin/quota", null, "Bearer s3cret", body).statusCode())
                .as("the right token cleared the record: one failure locks nothing").isEqualTo(200);
    }

    @Test
    void theRightTokenGetsInWithinASecondOfAFiveMinuteLockoutWhileGuessesStayThrottled() throws Exception {
        start("s3cret");
        String body = "{\"capacity\": 10, \"refill\": 10, \"period\": \"1m\"}";
        for (int i = 1; i <= 12; i++) { // one a second: each is compared, and the 12th locks the address out for 5 minutes
            if (i > 1) clock.advance(Duration.ofSeconds(1));
            assertThat(send("PUT", "/admin/quota", null, "Bearer guess-" + i, body).statusCode()).isEqualTo(401);
        }
        for (int i = 0; i < 20; i++) {
            HttpResponse<String> r = send("PUT", "/admin/quota", null, "Bearer guess-x" + i, body);
            assertThat(r.statusCode()).as("guesses in the same second are not compared").isEqualTo(429);
            assertThat(r.headers().firstValue("Retry-After")).contains("1");
        }
        assertThat(send("PUT", "/admin/quota", null, "Bearer s3cret", body).statusCode()).isEqualTo(429);
        clock.advance(Duration.ofSeconds(1));
        assertThat(send("PUT", "/admin/quota", null, "Bearer s3cret", body).statusCode())
                .as("a second later, 299 s before the lockout ends").isEqualTo(200);
        assertThat(app.filter().control().plans().global().orElseThrow().limits().get(0).capacity()).isEqualTo(10);
    }

    @Test
    void aNewGlobalQuotaTakesEffectAtOnceWithoutARestart() throws Exception {
        start("s3cret");
        for (int i = 0; i < 3; i++) assertThat(Http.get(URI.create(app.baseUri() + "/items/1"), "t" + i).statusCode()).isEqualTo(200);
        HttpResponse<String> r = send("PUT", "/admin/quota", null, "Bearer s3cret",
                "{\"capacity\": 6, \"refill\": 6, \"period\": \"1m\"}");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).contains("\"capacity\":6", "\"period\":\"PT1M\"", "\"algorithm\":\"token-bucket\"");
        // 2997 tokens kept, capped at 6
        for (int i = 0; i < 6; i++) assertThat(Http.get(URI.create(app.baseUri() + "/items/1"), "u" + i).statusCode()).isEqualTo(200);
        HttpResponse<String> refused = Http.get(URI.create(app.baseUri() + "/items/1"), "fresh");
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.body()).contains("\"reason\":\"global_rate\"");
        assertThat(refused.headers().firstValue("Retry-After")).contains("10"); // 6 per minute
        assertThat(refused.headers().map().keySet()).noneMatch(h -> h.toLowerCase().contains("ratelimit"));
    }

    @Test
    void theAdminQuotaTakesAndShowsTheAlgorithm() {
        assertThat(AdminQuota.parse("{\"capacity\": 60, \"period\": \"1m\", \"algorithm\": \"sliding-window\"}"
                .getBytes(StandardCharsets.UTF_8), "api"))
                .isEqualTo(io.quotagate.plans.Bandwidth.slidingWindow("api", 60, java.time.Duration.ofMinutes(1)));
        assertThat(AdminQuota.parse("{\"capacity\": 60, \"refill\": 6, \"period\": \"1m\", \"algorithm\": \"gcra\"}"
                .getBytes(StandardCharsets.UTF_8), "api").algorithm()).isEqualTo(io.quotagate.plans.Algorithm.GCRA);
    }
}

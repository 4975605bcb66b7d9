package io.quotagate.example;

import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.Http;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The example app's HTTP contract (docs/design.md §7), on its embedded default plans. */
class ExampleAppTest {
    private static ExampleApp.Running app;

    @BeforeAll
    static void start() throws Exception {
        app = ExampleApp.start("127.0.0.1", 0, PlansFile.load(ExampleApp.DEFAULT_PLANS));
    }

    @AfterAll
    static void stop() throws Exception {
        app.close();
    }

    private static URI uri(String path) {
        return URI.create(app.baseUri() + path);
    }

    @Test
    void itemsAndReportsAnswerForATenant() throws Exception {
        HttpResponse<String> item = Http.get(uri("/items/42"), "acme");
        assertThat(item.statusCode()).isEqualTo(200);
        assertThat(item.body()).contains("\"id\":\"42\"");
        HttpResponse<String> report = Http.get(uri("/reports/7?ms=5"), "acme");
        assertThat(report.statusCode()).isEqualTo(200);
        assertThat(report.body()).isEqualTo("{\"id\":\"7\",\"rows\":42,\"ms\":5}");
        assertThat(Http.get(uri("/items/"), "acme").statusCode()).isEqualTo(404);
    }

    @Test
    void aTeamUserTakesAtMostASeatOfTheTeamsBucketAndAColleagueStillGetsIn() throws Exception {
        // team: burst 100; per-user seat: 25. Real time: the seat refills 1.2 units a second at most
        int admitted = 0;
        HttpResponse<String> last = null;
        for (int i = 0; i < 40; i++) {
            last = get("/items/1", "hooli", "ann");
            if (last.statusCode() == 200) admitted++;
        }
        assertThat(admitted).isBetween(25, 30);
        assertThat(last.statusCode()).isEqualTo(429);
        assertThat(last.body()).contains("\"reason\":\"user_rate\"");
        assertThat(get("/items/1", "hooli", "bob").statusCode()).as("a colleague").isEqualTo(200);
    }

    private static HttpResponse<String> get(String path, String tenant, String user) throws Exception {
        java.net.http.HttpRequest r = java.net.http.HttpRequest.newBuilder(uri(path)).header("X-Tenant-Id", tenant)
                .header("X-User-Id", user).build();
        return java.net.http.HttpClient.newHttpClient().send(r, HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void healthNeedsNoTenantAndIsNeverLimited() throws Exception {
        for (int i = 0; i < 50; i++) assertThat(Http.get(uri("/health"), null).statusCode()).isEqualTo(200);
    }

    @Test
    void aFreeTenantIsRefusedAfterItsBurstAndAdmittedAgainAfterRetryAfter() throws Exception {
        // free: burst 20, refill 10 per 10 s; a report costs 5
        for (int i = 0; i < 4; i++) assertThat(Http.get(uri("/reports/1?ms=1"), "free-e2e").statusCode()).isEqualTo(200);
        HttpResponse<String> refused = Http.get(uri("/reports/1?ms=1"), "free-e2e");
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.body()).contains("\"reason\":\"tenant_rate\"");
        long retryAfter = Long.parseLong(refused.headers().firstValue("Retry-After").orElseThrow());
        assertThat(retryAfter).isBetween(1L, 5L);

        Thread.sleep(retryAfter * 1000); // the real clock this time: the contract end to end
        assertThat(Http.get(uri("/reports/1?ms=1"), "free-e2e").statusCode()).isEqualTo(200);
    }

    @Test
    void reportsRunAsynchronouslyOneAtATimePerFreeTenant() throws Exception {
        // free: one report in flight; the group queue lets a second wait up to 500 ms
        CompletableFuture<HttpResponse<String>> slow = CompletableFuture.supplyAsync(() -> get("/reports/1?ms=4000", "free-conc"));
        Await.until("free-conc's report running", () -> app.filter().control().concurrency().inflight("reports", "free-conc") == 1);

        HttpResponse<String> refused = Http.get(uri("/reports/2?ms=1"), "free-conc"); // waits 500 ms, then 429
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.body()).contains("\"reason\":\"concurrency\"");
        assertThat(refused.headers().firstValue("Retry-After")).isPresent();
        assertThat(Http.get(uri("/reports/3?ms=1"), "other-free").statusCode()).as("another tenant is not held up").isEqualTo(200);

        assertThat(slow.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        Await.until("every report slot released", () -> app.filter().control().concurrency().inflight("reports") == 0);
    }

    @ParameterizedTest
    @ValueSource(strings = {"-1", "abc", "30001", "99999999999", "1.5", ""})
    void aBadMsIsA400Problem(String ms) throws Exception {
        HttpResponse<String> r = Http.get(uri("/reports/1?ms=" + ms), "acme");
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(ct -> assertThat(ct).startsWith("application/problem+json"));
        assertThat(r.body()).contains("\"status\":400", "from 0 to 30000");
    }

    private static HttpResponse<String> get(String path, String tenant) {
        try {
            return Http.get(uri(path), tenant);
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"/metrics", "/dashboard", "/dashboard/", "/dashboard/data", "/dashboard/uplot.js", "/admin/quota"})
    void operationalEndpointsAreServedOnTheManagementPortOnlyAnd404OnTheApiPort(String path) throws Exception {
        HttpResponse<String> onApi = Http.get(uri(path), "acme");
        assertThat(onApi.statusCode()).isEqualTo(404);
        assertThat(onApi.body()).doesNotContain("quotagate_", "acme", "global");
        assertThat(Http.get(uri(path), null).statusCode()).as("without a tenant as well").isEqualTo(404);
        int expected = path.startsWith("/admin/") ? 404 : 200; // the admin endpoint is off without a token
        assertThat(Http.get(URI.create(app.managementUri() + path), null).statusCode()).isEqualTo(expected);
    }

    @Test
    void healthIsOnBothPortsAndTheApiOnlyOnItsOwn() throws Exception {
        assertThat(Http.get(URI.create(app.managementUri() + "/health"), null).statusCode()).isEqualTo(200);
        assertThat(Http.get(uri("/health"), null).statusCode()).isEqualTo(200);
        assertThat(Http.get(URI.create(app.managementUri() + "/items/1"), "acme").statusCode()).isEqualTo(404);
        assertThat(app.managementPort()).isNotEqualTo(app.port());
    }

    @Test
    void theManagementPortIs8081OnThisMachineOnlyByDefault() {
        ExampleApp options = new ExampleApp();
        new CommandLine(options).parseArgs();
        assertThat(options.managementPort).isEqualTo(ExampleApp.DEFAULT_MANAGEMENT_PORT).isEqualTo(8081);
        assertThat(options.managementHost).isEqualTo("127.0.0.1");
        assertThat(options.maxPlansBytes).isEqualTo(PlansFile.DEFAULT_MAX_BYTES);
        new CommandLine(options).parseArgs("--management-port", "0", "--management-host", "::1", "--max-plans-bytes", "4096");
        assertThat(options.managementPort).isZero();
        assertThat(options.managementHost).isEqualTo("::1");
        assertThat(options.maxPlansBytes).isEqualTo(4096);
    }

    @Test
    void theStartUpLinesNameBothUrls() {
        assertThat(ExampleApp.banner(app, ExampleApp.DEFAULT_PLANS, true, false)).isEqualTo(
                "example-webapp listening on " + app.baseUri() + " (API; plans: classpath:example-plans.yml, store: plans file)\n"
                        + "management on " + app.managementUri() + " (/metrics, /dashboard, /admin/quota on, /health)");
    }

    /** Runs the command line as {@code java -jar} would, up to the point it would start serving; stderr captured. */
    private static String[] run(String... args) {
        java.io.PrintStream old = System.err;
        java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
        System.setErr(new java.io.PrintStream(captured, true));
        int code;
        try {
            code = new CommandLine(new ExampleApp()).setErr(new PrintWriter(new StringWriter())).execute(args);
        } finally {
            System.setErr(old);
        }
        return new String[]{String.valueOf(code), captured.toString()};
    }

    @Test
    void aPlansFileOverMaxPlansBytesStopsTheAppNamingItsSizeAndTheLimit(@TempDir Path dir) throws Exception {
        Path plans = dir.resolve("plans.yml");
        Files.writeString(plans, "plans:\n  free:\n    limits: [ { capacity: 10, refill: 10, period: 10s } ]\n" + "#\n".repeat(100));
        long size = Files.size(plans);
        String[] result = run("--port", "0", "--management-port", "0", "--plans", plans.toString(), "--max-plans-bytes", "100");
        assertThat(result[0]).isEqualTo("2");
        assertThat(result[1]).contains("example-webapp: invalid plans: " + plans + ": the file is " + size
                + " bytes, over the limit of 100 bytes");
        assertThat(run("--port", "0", "--max-plans-bytes", "0")[1]).contains("example-webapp: --max-plans-bytes must be 1 to 2147483646, was 0");
        assertThat(run("--port", "8080", "--management-port", "8080")[1])
                .contains("example-webapp: --management-port must differ from --port (both 8080)");
    }

    @Test
    void badOrMissingTenantsAreClientErrors() throws Exception {
        assertThat(Http.get(uri("/items/1"), null).statusCode()).isEqualTo(401);
        assertThat(Http.get(uri("/items/1"), "no spaces").statusCode()).isEqualTo(400);
    }

    @Test
    void anInvalidPlansFileStopsTheAppWithFileLineAndField(@TempDir Path dir) throws Exception {
        Path bad = dir.resolve("plans.yml");
        Files.writeString(bad, "plans:\n  free:\n    limits: [ { capacity: 10, refill: 10, period: 10 } ]\n");
        StringWriter err = new StringWriter();
        CommandLine cli = new CommandLine(new ExampleApp());
        cli.setErr(new PrintWriter(err));
        java.io.PrintStream old = System.err;
        java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
        System.setErr(new java.io.PrintStream(captured, true));
        int code;
        try {
            code = cli.execute("--port", "0", "--plans", bad.toString());
        } finally {
            System.setErr(old);
        }
        assertThat(code).isEqualTo(2);
        assertThat(captured.toString()).contains(bad + ":3:", "plans.free.limits[0].period", "needs a unit");
    }

    @Test
    void aPeriodPastTenYearsStopsTheAppWithFileLineAndFieldNotAStackTrace(@TempDir Path dir) throws Exception {
        Path bad = dir.resolve("plans.yml");
        Files.writeString(bad, "plans:\n  free:\n    limits: [ { capacity: 10, refill: 10, period: 106752d } ]\n");
        String[] result = run("--port", "0", "--management-port", "0", "--plans", bad.toString());
        assertThat(result[0]).isEqualTo("2");
        assertThat(result[1]).isEqualTo("example-webapp: invalid plans: " + bad
                + ":3: plans.free.limits[0].period: must be at most 3650d (10 years), was '106752d'" + System.lineSeparator());
    }

    @Test
    void withRedisTheBucketsLiveInRedisUnderTheConfiguredPrefix() throws Exception {
        io.quotagate.filter.testing.RedisServer redis = io.quotagate.filter.testing.RedisServer.shared();
        String prefix = io.quotagate.filter.testing.RedisServer.randomPrefix();
        io.quotagate.plans.Plans plans = ExampleApp.withRedis(PlansFile.load(ExampleApp.DEFAULT_PLANS)
                .withStore(io.quotagate.plans.StoreSpec.of("redis", java.util.Map.of("uri", "redis://elsewhere:1",
                        "prefix", prefix,
                        // a loaded machine can take longer than the default 50 ms: that would fall back to local buckets
                        "timeout", java.time.Duration.ofSeconds(5)))), redis.uri());
        assertThat(io.quotagate.filter.redis.RedisSettings.of(plans.store()).prefix()).as("the file's prefix is kept")
                .isEqualTo(prefix);
        try (ExampleApp.Running redisApp = ExampleApp.start("127.0.0.1", 0, plans)) {
            assertThat(Http.get(URI.create(redisApp.baseUri() + "/items/1"), "acme").statusCode()).isEqualTo(200);
            assertThat(redis.integer("EXISTS", prefix + ":tenant:acme")).isOne();
            assertThat(redis.integer("EXISTS", prefix + ":global:global")).isOne();
        }
        assertThat(redis.integer("EXISTS", prefix + ":instances")).as("the filter closed its store on shutdown").isZero();
    }

    @Test
    void rejectsARedisOptionThatIsNotARedisUri() {
        StringWriter err = new StringWriter();
        java.io.PrintStream old = System.err;
        java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
        System.setErr(new java.io.PrintStream(captured, true));
        int code;
        try {
            code = new CommandLine(new ExampleApp()).setErr(new PrintWriter(err))
                    .execute("--port", "0", "--redis", "localhost:6379");
        } finally {
            System.setErr(old);
        }
        assertThat(code).isEqualTo(2);
        assertThat(captured.toString())
                .as("the app's own --redis message, not a picocli usage error")
                .contains("example-webapp: --redis: expected redis://host:port, was 'localhost:6379'");
        assertThat(captured + err.toString()).doesNotContain("Unknown option");
    }
}

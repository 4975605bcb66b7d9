package io.quotagate.example;

import io.quotagate.filter.testing.Http;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** The example app's HTTP contract (DESIGN.md §7), on its embedded default plans. */
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
        assertThat(Http.get(uri("/reports/7"), "acme").statusCode()).isEqualTo(200);
        assertThat(Http.get(uri("/items/"), "acme").statusCode()).isEqualTo(404);
    }

    @Test
    void healthNeedsNoTenantAndIsNeverLimited() throws Exception {
        for (int i = 0; i < 50; i++) assertThat(Http.get(uri("/health"), null).statusCode()).isEqualTo(200);
    }

    @Test
    void aFreeTenantIsRefusedAfterItsBurstAndAdmittedAgainAfterRetryAfter() throws Exception {
        // free: burst 20, refill 10 per 10 s; a report costs 5
        for (int i = 0; i < 4; i++) assertThat(Http.get(uri("/reports/1"), "free-e2e").statusCode()).isEqualTo(200);
        HttpResponse<String> refused = Http.get(uri("/reports/1"), "free-e2e");
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.body()).contains("\"reason\":\"tenant_rate\"");
        long retryAfter = Long.parseLong(refused.headers().firstValue("Retry-After").orElseThrow());
        assertThat(retryAfter).isBetween(1L, 5L);

        Thread.sleep(retryAfter * 1000); // the real clock this time: the contract end to end
        assertThat(Http.get(uri("/reports/1"), "free-e2e").statusCode()).isEqualTo(200);
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
    void withRedisTheBucketsLiveInRedisUnderTheConfiguredPrefix() throws Exception {
        io.quotagate.filter.testing.RedisServer redis = io.quotagate.filter.testing.RedisServer.shared();
        String prefix = io.quotagate.filter.testing.RedisServer.randomPrefix();
        io.quotagate.plans.Plans plans = ExampleApp.withRedis(PlansFile.load(ExampleApp.DEFAULT_PLANS)
                .withStore(io.quotagate.plans.StoreSettings.redis("redis://elsewhere:1").withPrefix(prefix)), redis.uri());
        assertThat(plans.store().prefix()).as("the file's prefix is kept").isEqualTo(prefix);
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
        int code = new CommandLine(new ExampleApp()).setErr(new PrintWriter(err))
                .execute("--port", "0", "--redis", "localhost:6379");
        assertThat(code).isEqualTo(2);
    }
}

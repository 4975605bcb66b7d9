package io.quotagate.filter;

import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.http.HttpResponse;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The filter installed with the builder, on real Jetty, with a manual clock. */
class QuotaFilterTest {
    static final String PLANS = """
            global:
              limits: [ { capacity: 100, refill: 100, period: 1m } ]
            plans:
              free:
                limits: [ { capacity: 2, refill: 1, period: 3s } ]
              pro:
                limits: [ { capacity: 50, refill: 50, period: 1s } ]
            routes:
              - { name: ops, paths: ["/health"], limited: false }
              - { name: reports, methods: [GET], paths: ["/reports/*"], cost: 2 }
            tenants:
              default-plan: free
              assignments: { acme: pro }
            """;

    private final ManualClock clock = new ManualClock();
    private JettyServer server;

    private JettyServer start(String yaml) throws Exception {
        Plans plans = PlansFile.parse("test.yml", yaml);
        server = JettyServer.start(QuotaFilter.builder().plans(plans).clock(clock).build());
        return server;
    }

    @AfterEach
    void stop() throws Exception {
        if (server != null) server.close();
    }

    @Test
    void rejectsWith429RetryAfterAndAProblemBody() throws Exception {
        start(PLANS);
        assertThat(Http.get(server.uri("/items/1"), "globex").statusCode()).isEqualTo(200);
        assertThat(Http.get(server.uri("/items/1"), "globex").statusCode()).isEqualTo(200);

        HttpResponse<String> r = Http.get(server.uri("/items/1"), "globex");
        assertThat(r.statusCode()).isEqualTo(429);
        assertThat(r.headers().firstValue("Retry-After")).contains("3");
        assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(ct -> assertThat(ct).startsWith("application/problem+json"));
        assertThat(r.body())
                .contains("\"type\":\"about:blank\"", "\"title\":\"Too Many Requests\"", "\"status\":429",
                        "\"tenant\":\"globex\"", "\"reason\":\"tenant_rate\"", "\"retryAfterSeconds\":3");
    }

    @Test
    void aClientThatWaitsRetryAfterIsAdmitted() throws Exception {
        start(PLANS);
        Http.get(server.uri("/x"), "globex");
        Http.get(server.uri("/x"), "globex");
        HttpResponse<String> r = Http.get(server.uri("/x"), "globex");
        long retryAfter = Long.parseLong(r.headers().firstValue("Retry-After").orElseThrow());
        clock.advance(Duration.ofSeconds(retryAfter).minusMillis(1));
        assertThat(Http.get(server.uri("/x"), "globex").statusCode()).isEqualTo(429);
        clock.advance(Duration.ofMillis(1));
        assertThat(Http.get(server.uri("/x"), "globex").statusCode()).isEqualTo(200);
    }

    @Test
    void routeCostIsTakenInUnitsAndUnlimitedRoutesAreNeverRefused() throws Exception {
        start(PLANS);
        assertThat(Http.get(server.uri("/reports/9"), "globex").statusCode()).isEqualTo(200);
        assertThat(Http.get(server.uri("/items/1"), "globex").statusCode()).as("the report took both units").isEqualTo(429);
        for (int i = 0; i < 20; i++) {
            assertThat(Http.get(server.uri("/health"), "globex").statusCode()).isEqualTo(200);
            assertThat(Http.get(server.uri("/health"), null).statusCode()).isEqualTo(200);
        }
    }

    @Test
    void assignedTenantsGetTheirPlan() throws Exception {
        start(PLANS);
        for (int i = 0; i < 50; i++) assertThat(Http.get(server.uri("/items/1"), "acme").statusCode()).isEqualTo(200);
        assertThat(Http.get(server.uri("/items/1"), "acme").statusCode()).isEqualTo(429);
    }

    @Test
    void theGlobalQuotaIsSharedAndNamedInTheBody() throws Exception {
        start(PLANS);
        int admitted = 0;
        for (int t = 0; t < 60; t++) {
            for (int i = 0; i < 2; i++) {
                if (Http.get(server.uri("/items/1"), "tenant-" + t).statusCode() == 200) admitted++;
            }
        }
        assertThat(admitted).isEqualTo(100);
        HttpResponse<String> r = Http.get(server.uri("/items/1"), "fresh");
        assertThat(r.statusCode()).isEqualTo(429);
        assertThat(r.body()).contains("\"reason\":\"global_rate\"");
        assertThat(r.headers().firstValue("Retry-After")).contains("1"); // 100/min: one unit per 0.6 s
    }

    @Test
    void noTenantGets401() throws Exception {
        start(PLANS);
        HttpResponse<String> r = Http.get(server.uri("/items/1"), null);
        assertThat(r.statusCode()).isEqualTo(401);
        assertThat(r.body()).contains("\"status\":401", "\"reason\":\"missing_tenant\"").doesNotContain("tenant\":");
    }

    @Test
    void the401SaysHowToSendATenantAndHowToNeedNone() throws Exception {
        start(PLANS);
        assertThat(Http.get(server.uri("/items/1"), null).body())
                .contains("send the header X-Tenant-Id", "limited: false");
        server.close();
        start(PLANS.replace("default-plan: free", """
                default-plan: free
                  resolvers:
                    - { type: api-key, header: X-Key }
                    - { type: header, name: X-Org }
                  api-keys: { "%s": acme }""".formatted("a".repeat(64))));
        assertThat(Http.get(server.uri("/items/1"), null).body())
                .contains("send an API key in the header X-Key, or the header X-Org", "limited: false");
    }

    @Test
    void unlimitedPathsPassWithoutATenantAfterAReloadToo() throws Exception {
        Plans plans = PlansFile.parse("test.yml", PLANS);
        QuotaFilter filter = QuotaFilter.builder().plans(plans).clock(clock).unlimitedPaths("/actuator/**").build();
        server = JettyServer.start(filter);
        for (int i = 0; i < 5; i++) {
            assertThat(Http.get(server.uri("/actuator/health"), null).statusCode()).isEqualTo(200);
            assertThat(Http.get(server.uri("/actuator"), "globex").statusCode()).isEqualTo(200);
        }
        filter.control().apply(plans);
        assertThat(Http.get(server.uri("/actuator/prometheus"), null).statusCode()).isEqualTo(200);
        assertThat(Http.get(server.uri("/actuators"), null).statusCode()).as("a prefix of a segment is not the path")
                .isEqualTo(401);
        assertThatThrownBy(() -> QuotaFilter.builder().unlimitedPaths("actuator/**"))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void unknownTenantsGet403WhenThePlansSaySo() throws Exception {
        start(PLANS.replace("default-plan: free", "default-plan: free\n  unknown: reject"));
        assertThat(Http.get(server.uri("/items/1"), "acme").statusCode()).isEqualTo(200);
        HttpResponse<String> r = Http.get(server.uri("/items/1"), "stranger");
        assertThat(r.statusCode()).isEqualTo(403);
        assertThat(r.body()).contains("\"reason\":\"unknown_tenant\"");
    }

    @Test
    void anonymousClientsAreKeyedByAddressUnderTheDefaultPlan() throws Exception {
        start(PLANS.replace("default-plan: free", "default-plan: free\n  unresolved: anonymous"));
        assertThat(Http.get(server.uri("/items/1"), null).statusCode()).isEqualTo(200);
        assertThat(Http.get(server.uri("/items/1"), null).statusCode()).isEqualTo(200);
        assertThat(Http.get(server.uri("/items/1"), null).statusCode()).isEqualTo(429);
        assertThat(Http.get(server.uri("/items/1"), "globex").statusCode()).as("a named tenant is separate").isEqualTo(200);
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "X-Tenant-Id: \r\n",                                  // empty
            "X-Tenant-Id: a b\r\n",                               // space
            "X-Tenant-Id: caf\u00e9\r\n",                         // non-ASCII (UTF-8 bytes)
            "X-Tenant-Id: a/b\r\n",
            "X-Tenant-Id: ../etc\r\n",
            "X-Tenant-Id: {{65x}}\r\n",                           // 65 characters
    })
    void invalidTenantIdsGet400AndNeverBecomeKeys(String header) throws Exception {
        start(PLANS);
        String raw = Http.raw(server.port(), "GET", "/items/1", header.replace("{{65x}}", "x".repeat(65)));
        assertThat(Http.status(raw)).as(raw).isEqualTo(400);
        assertThat(raw).contains("application/problem+json", "\"reason\":\"invalid_tenant\"");
    }

    @Test
    void headersWithLineBreaksOrControlCharactersAreRefusedByJettyWith400() throws Exception {
        start(PLANS);
        // a bare CR inside a header value is refused by Jetty's parser itself; a CRLF ends the header
        String raw = Http.raw(server.port(), "GET", "/items/1", "X-Tenant-Id: ac\rme\r\n");
        assertThat(Http.status(raw)).isEqualTo(400);
        String split = Http.raw(server.port(), "GET", "/items/1", "X-Tenant-Id: ac\r\nme\r\n");
        assertThat(Http.status(split)).isEqualTo(400);
        String control = Http.raw(server.port(), "GET", "/items/1", "X-Tenant-Id: a\u0001b\r\n");
        assertThat(Http.status(control)).isEqualTo(400);
        assertThat(control).doesNotContain("Exception", "\tat ");
    }

    @Test
    void theBuilderRefusesSettingsThatContradictEachOtherNamingBoth(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        String yaml = "plans: { free: { limits: [ { capacity: 5, refill: 5, period: 1m } ] } }";
        Plans plans = PlansFile.parse("p.yml", yaml);
        java.nio.file.Path file = java.nio.file.Files.writeString(dir.resolve("plans.yml"), yaml);
        // either order: a later reload() would otherwise replace the given plans with the file's
        assertThatThrownBy(() -> QuotaFilter.builder().plansFile(file).plans(plans).build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("plans(...) and plansFile(...)");
        assertThatThrownBy(() -> QuotaFilter.builder().plans(plans).plansFile(file).build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("plans(...) and plansFile(...)");
        assertThatThrownBy(() -> QuotaFilter.builder().plans(plans)
                .store(io.quotagate.filter.store.BucketStore.local(10, new ManualClock()))
                .storeSettings(io.quotagate.plans.StoreSpec.local()).build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("store(...) and storeSettings(...)");
        assertThatThrownBy(() -> QuotaFilter.builder().plans(plans).watchPlansFile(Duration.ofSeconds(1)).build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("watchPlansFile(...) needs plansFile(...)");
        assertThat(QuotaFilter.builder().plansFile(file).build().control().plans().plan("free")).isPresent();
    }
}

package io.quotagate.filter.servlet;

import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.PlansFile;
import io.quotagate.tenant.TenantDirectory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** Anonymous clients behind proxies, per-tenant overrides and a user directory, over real Jetty. */
class TenantAssignmentFilterTest {
    private static final HttpClient CLIENT = HttpClient.newHttpClient();
    private final ManualClock clock = new ManualClock();
    private JettyServer server;

    private static final String PLANS = """
            plans:
              free: { limits: [ { capacity: 2, refill: 2, period: 1h } ] }
              pro:  { limits: [ { capacity: 3, refill: 3, period: 1h } ] }
            tenants:
              default-plan: free
            """;

    @AfterEach
    void stop() throws Exception {
        if (server != null) server.close();
    }

    private int status(String path, Map<String, String> headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(server.uri(path)).timeout(Duration.ofSeconds(10));
        headers.forEach(b::header);
        return CLIENT.send(b.build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    @Test
    void anonymousClientsBehindATrustedProxyAreKeyedByTheirForwardedAddress() throws Exception {
        server = JettyServer.start(QuotaFilter.builder().clock(clock).plans(PlansFile.parse("p.yml", PLANS + """
                  unresolved: anonymous
                  trusted-proxies: [ 127.0.0.1, "::1" ]
                """)).build());
        Map<String, String> one = Map.of("X-Forwarded-For", "198.51.100.1");
        assertThat(status("/x", one)).isEqualTo(200);
        assertThat(status("/x", one)).isEqualTo(200);
        assertThat(status("/x", one)).isEqualTo(429);
        assertThat(status("/x", Map.of("X-Forwarded-For", "198.51.100.2"))).as("another client").isEqualTo(200);
        assertThat(status("/x", Map.of("X-Forwarded-For", "6.6.6.6, 198.51.100.1"))).as("a forged left part is ignored").isEqualTo(429);
    }

    @Test
    void forwardedForFromAnUntrustedPeerIsIgnored() throws Exception {
        server = JettyServer.start(QuotaFilter.builder().clock(clock).plans(PlansFile.parse("p.yml", PLANS + """
                  unresolved: anonymous
                  trusted-proxies: [ 10.0.0.0/8 ]
                """)).build());
        assertThat(status("/x", Map.of("X-Forwarded-For", "198.51.100.1"))).isEqualTo(200);
        assertThat(status("/x", Map.of("X-Forwarded-For", "198.51.100.2"))).isEqualTo(200);
        assertThat(status("/x", Map.of("X-Forwarded-For", "198.51.100.3"))).as("all are 127.0.0.1").isEqualTo(429);
    }

    @Test
    void anOverrideGivesOneTenantItsOwnNumbers() throws Exception {
        server = JettyServer.start(QuotaFilter.builder().clock(clock).plans(PlansFile.parse("p.yml", PLANS + """
                  assignments: { acme: pro }
                  overrides:
                    bigcorp: { plan: pro, limits: [ { capacity: 5, refill: 5, period: 1h } ] }
                """)).build());
        assertThat(admitted("bigcorp")).isEqualTo(5);
        assertThat(admitted("acme")).isEqualTo(3);
        assertThat(admitted("other")).isEqualTo(2);
    }

    private int admitted(String tenant) throws Exception {
        int n = 0;
        while (n < 20 && Http.get(server.uri("/x"), tenant).statusCode() == 200) n++;
        return n;
    }

    @Test
    void aUserDirectoryIsAskedAfterTheFileAndCached() throws Exception {
        AtomicInteger asked = new AtomicInteger();
        Map<String, String> db = new ConcurrentHashMap<>(Map.of("dbcorp", "pro"));
        TenantDirectory directory = t -> {
            asked.incrementAndGet();
            return Optional.ofNullable(db.get(t));
        };
        server = JettyServer.start(QuotaFilter.builder().clock(clock).tenantDirectory(directory)
                .plans(PlansFile.parse("p.yml", PLANS + """
                          unknown: reject
                          assignments: { acme: free }
                        """)).build());
        assertThat(admitted("dbcorp")).as("the directory's plan").isEqualTo(3);
        assertThat(admitted("acme")).as("the file's assignment").isEqualTo(2);
        assertThat(Http.get(server.uri("/x"), "newco").statusCode()).isEqualTo(403);
        assertThat(Http.get(server.uri("/x"), "newco").statusCode()).isEqualTo(403);
        assertThat(asked).as("dbcorp once, newco once; acme never").hasValue(2);

        db.put("newco", "pro");
        clock.advance(Duration.ofSeconds(QuotaFilter.Builder.DIRECTORY_NEGATIVE_TTL_SECONDS + 1));
        assertThat(Http.get(server.uri("/x"), "newco").statusCode()).as("unknown is cached only briefly").isEqualTo(200);
    }

    @Test
    void aDirectoryNamingAnUndefinedPlanNeverCausesA500() throws Exception {
        server = JettyServer.start(QuotaFilter.builder().clock(clock).tenantDirectory(t -> Optional.of("platinum"))
                .plans(PlansFile.parse("p.yml", PLANS + "  unknown: reject\n")).build());
        HttpResponse<String> r = Http.get(server.uri("/x"), "acme");
        assertThat(r.statusCode()).isEqualTo(403);
        assertThat(r.body()).contains("\"reason\":\"unknown_tenant\"");
    }

}

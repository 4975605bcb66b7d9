package io.quotagate.filter;

import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.PlansFile;
import io.quotagate.tenant.TenantDirectory;
import jakarta.servlet.DispatcherType;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.EnumSet;
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

    /** {@code n} comma-separated addresses ending in {@code last}, the others 10.200.x.y. */
    private static String forwarded(int n, String last) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < n - 1; i++) b.append("10.200.").append(i / 250).append('.').append(i % 250 + 1).append(", ");
        return b.append(last).toString();
    }

    /** Sends the X-Forwarded-For lines byte for byte (the JDK client may fold them). */
    private int rawStatus(String... forwardedLines) throws Exception {
        StringBuilder head = new StringBuilder("GET /x HTTP/1.1\r\nHost: localhost\r\n");
        for (String line : forwardedLines) head.append("X-Forwarded-For: ").append(line).append("\r\n");
        return Http.status(Http.rawHead(server.port(), head.toString()));
    }

    @Test
    void longForwardedForListsAreKeyedByTheirRightmostUntrustedAddress() throws Exception {
        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        context.addFilter(new FilterHolder(QuotaFilter.builder().clock(clock).plans(PlansFile.parse("p.yml", PLANS + """
                  unresolved: anonymous
                  trusted-proxies: [ 127.0.0.1 ]
                """)).build()), "/*", EnumSet.of(DispatcherType.REQUEST));
        context.addServlet(new ServletHolder(new JettyServer.OkServlet()), "/");
        server = JettyServer.start(context, 32 * 1024); // 1,000 entries are about 14 KB

        String of34 = forwarded(34, "10.250.34.1");
        assertThat(rawStatus(of34)).isEqualTo(200);
        assertThat(rawStatus(of34)).isEqualTo(200);
        assertThat(rawStatus(of34)).as("34 entries: one client, its own bucket").isEqualTo(429);
        assertThat(rawStatus(forwarded(41, "10.250.41.1"))).as("41 entries: another client").isEqualTo(200);
        assertThat(rawStatus(forwarded(41, "10.250.41.2"))).as("41 entries: a third client, not the second's bucket").isEqualTo(200);
        assertThat(rawStatus(forwarded(41, "10.250.41.2"))).isEqualTo(200);
        assertThat(rawStatus(forwarded(41, "10.250.41.2"))).isEqualTo(429);
        assertThat(rawStatus(forwarded(1_000, "10.250.100.1"))).as("1,000 entries").isEqualTo(200);
        assertThat(rawStatus(forwarded(1_000, "10.250.100.1"))).isEqualTo(200);
        assertThat(rawStatus(forwarded(1_000, "10.250.100.1"))).isEqualTo(429);
        assertThat(rawStatus(forwarded(500, "10.250.200.1"), forwarded(500, "10.250.34.1")))
                .as("two lines: the last line's rightmost entry, the 34-entry client").isEqualTo(429);
        assertThat(rawStatus(forwarded(20, "10.250.34.1"), forwarded(20, "10.250.200.2"), "127.0.0.1"))
                .as("three lines, the last a trusted hop").isEqualTo(200);
        assertThat(rawStatus()).as("the proxy's own bucket was never charged").isEqualTo(200);
        assertThat(rawStatus()).isEqualTo(200);
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

package io.quotagate.filter;

import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code host} resolver finds one tenant in every spelling of its host name that reaches the
 * application: a client that writes the absolute form ({@code acme.api.example.com.}, a valid name
 * for the same host) or adds a port spends the same bucket, not a fresh anonymous one.
 */
class HostTenantSpellingTest {
    private static final String PLANS = """
            plans:
              one: { limits: [ { capacity: 1, refill: 1, period: 1h } ] }
            tenants:
              resolvers: [ { type: host, suffix: .api.example.com } ]
              default-plan: one
              unresolved: anonymous
            """;

    private final ManualClock clock = new ManualClock(); // never advanced: a unit spent stays spent
    private JettyServer server;

    @AfterEach
    void stop() throws Exception {
        if (server != null) server.close();
    }

    private int status(String host) throws IOException {
        return Http.status(Http.rawHead(server.port(), "GET /items/1 HTTP/1.1\r\nHost: " + host + "\r\n"));
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"acme.api.example.com.", "acme.api.example.com.:8080", "ACME.api.example.com.",
            "acme.api.example.com:8080"})
    void anotherSpellingOfTheHostIsTheSameTenant(String spelling) throws Exception {
        server = JettyServer.start(QuotaFilter.builder().plans(PlansFile.parse("host.yml", PLANS)).clock(clock).build());
        assertThat(status("acme.api.example.com")).isEqualTo(200);
        assertThat(status(spelling)).as("acme's one unit is spent").isEqualTo(429);
        assertThat(status("globex.api.example.com.")).as("another tenant").isEqualTo(200);
        assertThat(status("globex.api.example.com")).isEqualTo(429);
    }
}

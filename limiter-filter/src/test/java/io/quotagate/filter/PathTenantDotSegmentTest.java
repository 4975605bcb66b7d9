package io.quotagate.filter;

import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.PlansFile;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.util.EnumSet;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/**
 * The {@code path} resolver charges the tenant whose URL the application serves, whatever dot
 * segments the raw request line holds: it reads the path the container dispatches (the one the
 * filter's route matching sees), not the raw URI. Each request line is sent byte for byte (a JDK
 * client would remove the dot segments first), as {@code curl --path-as-is} does.
 */
class PathTenantDotSegmentTest {
    private static final String PLANS = """
            plans:
              one: { limits: [ { capacity: 1, refill: 1, period: 1h } ] }
            routes:
              - { name: tenant-items, paths: ["/t/*/items/*"], cost: 1 }
            tenants:
              resolvers: [ { type: path, prefix: /t/ } ]
              default-plan: one
              unresolved: reject
            """;

    private final ManualClock clock = new ManualClock(); // never advanced: a unit spent stays spent
    private JettyServer server;

    @AfterEach
    void stop() throws Exception {
        if (server != null) server.close();
    }

    /** Answers 200 with the path it was dispatched, so a test sees which URL the application served. */
    static final class ServedPathServlet extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            resp.setContentType("text/plain");
            resp.getWriter().write("served " + req.getServletPath() + (req.getPathInfo() == null ? "" : req.getPathInfo()));
        }
    }

    private JettyServer start() throws Exception {
        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        context.addFilter(new FilterHolder(QuotaFilter.builder().plans(PlansFile.parse("dots.yml", PLANS)).clock(clock)
                .build()), "/*", EnumSet.of(DispatcherType.REQUEST));
        context.addServlet(new ServletHolder(new ServedPathServlet()), "/");
        server = JettyServer.start(context);
        return server;
    }

    private String send(String target) throws IOException {
        return Http.rawHead(server.port(), "GET " + target + " HTTP/1.1\r\nHost: localhost\r\n");
    }

    /** True if the tenant's one unit is spent: its next plain request is refused. */
    private boolean charged(String tenant) throws IOException {
        int status = Http.status(send("/t/" + tenant + "/items/1"));
        assertThat(status).as("probe of " + tenant).isIn(200, 429);
        return status == 429;
    }

    static Stream<Arguments> dotSegmentRequests() {
        return Stream.of(
                // request target as sent, status, what the application served (null: nothing), tenant charged (null: none)
                arguments("/t/acme/../../items/7", 401, null, null),
                arguments("/t/acme/../globex/items/1", 200, "/t/globex/items/1", "globex"),
                arguments("/./t/acme/items/1", 200, "/t/acme/items/1", "acme"),
                arguments("/x/../t/acme/items/1", 200, "/t/acme/items/1", "acme"),
                arguments("/t/./acme/items/1", 200, "/t/acme/items/1", "acme"),
                arguments("/t/acme/./items/1", 200, "/t/acme/items/1", "acme"),
                arguments("/t/globex/../acme/items/1", 200, "/t/acme/items/1", "acme"),
                arguments("/t/acme/..;/globex/items/1", 400, null, null),
                arguments("/t/acme/%2e%2e/globex/items/1", 400, null, null),
                arguments("/t/acme/%2E%2E/%2E%2E/items/7", 400, null, null),
                arguments("/%2e/t/acme/items/1", 400, null, null),
                arguments("/t/%2e/acme/items/1", 400, null, null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("dotSegmentRequests")
    void theTenantChargedIsTheTenantOfThePathServed(String target, int status, String served, String tenant)
            throws Exception {
        start();
        String raw = send(target);
        assertThat(Http.status(raw)).as(raw).isEqualTo(status);
        String body = raw.substring(raw.indexOf("\r\n\r\n") + 4);
        if (served != null) assertThat(body).isEqualTo("served " + served);
        else assertThat(body).doesNotContain("served");
        assertThat(raw).doesNotContain("Exception", "\tat ");
        assertThat(charged("acme")).as("acme charged").isEqualTo("acme".equals(tenant));
        assertThat(charged("globex")).as("globex charged").isEqualTo("globex".equals(tenant));
    }
}

package io.quotagate.filter;

import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.plans.PlansFile;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.util.EnumSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * No method or path variant served by the same servlet leaves its route's cost or concurrency group,
 * on real Jetty. Jetty normalises paths before a filter sees them, so the variants that Undertow 2.3
 * hands over as written ({@code /reports//1}, {@code /reports/./1}...) are reproduced by a wrapper in
 * front of the filter that reports the raw path as the servlet path, as such a container does.
 */
class RequestShapeTest {
    static final String PLANS = """
            plans:
              free:
                limits: [ { capacity: 100, refill: 1, period: 1s } ]
                concurrency: { reports: 1 }
            routes:
              - { name: reports, methods: [GET], paths: ["/reports/*"], cost: 5, group: reports }
            """;
    /** The path a container that does not normalise would report; test only. */
    static final String RAW_PATH = "X-Test-Raw-Path";

    private final CountDownLatch release = new CountDownLatch(1);
    private final CountDownLatch running = new CountDownLatch(1);
    private QuotaFilter filter;
    private JettyServer server;

    /** Holds every report until the test releases it, so it keeps its concurrency slot. */
    final class HeldReport extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            running.countDown();
            try {
                release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            resp.getWriter().write("report");
        }
    }

    /** Reports the raw path as an un-normalising container would: servlet path "", path info as sent. */
    static final Filter RAW_CONTAINER = (req, res, chain) -> {
        HttpServletRequest http = (HttpServletRequest) req;
        String raw = http.getHeader(RAW_PATH);
        chain.doFilter(raw == null ? req : new HttpServletRequestWrapper(http) {
            @Override
            public String getServletPath() {
                return "";
            }

            @Override
            public String getPathInfo() {
                return raw;
            }
        }, res);
    };

    @BeforeEach
    void start() throws Exception {
        filter = QuotaFilter.builder().plans(PlansFile.parse("shape.yml", PLANS)).build();
        ServletContextHandler context = new ServletContextHandler();
        context.addFilter(new FilterHolder(RAW_CONTAINER), "/*", EnumSet.of(DispatcherType.REQUEST));
        FilterHolder quota = new FilterHolder(filter);
        quota.setAsyncSupported(true);
        context.addFilter(quota, "/*", EnumSet.of(DispatcherType.REQUEST));
        context.addServlet(new ServletHolder(new HeldReport()), "/reports/*");
        server = JettyServer.start(context);
    }

    @AfterEach
    void stop() throws Exception {
        release.countDown();
        server.close();
    }

    /** Starts a GET report for tenant t1 that holds t1's one reports slot until the test ends. */
    private Thread holdTheSlot() throws InterruptedException {
        Thread t = new Thread(() -> {
            try {
                Http.raw(server.port(), "GET", "/reports/1", "X-Tenant-Id: t1\r\n");
            } catch (IOException ignored) {
                // the server stops at the end of the test
            }
        });
        t.start();
        assertThat(running.await(5, TimeUnit.SECONDS)).isTrue();
        return t;
    }

    @Test
    void headOnAGetRouteTakesTheGetsSlotAndCost() throws Exception {
        holdTheSlot();
        String head = Http.raw(server.port(), "HEAD", "/reports/1", "X-Tenant-Id: t1\r\n");
        assertThat(Http.status(head)).isEqualTo(429);
        assertThat(head).contains("Retry-After");
        assertThat(filter.control().statistics().cells()).anySatisfy(c -> {
            assertThat(c.route()).isEqualTo("reports");
            assertThat(c.reason()).isEqualTo("concurrency");
        });
    }

    @Test
    void headIsChargedTheGetsCost() throws Exception {
        release.countDown(); // reports answer at once
        assertThat(Http.status(Http.raw(server.port(), "HEAD", "/reports/1", "X-Tenant-Id: t3\r\n"))).isEqualTo(200);
        assertThat(filter.control().tenantLimits("t3").get(0).remaining()).isEqualTo(95);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"/reports//1", "/reports/./1", "/reports/1/./", "/reports/%2e/1", "/reports/%2E/1",
            "/reports;jsessionid=1/1", "//reports/1"})
    void aPathVariantTakesTheRoutesSlot(String variant) throws Exception {
        holdTheSlot();
        String response = Http.raw(server.port(), "GET", "/reports/2", "X-Tenant-Id: t1\r\n" + RAW_PATH + ": " + variant + "\r\n");
        assertThat(Http.status(response)).isEqualTo(429);
        assertThat(response).contains("\"reason\":\"concurrency\"");
    }

    @Test
    void lowerCaseMethodsAreMatchedAsTheirUpperCase() throws Exception {
        holdTheSlot();
        // Jetty refuses an unknown method itself only after the filter ran, so the filter sees "get"
        String response = Http.raw(server.port(), "get", "/reports/2", "X-Tenant-Id: t1\r\n");
        assertThat(Http.status(response)).isEqualTo(429);
    }

    /**
     * The security model (docs/security.md): a method no rule lists needs a tenant, is charged by the default
     * route (1 unit, no group) and then reaches the application, which answers it (here HttpServlet:
     * TRACE echoes, OPTIONS lists Allow, an unknown method is 501).
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"TRACE", "OPTIONS", "PROPFIND", "FOO"})
    void aMethodNoRuleListsIsLimitedByTheDefaultRoute(String method) throws Exception {
        holdTheSlot(); // t1: 5 units and its one reports slot
        // the filter's own refusal echoes nothing of the request (its detail names the header to send)
        String anonymous = Http.raw(server.port(), method, "/reports/2",
                "Authorization: Bearer s3cret-token\r\nCookie: sid=s3cret-cookie\r\n");
        assertThat(Http.status(anonymous)).isEqualTo(401);
        assertThat(anonymous).contains("\"reason\":\"missing_tenant\"").doesNotContain("s3cret");
        String response = Http.raw(server.port(), method, "/reports/2", "X-Tenant-Id: t1\r\n");
        assertThat(Http.status(response)).as("outside the reports group: no 429").isIn(200, 501);
        assertThat(filter.control().tenantLimits("t1").get(0).remaining()).as("charged 1, the default route").isEqualTo(94);
    }

    /** Containers disagree on these, so none may decide the route: {@code /reports/..;/x} is a report on some. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"/reports/../../etc", "/x/../reports/1", "/reports/..;/health", "/reports/%2e%2e/health",
            "/reports/.%2E/health"})
    void aPathWithADotDotSegmentIsRefusedWith400(String variant) throws Exception {
        String response = Http.raw(server.port(), "GET", "/reports/2",
                "X-Tenant-Id: t1\r\n" + RAW_PATH + ": " + variant + "\r\n");
        assertThat(Http.status(response)).isEqualTo(400);
        assertThat(response).contains("\"reason\":\"invalid_path\"");
    }
}

package io.quotagate.filter;

import io.quotagate.filter.testing.Await;
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
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code Retry-After} is a promise (docs/design.md §4): a client that waits exactly that long and sends the
 * same request again is admitted, on an estimated route and after a concurrency refusal too. Real
 * Jetty; the quota clock is a manual one, and the application's "work" ends when that clock says so.
 */
class RetryAfterPromiseTest {
    static final String PLANS = """
            plans:
              free:
                limits: [ { capacity: 20, refill: 10, period: 10s } ]
                concurrency: { completions: 2, reports: 3 }
            routes:
              - { name: completions, methods: [POST], paths: ["/v1/completions"], group: completions }
              - { name: sketch, methods: [POST], paths: ["/sketch"] }
              - { name: reports, methods: [GET], paths: ["/reports/*"], cost: 1, group: reports }
            tenants: { default-plan: free }
            """;
    private static final HttpClient CLIENT = HttpClient.newHttpClient();

    private final ManualClock clock = new ManualClock();
    private QuotaFilter filter;
    private JettyServer server;

    /** Timed requests whose servlet has read its start time (the filter counts one in flight before that). */
    private final java.util.concurrent.atomic.AtomicInteger started = new java.util.concurrent.atomic.AtomicInteger();

    /** {@code /reports/x?s=N} works until the quota clock has moved N seconds; the rest answer ok. */
    final class Work extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            req.getInputStream().readAllBytes();
            String s = req.getParameter("s");
            if (s != null) {
                long end = clock.nanoTime() + TimeUnit.SECONDS.toNanos(Long.parseLong(s));
                started.incrementAndGet();
                try {
                    Await.until("the test moves the quota clock " + s + " s on", () -> clock.nanoTime() >= end);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
            resp.getWriter().write("ok");
        }
    }

    @BeforeEach
    void start() throws Exception {
        filter = QuotaFilter.builder().plans(PlansFile.parse("promise.yml", PLANS)).clock(clock)
                .costEstimator("completions", CostReconciliationTest.BODY_NUMBER)
                .costEstimator("sketch", CostReconciliationTest.BODY_NUMBER)
                .build();
        ServletContextHandler context = new ServletContextHandler();
        context.addFilter(new FilterHolder(filter), "/*", EnumSet.of(DispatcherType.REQUEST));
        context.addServlet(new ServletHolder(new Work()), "/");
        server = JettyServer.start(context);
    }

    @AfterEach
    void stop() throws Exception {
        clock.advance(Duration.ofHours(1)); // every piece of "work" still running ends
        server.close();
    }

    private HttpResponse<String> post(String tenant, String path, String body) throws Exception {
        return CLIENT.send(HttpRequest.newBuilder(server.uri(path)).timeout(Duration.ofSeconds(10))
                .header("X-Tenant-Id", tenant).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private CompletableFuture<HttpResponse<String>> get(String tenant, String path) {
        return CLIENT.sendAsync(HttpRequest.newBuilder(server.uri(path)).timeout(Duration.ofSeconds(30))
                .header("X-Tenant-Id", tenant).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static long retryAfter(HttpResponse<String> r) {
        return Long.parseLong(r.headers().firstValue("Retry-After").orElseThrow());
    }

    @ParameterizedTest
    @ValueSource(ints = {15, 20})
    void anEstimatedRefusalStatesTheWaitForTheRequestsOwnCost(int cost) throws Exception {
        assertThat(post("t1", "/v1/completions", "20").statusCode()).isEqualTo(200); // drained: 0 of 20
        HttpResponse<String> refused = post("t1", "/v1/completions", Integer.toString(cost));
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.body()).contains("\"reason\":\"tenant_rate\"");
        assertThat(retryAfter(refused)).isEqualTo(cost); // 1 unit a second; the minimum would say 1
        // the body was read to its end: the connection may be reused
        assertThat(refused.headers().firstValue("Connection")).isEmpty();

        clock.advance(Duration.ofSeconds(cost - 1));
        assertThat(post("t1", "/v1/completions", Integer.toString(cost)).statusCode()).as("not a second early")
                .isEqualTo(429);
        clock.advance(Duration.ofSeconds(1)); // exactly Retry-After after the first refusal
        assertThat(post("t1", "/v1/completions", Integer.toString(cost)).statusCode()).isEqualTo(200);
    }

    @Test
    void anEstimatedRouteWithoutAGroupIsNotReadAndStatesTheWaitForItsLargestCost() throws Exception {
        assertThat(post("t2", "/sketch", "20").statusCode()).isEqualTo(200);
        HttpResponse<String> refused = post("t2", "/sketch", "3");
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(retryAfter(refused)).isEqualTo(20); // the plan's largest cost: an upper bound, kept
        clock.advance(Duration.ofSeconds(20));
        assertThat(post("t2", "/sketch", "20").statusCode()).isEqualTo(200);
    }

    @Test
    void aConcurrencyRefusalWaitsForTheTenantsOwnOldestRequestNotTheRoutesAverage() throws Exception {
        // slow's reports take 12 s: one finished before, so its own history says so
        CompletableFuture<HttpResponse<String>> earlier = get("slow", "/reports/0?s=12");
        Await.until("the report started", () -> started.get() == 1); // its clock read before the clock moves
        clock.advance(Duration.ofSeconds(12));
        assertThat(earlier.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);

        // now it holds all 3 of its slots with 12 s reports, started 4 s apart
        List<CompletableFuture<HttpResponse<String>>> running = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            running.add(get("slow", "/reports/" + i + "?s=12"));
            int n = i;
            Await.until("report " + n + " running", () -> filter.control().concurrency().inflight("reports", "slow") == n && started.get() == n + 1);
            if (i < 3) clock.advance(Duration.ofSeconds(4));
        }
        // beside it, another tenant's instant reports pull the route's average down to almost nothing
        for (int i = 0; i < 15; i++) assertThat(get("fast", "/reports/f" + i).get(10, TimeUnit.SECONDS).statusCode())
                .isEqualTo(200);
        clock.advance(Duration.ofSeconds(1)); // the oldest has run 9 s

        HttpResponse<String> refused = get("slow", "/reports/4").get(10, TimeUnit.SECONDS);
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.body()).contains("\"reason\":\"concurrency\"");
        long wait = retryAfter(refused);
        assertThat(wait).isEqualTo(3); // its oldest ends 12 s after it started

        clock.advance(Duration.ofSeconds(wait));
        assertThat(running.get(0).get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        Await.until("two of slow's reports running", () -> filter.control().concurrency().inflight("reports", "slow") == 2);
        assertThat(get("slow", "/reports/4").get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    }

    @Test
    void aRequestRunningPastItsUsualDurationMakesTheWaitGrowInsteadOfStayingAtOneSecond() throws Exception {
        // no history at all: "fast" taught the route that reports take no time
        for (int i = 0; i < 5; i++) assertThat(get("fast", "/reports/f" + i).get(10, TimeUnit.SECONDS).statusCode())
                .isEqualTo(200);
        List<CompletableFuture<HttpResponse<String>>> running = new ArrayList<>();
        for (int i = 1; i <= 3; i++) running.add(get("slow", "/reports/" + i + "?s=12"));
        Await.until("slow's three reports running", () -> filter.control().concurrency().inflight("reports", "slow") == 3 && started.get() == 3);
        long end = clock.nanoTime() + Duration.ofSeconds(12).toNanos();
        List<Long> waits = new ArrayList<>();
        for (int refusals = 0; refusals < 12; refusals++) {
            if (clock.nanoTime() >= end) Await.until("slow's reports ended", () -> filter.control().concurrency().inflight("reports", "slow") == 0);
            HttpResponse<String> r = get("slow", "/reports/x").get(10, TimeUnit.SECONDS);
            if (r.statusCode() == 200) break;
            waits.add(retryAfter(r));
            clock.advance(Duration.ofSeconds(retryAfter(r)));
        }
        // 1, 1, 2, 4, 8 s: the wait grows with the overrun, so a 12 s request costs 5 refusals, not 12
        assertThat(waits).containsExactly(1L, 1L, 2L, 4L, 8L);
        for (CompletableFuture<HttpResponse<String>> r : running) assertThat(r.get(10, TimeUnit.SECONDS).statusCode())
                .isEqualTo(200);
    }
}

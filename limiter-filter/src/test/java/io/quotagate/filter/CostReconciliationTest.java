package io.quotagate.filter;

import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.store.HeldBuckets;
import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.PlansFile;
import jakarta.servlet.AsyncContext;
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
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.EnumSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Estimated costs, reserve then reconcile, and the answers to bad input, on real Jetty. The
 * estimator prices a request at the number in its body; the servlet reports {@code ?actual=N}.
 */
class CostReconciliationTest {
    static final String PLANS = """
            global: { limits: [ { capacity: 120, refill: 120, period: 1m } ] }
            plans:  { llm: { limits: [ { capacity: 100, refill: 10, period: 1s } ], concurrency: { faulty: 1 } } }
            routes:
              - { name: ops, paths: ["/health"], limited: false }
              - { name: gen, methods: [POST], paths: ["/gen"] }
              - { name: faulty, methods: [POST], paths: ["/faulty"], group: faulty }
            """;
    private static final HttpClient CLIENT = HttpClient.newHttpClient();

    private final ManualClock clock = new ManualClock();
    private final BucketStore store = BucketStore.local(100, clock);
    private JettyServer server;

    /** Prices a request at the decimal number in its body. */
    static final CostEstimator BODY_NUMBER = (request, body) -> {
        String text = new String(body, java.nio.charset.StandardCharsets.UTF_8).trim();
        if (!text.matches("-?\\d{1,18}")) throw new InvalidCostInputException("the body must be a whole number");
        return Long.parseLong(text);
    };

    /** As {@link #BODY_NUMBER}, but fails as a buggy estimator would on the bodies {@code runtime}, {@code error}, {@code oom}. */
    static final CostEstimator FAULTY = (request, body) -> {
        switch (new String(body, java.nio.charset.StandardCharsets.UTF_8).trim()) {
            case "runtime" -> throw new IllegalStateException("the estimator's own bug");
            case "error" -> throw new AssertionError("the estimator's own bug");
            case "oom" -> throw new OutOfMemoryError("a test's, thrown by the estimator");
            default -> {
                return BODY_NUMBER.estimate(request, body);
            }
        }
    };

    /** Per tenant: what the reports of {@code ?async=late} answered, through the filter's request and the container's. */
    static final java.util.Map<String, String> LATE_REPORTS = new java.util.concurrent.ConcurrentHashMap<>();

    /** Echoes the body; reports ?actual=N or sets ?attr=TEXT; ?async=1 does it on another thread. */
    static final class Reporting extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            String body = req.getReader().lines().reduce("", String::concat);
            if ("late".equals(req.getParameter("async"))) {
                reportWhenCompleted(req, resp, body);
                return;
            }
            if (req.getParameter("async") != null) {
                AsyncContext async = req.startAsync();
                // ?async=original: go on with the container's own request, as async code often does
                HttpServletRequest continued = "original".equals(req.getParameter("async"))
                        ? (HttpServletRequest) async.getRequest() : req;
                new Thread(() -> {
                    try {
                        report(continued, resp, body);
                    } catch (IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    } finally {
                        async.complete();
                    }
                }).start();
                return;
            }
            // ?raw=1: report through the container's own request, as injected or saved requests are
            report(req.getParameter("raw") != null ? containers(req) : req, resp, body);
        }

        /**
         * Completes on another thread; the application's own {@code onComplete} (after the filter's, which
         * settles) then reports through the filter's request and the container's, into {@link #LATE_REPORTS}.
         */
        private static void reportWhenCompleted(HttpServletRequest req, HttpServletResponse resp, String body) {
            AsyncContext async = req.startAsync();
            jakarta.servlet.ServletRequest containers = async.getRequest();
            String tenant = req.getHeader("X-Tenant-Id");
            async.addListener(new jakarta.servlet.AsyncListener() {
                @Override
                public void onComplete(jakarta.servlet.AsyncEvent event) {
                    LATE_REPORTS.put(tenant, ActualCost.report(req, 5) + "," + ActualCost.report(containers, 5));
                }

                @Override
                public void onTimeout(jakarta.servlet.AsyncEvent event) {
                }

                @Override
                public void onError(jakarta.servlet.AsyncEvent event) {
                }

                @Override
                public void onStartAsync(jakarta.servlet.AsyncEvent event) {
                }
            });
            new Thread(() -> {
                try {
                    resp.getWriter().write("body=" + body);
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                } finally {
                    async.complete();
                }
            }).start();
        }

        private static HttpServletRequest containers(HttpServletRequest req) {
            jakarta.servlet.ServletRequest r = req;
            while (r instanceof jakarta.servlet.ServletRequestWrapper w) r = w.getRequest();
            assertThat(r).isNotSameAs(req); // the filter did pass a wrapper on
            return (HttpServletRequest) r;
        }

        private static void report(HttpServletRequest req, HttpServletResponse resp, String body) throws IOException {
            boolean reported = false;
            if (req.getParameter("actual") != null) {
                reported = ActualCost.report(req, Long.parseLong(req.getParameter("actual")));
            }
            if (req.getParameter("attr") != null) req.setAttribute(ActualCost.ATTRIBUTE, req.getParameter("attr"));
            resp.setContentType("text/plain");
            resp.getWriter().write("reported=" + reported + ";reserved=" + ActualCost.reserved(req).orElse(-1) + ";body=" + body);
        }
    }

    @BeforeEach
    void start() throws Exception {
        QuotaFilter filter = QuotaFilter.builder().plans(PlansFile.parse("t.yml", PLANS)).clock(clock).store(store)
                .costEstimator("gen", BODY_NUMBER).costEstimator("faulty", FAULTY).maxEstimatedBodyBytes(64).build();
        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        context.addFilter(new FilterHolder(filter), "/*", EnumSet.of(DispatcherType.REQUEST));
        context.addServlet(new ServletHolder(new Reporting()), "/*");
        server = JettyServer.start(context);
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    private HttpResponse<String> post(String tenant, String query, String body) throws Exception {
        HttpRequest r = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + query))
                .timeout(Duration.ofSeconds(10)).header("X-Tenant-Id", tenant)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        return CLIENT.send(r, HttpResponse.BodyHandlers.ofString());
    }

    private long tenantTokens(String tenant) {
        return HeldBuckets.available(store, BucketKind.GUEST, tenant); // no assignments: tenants are guests
    }

    private long globalTokens() {
        return HeldBuckets.available(store, BucketKind.GLOBAL, "global");
    }

    @Test
    void theEstimateIsReservedAndTheApplicationSeesTheBody() throws Exception {
        HttpResponse<String> r = post("acme", "/gen", "80");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).isEqualTo("reported=false;reserved=80;body=80");
        assertThat(tenantTokens("acme")).isEqualTo(20);
        assertThat(globalTokens()).isEqualTo(40);
        assertThat(post("acme", "/gen", "21").statusCode()).isEqualTo(429);
    }

    @Test
    void aSmallerActualCostIsRefundedToTheTenantAndTheGlobalQuota() throws Exception {
        assertThat(post("acme", "/gen?actual=30", "80").body()).startsWith("reported=true");
        assertThat(tenantTokens("acme")).isEqualTo(70);
        assertThat(globalTokens()).isEqualTo(90);
        // another tenant can now use the 90 units the global quota got back
        assertThat(post("globex", "/gen", "90").statusCode()).isEqualTo(200);
        HttpResponse<String> refused = post("globex", "/gen", "1");
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.body()).contains("\"reason\":\"global_rate\"");
    }

    @Test
    void aLargerActualCostLeavesTheTenantInDebtAndItsRetryAfterLonger() throws Exception {
        post("acme", "/gen?actual=110", "60"); // an excess of 50: no more than the reservation again
        assertThat(tenantTokens("acme")).isEqualTo(-10);
        assertThat(globalTokens()).isEqualTo(10);
        HttpResponse<String> r = post("acme", "/gen", "10");
        assertThat(r.statusCode()).isEqualTo(429);
        // an estimated route without a concurrency group is refused before its body is read: the wait
        // is for the largest cost the plan admits (100), an upper bound: the global quota's 10 left need
        // 90 more at 2 a second, and the tenant's debt of 10 is paid meanwhile
        assertThat(r.headers().firstValue("Retry-After")).contains("45");
        assertThat(r.body()).contains("\"reason\":\"global_rate\"");
        clock.advance(Duration.ofSeconds(45));
        assertThat(post("acme", "/gen", "10").statusCode()).isEqualTo(200);
    }

    /**
     * Issue 58: one request estimated at 1 and reported at Long.MAX_VALUE took the plan's largest cost (100) from
     * the global quota of 120 as well, and every other tenant got 429 global_rate. The tenant pays its excess; the
     * global quota at most the reservation again.
     */
    @Test
    void oneHugeReportCannotStarveTheOtherTenantsOfTheGlobalQuota() throws Exception {
        assertThat(post("acme", "/gen?actual=" + Long.MAX_VALUE, "1").statusCode()).isEqualTo(200);
        assertThat(tenantTokens("acme")).as("its own debt: 1 reserved, 100 of excess").isEqualTo(-1);
        assertThat(globalTokens()).isEqualTo(118);
        HttpResponse<String> other = post("globex", "/gen", "100");
        assertThat(other.statusCode()).as(other.body()).isEqualTo(200);
    }

    @Test
    void anAsyncRequestIsSettledWhenItCompletes() throws Exception {
        HttpResponse<String> r = post("acme", "/gen?async=1&actual=5", "60");
        assertThat(r.body()).startsWith("reported=true;reserved=60");
        Await.until("acme's tokens after the reconciliation", () -> tenantTokens("acme"), tokens -> tokens == 95);
        Await.until("the global tokens after the reconciliation", this::globalTokens, tokens -> tokens == 115);
    }

    @Test
    void anAsyncRequestReportingThroughTheContainersOwnRequestIsSettledToo() throws Exception {
        HttpResponse<String> r = post("acme", "/gen?async=original&actual=5", "60");
        assertThat(r.body()).startsWith("reported=true;reserved=60");
        Await.until("acme's tokens after the reconciliation", () -> tenantTokens("acme"), tokens -> tokens == 95);
    }

    @Test
    void aReportThroughTheContainersOwnRequestIsSettledToo() throws Exception {
        HttpResponse<String> r = post("acme", "/gen?raw=1&actual=5", "60");
        assertThat(r.body()).startsWith("reported=true;reserved=60");
        assertThat(tenantTokens("acme")).isEqualTo(95);
    }

    /**
     * docs/costs.md: the filter's listener settles when the request completes, so a report from the application's
     * own onComplete is too late: ignored, answering false (it answered true and was silently dropped), whichever
     * request it goes through; the reservation stands.
     */
    @Test
    void aReportFromTheApplicationsOwnOnCompleteIsTooLateAndAnswersFalse() throws Exception {
        assertThat(post("late", "/gen?async=late", "60").body()).isEqualTo("body=60");
        String answers = Await.until("the late reports' answers", () -> LATE_REPORTS.get("late"),
                java.util.Objects::nonNull);
        assertThat(answers).as("through the filter's request, then the container's").isEqualTo("false,false");
        assertThat(tenantTokens("late")).isEqualTo(40);
    }

    @Test
    void anActualCostSetAsAnAttributeStringIsSettledToo() throws Exception {
        post("acme", "/gen?attr=12", "40");
        assertThat(tenantTokens("acme")).isEqualTo(88);
    }

    @ParameterizedTest(name = "attribute ''{0}''")
    @CsvSource({"abc", "-3", "1.5", "99999999999999999999999999999x"})
    void aMalformedActualCostIsIgnoredAndTheReservationStands(String attr) throws Exception {
        assertThat(post("acme", "/gen?attr=" + attr.replace("-", "%2D"), "40").statusCode()).isEqualTo(200);
        assertThat(tenantTokens("acme")).isEqualTo(60);
        assertThat(globalTokens()).isEqualTo(80);
    }

    @Test
    void aNegativeReportIsIgnored() throws Exception {
        assertThat(post("acme", "/gen?actual=-5", "40").body()).startsWith("reported=false");
        assertThat(tenantTokens("acme")).isEqualTo(60);
    }

    @Test
    void aReportOnARequestTheFilterNeverAdmittedIsIgnored() throws Exception {
        assertThat(post("acme", "/health?actual=3", "").body()).startsWith("reported=false;reserved=-1");
    }

    /**
     * A body that was read and refused keeps the route's minimum cost (1 here): the server did the
     * work, and a client that keeps sending bad bodies spends its own units until it is refused before
     * its body is read. A body refused by its declared length was never read and costs nothing.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "non-numeric    | abc                       | 400 | invalid_request | 1",
            "negative       | -5                        | 400 | invalid_cost    | 1",
            "zero           | 0                         | 400 | invalid_cost    | 1",
            "above capacity | 101                       | 400 | cost_too_large  | 1",
            "absurd         | 999999999999999999        | 400 | cost_too_large  | 1",
            "too long body  | 00000000000000000000000000000000000000000000000000000000000000001 | 413 | body_too_large | 0"})
    void badInputIsAClientErrorAndCostsAtMostTheRoutesMinimum(String what, String body, int status, String reason,
                                                              long charged) throws Exception {
        HttpResponse<String> r = post("acme", "/gen", body);
        assertThat(r.statusCode()).isEqualTo(status);
        assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(ct -> assertThat(ct).startsWith("application/problem+json"));
        assertThat(r.body()).contains("\"reason\":\"" + reason + "\"").doesNotContain("Exception");
        assertThat(globalTokens()).isEqualTo(120 - charged);
        assertThat(tenantTokens("acme")).isEqualTo(100 - charged);
    }

    /**
     * An estimator that fails on its own (a plain RuntimeException, or an Error) is the server's failure, not the
     * client's: a 500 problem answer, never the container's error page; the units and the slot go back (the
     * tenant's one slot of the route admits the next request). An Error is thrown on after the answer.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource({"runtime", "error", "oom"})
    void anEstimatorThatFailsIsAProblemAnswerAndCostsNothing(String failure) throws Exception {
        HttpResponse<String> r = post("acme", "/faulty", failure);
        assertThat(r.statusCode()).isEqualTo(500);
        assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(ct -> assertThat(ct).startsWith("application/problem+json"));
        assertThat(r.body()).contains("\"reason\":\"internal_error\"", "\"tenant\":\"acme\"")
                .doesNotContain("Exception", "bug", "<html");
        assertThat(tenantTokens("acme")).isEqualTo(100);
        assertThat(globalTokens()).isEqualTo(120);
        HttpResponse<String> next = post("acme", "/faulty?actual=7", "7");
        assertThat(next.statusCode()).as(next.body()).isEqualTo(200);
        assertThat(tenantTokens("acme")).isEqualTo(93);
    }
}

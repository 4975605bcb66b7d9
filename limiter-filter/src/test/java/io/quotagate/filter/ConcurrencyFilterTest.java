package io.quotagate.filter;

import io.quotagate.filter.status.ConcurrencyView;
import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.PlansFile;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Concurrency caps through the filter on real Jetty: 429 reason concurrency, and permits that never leak. */
class ConcurrencyFilterTest {
    static final String PLANS = """
            plans:
              free:
                limits: [ { capacity: 1000, refill: 1000, period: 1s } ]
                concurrency: { heavy: 1, queued: 1, hurried: 1 }
              tiny:
                limits: [ { capacity: 1, refill: 1, period: 1h } ]
                concurrency: { heavy: 2 }
            routes:
              - { name: heavy, paths: ["/heavy/*"], group: heavy }
              - { name: queued, paths: ["/queued/*"], group: queued }
              - { name: hurried, paths: ["/hurried/*"], group: hurried }
            groups:
              queued: { queue: { size: 1, max-wait: 20s } }
              hurried: { queue: { size: 1, max-wait: 300ms } }
            tenants:
              default-plan: free
              assignments: { poor: tiny }
            """;

    private final ManualClock clock = new ManualClock();
    private final List<long[]> queueWaits = new ArrayList<>();
    private final BlockingQueue<AsyncContext> parked = new LinkedBlockingQueue<>();
    private final CountDownLatch entered = new CountDownLatch(1);
    private final CountDownLatch proceed = new CountDownLatch(1);
    private final ExecutorService clients = Executors.newCachedThreadPool();
    private QuotaFilter filter;
    private ConcurrencyView view;
    private JettyServer server;

    @BeforeEach
    void start() throws Exception {
        filter = QuotaFilter.builder().plans(PlansFile.parse("test.yml", PLANS)).clock(clock)
                .concurrencyListener((group, tenant, nanos, admitted) -> {
                    synchronized (queueWaits) {
                        queueWaits.add(new long[]{nanos, admitted ? 1 : 0});
                    }
                })
                .build();
        view = filter.control().concurrency();
        ServletContextHandler context = JettyServer.asyncContext(filter, new Behaviours());
        server = JettyServer.start(context);
    }

    @AfterEach
    void stop() throws Exception {
        proceed.countDown();
        AsyncContext a;
        while ((a = parked.poll()) != null) a.complete();
        server.close();
        clients.shutdownNow();
    }

    /** The last path segment picks what the application does. */
    final class Behaviours extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            String what = req.getRequestURI().substring(req.getRequestURI().lastIndexOf('/') + 1);
            switch (what) {
                case "hold" -> {
                    entered.countDown();
                    try {
                        proceed.await(30, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    resp.getWriter().write("held");
                }
                case "async" -> parked.add(req.startAsync());
                case "timeout" -> req.startAsync().setTimeout(50);
                case "throw" -> throw new IllegalStateException("application bug (expected by the test)");
                default -> resp.getWriter().write("ok");
            }
        }
    }

    private CompletableFuture<HttpResponse<String>> getLater(String path, String tenant) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return Http.get(server.uri(path), tenant);
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }, clients);
    }

    @Test
    void aTenantAtItsCapGets429ConcurrencyUntilItsRequestReturns() throws Exception {
        CompletableFuture<HttpResponse<String>> held = getLater("/heavy/hold", "acme");
        assertThat(entered.await(30, TimeUnit.SECONDS)).isTrue();
        assertThat(view.inflight("heavy", "acme")).isEqualTo(1);

        HttpResponse<String> refused = Http.get(server.uri("/heavy/ok"), "acme");
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.headers().firstValue("Retry-After")).contains("1");
        assertThat(refused.body()).contains("\"reason\":\"concurrency\"", "\"tenant\":\"acme\"", "\"retryAfterSeconds\":1");
        assertThat(Http.get(server.uri("/heavy/ok"), "globex").statusCode()).as("other tenants are not affected").isEqualTo(200);
        assertThat(Http.get(server.uri("/other"), "acme").statusCode()).as("routes outside the group are not capped").isEqualTo(200);

        proceed.countDown();
        assertThat(held.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        Await.until("the heavy slot released", () -> view.inflight("heavy") == 0);
        assertThat(Http.get(server.uri("/heavy/ok"), "acme").statusCode()).isEqualTo(200);
    }

    @Test
    void anAsyncRequestHoldsItsPermitUntilItCompletes() throws Exception {
        CompletableFuture<HttpResponse<String>> async = getLater("/heavy/async", "acme");
        AsyncContext context = parked.poll(30, TimeUnit.SECONDS);
        assertThat(context).isNotNull();
        assertThat(view.inflight("heavy", "acme")).as("held after the servlet returned").isEqualTo(1);
        assertThat(Http.get(server.uri("/heavy/ok"), "acme").statusCode()).isEqualTo(429);

        context.getResponse().getWriter().write("done");
        context.complete();
        assertThat(async.get(30, TimeUnit.SECONDS).body()).isEqualTo("done");
        Await.until("the heavy slot released", () -> view.inflight("heavy") == 0);
        assertThat(view.inflightByTenant("heavy")).isEmpty();
        assertThat(Http.get(server.uri("/heavy/ok"), "acme").statusCode()).isEqualTo(200);
    }

    @Test
    void anAsyncTimeoutOrAnExceptionReleasesThePermit() throws Exception {
        assertThat(Http.get(server.uri("/heavy/timeout"), "acme").statusCode()).isEqualTo(500);
        Await.until("the heavy slot released", () -> view.inflight("heavy") == 0);
        assertThat(Http.get(server.uri("/heavy/throw"), "acme").statusCode()).isEqualTo(500);
        assertThat(view.inflight("heavy")).isZero();
        assertThat(Http.get(server.uri("/heavy/ok"), "acme").statusCode()).isEqualTo(200);
    }

    @Test
    void whenTheBucketsRefuseThePermitIsGivenBackAtOnce() throws Exception {
        // tiny: one unit per hour, two reports at once
        CompletableFuture<HttpResponse<String>> first = getLater("/heavy/async", "poor");
        AsyncContext context = parked.poll(30, TimeUnit.SECONDS);
        assertThat(context).isNotNull();
        HttpResponse<String> refused = Http.get(server.uri("/heavy/ok"), "poor");
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.body()).contains("\"reason\":\"tenant_rate\"");
        assertThat(view.inflight("heavy", "poor")).as("only the running request holds a slot").isEqualTo(1);
        context.complete();
        assertThat(first.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        Await.until("the heavy slot released", () -> view.inflight("heavy") == 0);
    }

    @Test
    void retryAfterFollowsTheDurationOfCompletedRequests() throws Exception {
        CompletableFuture<HttpResponse<String>> first = getLater("/heavy/async", "acme");
        AsyncContext context = parked.poll(30, TimeUnit.SECONDS);
        clock.advance(Duration.ofMillis(2300)); // the request "runs" 2.3 s on the filter's clock
        context.complete();
        first.get(30, TimeUnit.SECONDS);
        Await.until("the heavy slot released", () -> view.inflight("heavy") == 0);

        getLater("/heavy/async", "acme");
        AsyncContext second = parked.poll(30, TimeUnit.SECONDS);
        HttpResponse<String> refused = Http.get(server.uri("/heavy/ok"), "acme");
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.headers().firstValue("Retry-After")).contains("3");
        second.complete();
    }

    @Test
    void aQueuedRequestRunsWhenASlotFreesAndTimesOutWith429Otherwise() throws Exception {
        CompletableFuture<HttpResponse<String>> first = getLater("/queued/async", "acme");
        AsyncContext running = parked.poll(30, TimeUnit.SECONDS);
        CompletableFuture<HttpResponse<String>> waiting = getLater("/queued/ok", "acme");
        Await.until("acme's request queued", () -> view.queued("queued", "acme") == 1);
        HttpResponse<String> queueFull = Http.get(server.uri("/queued/ok"), "acme");
        assertThat(queueFull.statusCode()).as("queue size 1 is full").isEqualTo(429);
        running.complete();
        assertThat(waiting.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        assertThat(first.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);

        getLater("/hurried/async", "acme");
        AsyncContext again = parked.poll(30, TimeUnit.SECONDS);
        HttpResponse<String> timedOut = Http.get(server.uri("/hurried/ok"), "acme"); // waits 300 ms
        assertThat(timedOut.statusCode()).isEqualTo(429);
        assertThat(timedOut.body()).contains("\"reason\":\"concurrency\"");
        again.complete();
        Await.until("the hurried group empty", () -> view.inflight("hurried") == 0 && view.queued("hurried") == 0);
        synchronized (queueWaits) {
            assertThat(queueWaits).hasSize(2);
            assertThat(queueWaits.get(0)[1]).as("first wait admitted").isEqualTo(1);
            assertThat(queueWaits.get(1)[1]).as("second wait timed out").isZero();
            assertThat(queueWaits.get(1)[0]).isGreaterThanOrEqualTo(300_000_000L);
        }
    }
}

package io.quotagate.filter;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.quotagate.filter.metrics.QuotaMeterBinder;
import io.quotagate.filter.status.ConcurrencyView;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.Scrape;
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
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An adaptive group through the filter on real Jetty: it admits and refuses as a fixed group does
 * (429, reason concurrency, Retry-After), with the fair-share reserve, and its limit is a gauge.
 */
class AdaptiveGroupFilterTest {
    static final String PLANS = """
            plans:
              free:
                limits: [ { capacity: 1000, refill: 1000, period: 1s } ]
            routes:
              - { name: adaptive, paths: ["/adaptive/*"], group: adaptive }
              - { name: fixed, paths: ["/fixed/*"], group: fixed }
            groups:
              adaptive: { adaptive: { initial: 2, min: 2, max: 2 } }
              fixed: { max-inflight: 2 }
            tenants:
              default-plan: free
            """;

    private final BlockingQueue<AsyncContext> parked = new LinkedBlockingQueue<>();
    private final ExecutorService clients = Executors.newCachedThreadPool();
    private QuotaFilter filter;
    private ConcurrencyView view;
    private JettyServer server;

    @BeforeEach
    void start() throws Exception {
        filter = QuotaFilter.builder().plans(PlansFile.parse("adaptive.yml", PLANS)).build();
        view = filter.control().concurrency();
        ServletContextHandler context = JettyServer.asyncContext(filter, new Parking());
        server = JettyServer.start(context);
    }

    @AfterEach
    void stop() throws Exception {
        AsyncContext a;
        while ((a = parked.poll()) != null) a.complete();
        server.close();
        filter.destroy();
        clients.shutdownNow();
    }

    /** {@code .../park} goes async and stays in flight until the test completes it; anything else answers ok. */
    final class Parking extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            if (req.getRequestURI().endsWith("/park")) parked.add(req.startAsync());
            else resp.getWriter().write("ok");
        }
    }

    private CompletableFuture<HttpResponse<String>> park(String group, String tenant) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return Http.get(server.uri("/" + group + "/park"), tenant);
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }, clients);
    }

    private AsyncContext nextParked() throws InterruptedException {
        AsyncContext c = parked.poll(30, TimeUnit.SECONDS);
        assertThat(c).as("a request parked within 30 s").isNotNull();
        return c;
    }

    private static void assertConcurrencyRefusal(HttpResponse<String> r, String tenant) {
        assertThat(r.statusCode()).isEqualTo(429);
        assertThat(r.headers().firstValue("Retry-After")).contains("1");
        assertThat(r.body()).contains("\"reason\":\"concurrency\"", "\"tenant\":\"" + tenant + "\"", "\"retryAfterSeconds\":1");
    }

    @Test
    void anAdaptiveGroupRefusesWith429ConcurrencyAndKeepsAQuietTenantsShare() throws Exception {
        var acme1 = park("adaptive", "acme");
        AsyncContext acme = nextParked();
        // limit 2: acme alone holds its fair share 2 / (1 + a newcomer) = 1; the other slot is the reserve
        assertConcurrencyRefusal(Http.get(server.uri("/adaptive/ok"), "acme"), "acme");
        var globex1 = park("adaptive", "globex");
        AsyncContext globex = nextParked();
        assertThat(view.inflightByTenant("adaptive")).isEqualTo(Map.of("acme", 1, "globex", 1));
        assertConcurrencyRefusal(Http.get(server.uri("/adaptive/ok"), "initech"), "initech");

        acme.complete();
        assertThat(acme1.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        globex.complete();
        assertThat(globex1.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    }

    @Test
    void aFixedGroupBesideItLetsOneTenantTakeTheWholeCap() throws Exception {
        park("fixed", "acme");
        park("fixed", "acme");
        nextParked();
        nextParked();
        assertConcurrencyRefusal(Http.get(server.uri("/fixed/ok"), "globex"), "globex");
    }

    @Test
    void theAdaptiveLimitIsAGaugeOfAdaptiveGroupsOnly() {
        PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        new QuotaMeterBinder(filter.control()).bindTo(prometheus);
        Scrape scrape = Scrape.of(prometheus.scrape());
        assertThat(scrape.sum("quotagate_concurrency_limit", Map.of("group", "adaptive"))).isEqualTo(2.0);
        assertThat(scrape.series("quotagate_concurrency_limit", Map.of("group", "fixed"))).isEmpty();
        assertThat(view.adaptiveLimit("adaptive")).hasValue(2);
        assertThat(view.adaptiveLimit("fixed")).isEmpty();
    }
}

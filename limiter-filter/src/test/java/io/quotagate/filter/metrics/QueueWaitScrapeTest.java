package io.quotagate.filter.metrics;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.status.ConcurrencyView;
import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.HoldingServlet;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.Scrape;
import io.quotagate.plans.PlansFile;
import jakarta.servlet.DispatcherType;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What docs/metrics.md promises of {@code quotagate.queue.wait} (p50/p95), on a real Prometheus scrape after a
 * request waited in a group's queue: the histogram's series, and that page's {@code histogram_quantile}
 * query answered from them.
 */
class QueueWaitScrapeTest {
    private static final String PLANS = """
            plans:
              free:
                limits: [ { capacity: 1000, refill: 1000, period: 1s } ]
                concurrency: { reports: 1 }
            routes:
              - { name: reports, paths: ["/reports/*"], group: reports }
            groups:
              reports: { queue: { size: 4, max-wait: 30s } }
            tenants:
              default-plan: free
            """;
    private static final String BUCKET = "quotagate_queue_wait_seconds_bucket";

    private final HoldingServlet holding = new HoldingServlet();
    private final ExecutorService clients = Executors.newCachedThreadPool();
    private QuotaFilter filter;
    private JettyServer server;

    @AfterEach
    void stop() throws Exception {
        holding.proceed.countDown();
        if (server != null) server.close();
        if (filter != null) filter.destroy();
        clients.shutdownNow();
    }

    private CompletableFuture<HttpResponse<String>> getLater(String path) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return Http.get(server.uri(path), "acme");
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }, clients);
    }

    /** One request waits in the queue of group reports, then is admitted. */
    private void queueOneRequest() throws Exception {
        ConcurrencyView view = filter.control().concurrency();
        CompletableFuture<HttpResponse<String>> holder = getLater("/reports/hold");
        assertThat(holding.entered.await(30, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<HttpResponse<String>> queued = getLater("/reports/1");
        Await.until("the second request waits for the slot", () -> view.queued("reports") == 1);
        holding.proceed.countDown();
        assertThat(holder.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        assertThat(queued.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    }

    private void start() throws Exception {
        filter = QuotaFilter.builder().plans(PlansFile.parse("queue.yml", PLANS)).build();
        ServletContextHandler context = new ServletContextHandler();
        context.addFilter(new FilterHolder(filter), "/*", EnumSet.of(DispatcherType.REQUEST));
        context.addServlet(new ServletHolder(holding), "/");
        server = JettyServer.start(context);
    }

    @Test
    void theReadmesP50AndP95OfQueueWaitsComeFromHistogramBucketsOnARealScrape() throws Exception {
        start();
        PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        SimpleMeterRegistry simple = new SimpleMeterRegistry();
        new QuotaMeterBinder(filter.control()).bindTo(prometheus);
        new QuotaMeterBinder(filter.control()).bindTo(simple);
        queueOneRequest();
        String text = prometheus.scrape();
        Scrape scrape = Scrape.of(text);
        Map<String, String> admitted = Map.of("group", "reports", "outcome", "admitted");

        // the histogram: cumulative buckets up to +Inf, which equals the count
        List<Scrape.Sample> buckets = scrape.series(BUCKET, admitted);
        assertThat(buckets).as("bucket series of the admitted waits").hasSizeGreaterThan(10);
        assertThat(scrape.sum(BUCKET, Map.of("group", "reports", "outcome", "admitted", "le", "+Inf"))).isEqualTo(1.0);
        assertThat(scrape.sum("quotagate_queue_wait_seconds_count", admitted)).isEqualTo(1.0);
        assertThat(scrape.series("quotagate_queue_wait_seconds_sum", admitted)).hasSize(1);
        assertThat(scrape.series("quotagate_queue_wait_seconds_max", admitted)).hasSize(1);
        assertThat(text).as("no client-side percentile beside a histogram").doesNotContain("quantile=");

        String page = Files.readString(Path.of("../docs/metrics.md"));
        String section = page.substring(page.indexOf("\n## Metrics (Micrometer)\n"));
        section = section.substring(0, section.indexOf("\n## ", 1));
        // the table's row: every series it names is scraped, and its p50/p95 point at histogram_quantile
        String row = section.lines().filter(l -> l.startsWith("| `quotagate.queue.wait` ")).findFirst().orElseThrow();
        String[] cells = row.split("\\|");
        Matcher named = Pattern.compile("`(quotagate_[a-z_]+)`").matcher(cells[2]);
        while (named.find()) assertThat(text).as(named.group(1)).containsPattern("(?m)^# TYPE " + named.group(1) + " ");
        Matcher suffix = Pattern.compile("`(_[a-z]+)`").matcher(cells[2]);
        while (suffix.find()) {
            assertThat(scrape.series("quotagate_queue_wait_seconds" + suffix.group(1), admitted))
                    .as("quotagate_queue_wait_seconds" + suffix.group(1)).isNotEmpty();
        }
        if (cells[3].contains("p95")) assertThat(cells[3]).as("how the row's p95 is had").contains("histogram_quantile");

        // the query docs/metrics.md gives, answered from the scrape: sum by (group, le), then Prometheus's interpolation
        Matcher query = Pattern.compile("histogram_quantile\\((0\\.\\d+), sum by \\(group, le\\) \\(rate\\((" + BUCKET
                + ")\\{outcome=\"admitted\"\\}\\[5m\\]\\)\\)\\)").matcher(section);
        assertThat(query.find()).as("the p95 query of docs/metrics.md over the buckets").isTrue();
        assertThat(query.group(1)).isEqualTo("0.95");
        TreeMap<Double, Double> cumulative = new TreeMap<>();
        for (Scrape.Sample b : buckets) cumulative.merge(Double.parseDouble(b.labels().get("le").replace("+Inf", "Infinity")),
                b.value(), Double::sum);
        for (double q : new double[]{0.5, 0.95}) {
            double value = histogramQuantile(q, cumulative);
            assertThat(value).as("p" + Math.round(q * 100) + " of the waits").isBetween(0.0, 30.0);
        }

        // a registry without histograms: p50 and p95 of this instance
        assertThat(simple.find(QuotaMeterBinder.QUEUE_WAIT + ".percentile").tags("group", "reports", "outcome", "admitted")
                .gauges()).extracting(g -> g.getId().getTag("phi")).containsExactlyInAnyOrder("0.5", "0.95");
    }

    /** Prometheus's histogram_quantile: linear within the bucket the rank falls in (the first from 0). */
    private static double histogramQuantile(double q, TreeMap<Double, Double> cumulative) {
        double total = cumulative.lastEntry().getValue();
        double rank = q * total;
        double lowerBound = 0;
        double lowerCount = 0;
        List<Map.Entry<Double, Double>> entries = new ArrayList<>(cumulative.entrySet());
        for (Map.Entry<Double, Double> e : entries) {
            if (e.getValue() >= rank) {
                if (e.getKey().isInfinite()) return lowerBound; // the highest finite bound
                return lowerBound + (e.getKey() - lowerBound) * (rank - lowerCount) / (e.getValue() - lowerCount);
            }
            lowerBound = e.getKey();
            lowerCount = e.getValue();
        }
        return Double.NaN;
    }
}

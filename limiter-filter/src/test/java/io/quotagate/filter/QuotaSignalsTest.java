package io.quotagate.filter;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quotagate.filter.metrics.QuotaMeterBinder;
import io.quotagate.filter.signals.QuotaEvent;
import io.quotagate.filter.signals.QuotaListener;
import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.LogCapture;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.InvalidPlansException;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Quota events: raised from what requests met, once per crossing, delivered off the request path. */
class QuotaSignalsTest {
    private static final String PLANS = """
            global: { limits: [ { name: api, capacity: 100, refill: 100, period: 1m } ] }
            plans:
              pro:
                limits:
                  - { name: burst, capacity: 10, refill: 10, period: 10s }
                  - { name: daily, capacity: 1000, refill: 1000, period: 1d }
              free:
                limits: [ { name: burst, capacity: 5, refill: 5, period: 10s } ]
            tenants:
              default-plan: free
              assignments: { acme: pro, globex: free }
            signals:
              near-limit:
                default: 80%
                plans: { pro: { burst: 50%, daily: 90% } }
              global-near-limit: 90%
              throttled-for-long: { minutes: 3, within: 10m }
              recovered-after: 1m
            """;

    private final ManualClock clock = new ManualClock();
    private final BlockingQueue<QuotaEvent> events = new LinkedBlockingQueue<>();
    private JettyServer server;
    private QuotaFilter filter;

    private void start(String plans, QuotaListener listener) throws Exception {
        filter = QuotaFilter.builder().plans(PlansFile.parse("signals.yml", plans)).clock(clock).listener(listener).build();
        server = JettyServer.start(filter);
    }

    private void start() throws Exception {
        start(PLANS, events::add);
    }

    @AfterEach
    void stop() throws Exception {
        if (server != null) server.close();
        if (filter != null) filter.destroy();
    }

    private void check() {
        ((FilterRuntime) filter.control()).signals.check();
    }

    private int get(String tenant) throws Exception {
        return Http.get(server.uri("/items/1"), tenant).statusCode();
    }

    /** The next event (the listener runs on its own thread), or null after 5 s. */
    private QuotaEvent next() throws InterruptedException {
        return events.poll(5, TimeUnit.SECONDS);
    }

    private List<QuotaEvent> drain() throws InterruptedException {
        List<QuotaEvent> out = new ArrayList<>();
        QuotaEvent e;
        while ((e = events.poll(300, TimeUnit.MILLISECONDS)) != null) out.add(e);
        return out;
    }

    @Test
    void nearLimitFiresOncePerCrossingAtThePlansOwnThresholdAndRearmsWhenUsageFallsBack() throws Exception {
        start();
        for (int i = 0; i < 4; i++) get("acme");
        check();
        assertThat(drain()).as("40% of burst: below pro's 50%").isEmpty();
        get("acme");
        check();
        QuotaEvent e = next();
        assertThat(e).isInstanceOf(QuotaEvent.NearLimit.class);
        QuotaEvent.NearLimit near = (QuotaEvent.NearLimit) e;
        assertThat(near.tenant()).isEqualTo("acme");
        assertThat(near.plan()).isEqualTo("pro");
        assertThat(near.limit()).isEqualTo("burst");
        assertThat(near.thresholdPercent()).isEqualTo(50);
        assertThat(near.used()).isEqualTo(5);
        get("acme");
        check();
        assertThat(drain()).as("once per crossing").isEmpty();
        clock.advance(Duration.ofSeconds(10)); // full again
        get("acme");
        check(); // 10% used: re-armed
        for (int i = 0; i < 5; i++) get("acme");
        check();
        assertThat(next()).as("a second crossing").isInstanceOf(QuotaEvent.NearLimit.class);
        // globex is on free: the file's default 80%
        for (int i = 0; i < 4; i++) get("globex");
        check();
        QuotaEvent.NearLimit free = (QuotaEvent.NearLimit) next();
        assertThat(free.tenant()).isEqualTo("globex");
        assertThat(free.thresholdPercent()).isEqualTo(80);
    }

    @Test
    void exhaustedAtTheFirstRefusalThrottledForLongAfterMoreThanNMinutesRecoveredWhenQuiet() throws Exception {
        // recovery after 2 minutes: the background check never sees a minute-long quiet between the steps below
        start(PLANS.replace("recovered-after: 1m", "recovered-after: 2m"), events::add);
        for (int i = 0; i < 6; i++) get("globex");
        check();
        List<QuotaEvent> first = drain();
        assertThat(first).filteredOn(QuotaEvent.Exhausted.class::isInstance).singleElement()
                .satisfies(x -> {
                    QuotaEvent.Exhausted ex = (QuotaEvent.Exhausted) x;
                    assertThat(ex.tenant()).isEqualTo("globex");
                    assertThat(ex.reason()).isEqualTo("tenant_rate");
                });
        // refused in 4 distinct minutes (each minute: the bucket refilled, then drained again)
        for (int minute = 0; minute < 3; minute++) {
            clock.advance(Duration.ofSeconds(60));
            for (int i = 0; i < 6; i++) get("globex");
            check();
        }
        List<QuotaEvent> later = drain();
        assertThat(later).filteredOn(QuotaEvent.Exhausted.class::isInstance).as("one spell").isEmpty();
        assertThat(later).filteredOn(QuotaEvent.ThrottledForLong.class::isInstance).singleElement()
                .satisfies(x -> assertThat(((QuotaEvent.ThrottledForLong) x).refusedMinutes()).isEqualTo(4));
        clock.advance(Duration.ofSeconds(119));
        check();
        assertThat(drain()).as("not quiet for 2 minutes yet").isEmpty();
        clock.advance(Duration.ofSeconds(1));
        check();
        QuotaEvent recovered = next();
        assertThat(recovered).isInstanceOf(QuotaEvent.Recovered.class);
        assertThat(((QuotaEvent.Recovered) recovered).refusedFor()).isEqualTo(Duration.ofSeconds(180));
        // the next refusal opens a new spell
        for (int i = 0; i < 6; i++) get("globex");
        check();
        assertThat(drain()).filteredOn(QuotaEvent.Exhausted.class::isInstance).hasSize(1);
    }

    @Test
    void theGlobalQuotaNearItsLimitIsRaisedOnceAndEveryEventIsCountedAndLogged() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (LogCapture log = LogCapture.of(io.quotagate.filter.signals.QuotaEvent.class, java.util.logging.Level.ALL)) {
            start();
            new QuotaMeterBinder(filter.control()).bindTo(registry);
            List<String> tenants = List.of("t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9", "t10",
                    "t11", "t12", "t13", "t14", "t15", "t16", "t17", "t18", "t19");
            for (String t : tenants) for (int i = 0; i < 5; i++) get(t); // 95 of the global 100
            check();
            List<QuotaEvent> all = drain();
            assertThat(all).filteredOn(QuotaEvent.GlobalNearLimit.class::isInstance).singleElement()
                    .satisfies(x -> assertThat(((QuotaEvent.GlobalNearLimit) x).used()).isEqualTo(95));
            check();
            assertThat(drain()).filteredOn(QuotaEvent.GlobalNearLimit.class::isInstance).isEmpty();
            assertThat(registry.get("quotagate.events").tag("type", "global_near_limit").functionCounter().count())
                    .isEqualTo(1.0);
            assertThat(log.messages()).anyMatch(m -> m.startsWith("quotagate event=global_near_limit threshold=90 used=95"));
        }
    }

    @Test
    void aListenerThatSleepsTenSecondsNeverSlowsOrFailsARequestAndAFullQueueDropsCounted() throws Exception {
        StringBuilder assigned = new StringBuilder("acme: pro");
        for (int t = 0; t < 40; t++) assigned.append(", t").append(t).append(": free");
        String plans = PLANS.replace("recovered-after: 1m", "recovered-after: 1m\n  queue: 4")
                .replace("acme: pro, globex: free", assigned);
        start(plans, e -> {
            try {
                Thread.sleep(10_000);
            } catch (InterruptedException stop) {
                Thread.currentThread().interrupt();
            }
            throw new IllegalStateException("and then it throws");
        });
        HttpClient client = HttpClient.newHttpClient();
        long started = System.nanoTime();
        List<CompletableFuture<HttpResponse<Void>>> load = new ArrayList<>();
        for (int round = 0; round < 5; round++) {
            for (int t = 0; t < 40; t++) {
                load.add(client.sendAsync(HttpRequest.newBuilder(server.uri("/items/1"))
                        .header("X-Tenant-Id", "t" + t).build(), HttpResponse.BodyHandlers.discarding()));
            }
            CompletableFuture.allOf(load.toArray(CompletableFuture[]::new)).get(9, TimeUnit.SECONDS);
            check(); // raises events (exhausted, near-limit) for the listener that sleeps
        }
        for (CompletableFuture<HttpResponse<Void>> f : load) {
            assertThat(f.get().statusCode()).isIn(200, 429);
        }
        assertThat(Duration.ofNanos(System.nanoTime() - started)).as("not one listener call long")
                .isLessThan(Duration.ofSeconds(10));
        var signals = ((FilterRuntime) filter.control()).signals;
        assertThat(signals.dropped()).as("the queue of 4 overflowed").isPositive();
        assertThat(signals.raised("exhausted") + signals.raised("near_limit")).isGreaterThan(5);
    }

    @Test
    void thePlansFilesWebhookReceivesEveryEventSignedWithTheSecretFromItsFile(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        BlockingQueue<String[]> received = new LinkedBlockingQueue<>();
        com.sun.net.httpserver.HttpServer hook = com.sun.net.httpserver.HttpServer.create(
                new java.net.InetSocketAddress("127.0.0.1", 0), 0);
        hook.createContext("/hook", exchange -> {
            received.add(new String[]{new String(exchange.getRequestBody().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8),
                    exchange.getRequestHeaders().getFirst("X-Quotagate-Signature")});
            exchange.sendResponseHeaders(204, -1);
            exchange.close();
        });
        hook.start();
        try {
            java.nio.file.Path secret = dir.resolve("hook.secret");
            java.nio.file.Files.writeString(secret, "from-a-file\n");
            start(PLANS + "  webhook: { url: \"http://127.0.0.1:" + hook.getAddress().getPort() + "/hook\", secret-file: \""
                    + secret + "\", timeout: 1s, retries: 1 }\n", events::add);
            for (int i = 0; i < 6; i++) get("globex");
            check();
            String[] first = received.poll(5, TimeUnit.SECONDS);
            assertThat(first).isNotNull();
            assertThat(first[0]).startsWith("{\"type\":\"").contains("\"tenant\":\"globex\"");
            assertThat(first[1]).isEqualTo(io.quotagate.filter.signals.WebhookListener.sign(
                    "from-a-file".getBytes(java.nio.charset.StandardCharsets.UTF_8),
                    first[0].getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        } finally {
            hook.stop(0);
        }
    }

    /** A webhook receiver on 127.0.0.1 that accepts every connection and never answers. */
    private static final class HangingReceiver implements AutoCloseable {
        private final java.net.ServerSocket socket = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
        private final List<java.net.Socket> accepted = new java.util.concurrent.CopyOnWriteArrayList<>();
        private final Thread acceptor = new Thread(this::accept, "hanging-receiver");

        HangingReceiver() throws java.io.IOException {
            acceptor.setDaemon(true);
            acceptor.start();
        }

        private void accept() {
            try {
                while (true) accepted.add(socket.accept()); // held open, read from and written to never
            } catch (java.io.IOException closed) {
                // close() ends it
            }
        }

        String url() {
            return "http://127.0.0.1:" + socket.getLocalPort() + "/hook";
        }

        int connections() {
            return accepted.size();
        }

        @Override
        public void close() throws java.io.IOException {
            socket.close();
            for (java.net.Socket s : accepted) s.close();
        }
    }

    @Test
    void everyEventTheWebhookDoesNotDeliverIsCountedInTheScrapeByWhereAndWhy(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        StringBuilder assigned = new StringBuilder("acme: pro");
        for (int t = 0; t < 20; t++) assigned.append(", t").append(t).append(": free");
        java.nio.file.Path secret = dir.resolve("hook.secret");
        java.nio.file.Files.writeString(secret, "s3cret");
        CountDownLatch release = new CountDownLatch(1);
        var registry = new io.micrometer.prometheusmetrics.PrometheusMeterRegistry(
                io.micrometer.prometheusmetrics.PrometheusConfig.DEFAULT);
        try (HangingReceiver receiver = new HangingReceiver()) {
            // the filter's queue holds 4, the webhook's 2; the application's listener holds the filter's
            // thread until released, then throws on every event
            start(PLANS.replace("recovered-after: 1m", "recovered-after: 1m\n  queue: 4")
                    .replace("acme: pro, globex: free", assigned)
                    .replace("global: { limits: [ { name: api, capacity: 100, refill: 100, period: 1m } ] }\n", "")
                    + "  webhook: { url: \"" + receiver.url() + "\", secret-file: \"" + secret
                    + "\", timeout: 300ms, retries: 1, queue: 2 }\n", e -> {
                try {
                    release.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException stop) {
                    Thread.currentThread().interrupt();
                }
                throw new IllegalStateException("the application's listener fails (expected by the test)");
            });
            new QuotaMeterBinder(filter.control()).bindTo(registry);
            for (int t = 0; t < 20; t++) for (int i = 0; i < 6; i++) get("t" + t); // near-limit and exhausted each
            check();
            release.countDown();

            Map<String, String> all = Map.of("listener", "all", "reason", "queue_full");
            Map<String, String> webhook = Map.of("listener", "webhook");
            Map<String, String> application = Map.of("listener", "application", "reason", "failed");
            String dropped = "quotagate_events_dropped_total";
            io.quotagate.filter.testing.Scrape scrape = Await.until("every event settled",
                    () -> io.quotagate.filter.testing.Scrape.of(registry.scrape()), s -> {
                        double events = s.sum("quotagate_events_total", Map.of());
                        return events >= 40 && s.sum(dropped, all) + s.sum(dropped, webhook) == events
                                && s.sum(dropped, all) + s.sum(dropped, application) == events;
                    });
            double raised = scrape.sum("quotagate_events_total", Map.of());
            assertThat(raised).as("20 near-limit and 20 exhausted events").isGreaterThanOrEqualTo(40);
            assertThat(receiver.connections()).as("the webhook reached the receiver").isPositive();
            // the receiver never answers: no event is delivered, so every one is counted, once
            assertThat(scrape.sum(dropped, all) + scrape.sum(dropped, webhook))
                    .as("dropped before any listener, or by the webhook (its queue, given up, refused)").isEqualTo(raised);
            assertThat(scrape.sum(dropped, all)).as("the filter's queue of 4, its thread held").isGreaterThanOrEqualTo(raised - 5);
            assertThat(scrape.sum(dropped, Map.of("listener", "webhook", "reason", "gave_up")))
                    .as("the first event the webhook sent timed out twice").isGreaterThanOrEqualTo(1);
            assertThat(scrape.sum(dropped, Map.of("listener", "webhook", "reason", "refused"))).isZero();
            assertThat(scrape.sum(dropped, application)).as("the application's listener threw on each event it got")
                    .isEqualTo(raised - scrape.sum(dropped, all));
            assertThat(scrape.series(dropped, webhook)).extracting(x -> x.labels().get("reason"))
                    .containsExactlyInAnyOrder("queue_full", "gave_up", "refused");
        } finally {
            release.countDown();
        }
    }

    @Test
    void theWebhookBodyNamesTheInstanceOnALocalStoreToo(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        BlockingQueue<String> bodies = new LinkedBlockingQueue<>();
        com.sun.net.httpserver.HttpServer hook = com.sun.net.httpserver.HttpServer.create(
                new java.net.InetSocketAddress("127.0.0.1", 0), 0);
        hook.createContext("/hook", exchange -> {
            bodies.add(new String(exchange.getRequestBody().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8));
            exchange.sendResponseHeaders(204, -1);
            exchange.close();
        });
        hook.start();
        try {
            java.nio.file.Path secret = dir.resolve("hook.secret");
            java.nio.file.Files.writeString(secret, "s3cret");
            start(PLANS + "  webhook: { url: \"http://127.0.0.1:" + hook.getAddress().getPort() + "/hook\", secret-file: \""
                    + secret + "\" }\n", events::add);
            assertThat(((FilterRuntime) filter.control()).setup.store().limitsChannel()).as("a local store").isEmpty();
            for (int i = 0; i < 6; i++) get("globex"); // near-limit, then exhausted
            check();
            String first = bodies.poll(5, TimeUnit.SECONDS);
            String second = bodies.poll(5, TimeUnit.SECONDS);
            assertThat(second).as("two events").isNotNull();
            java.util.regex.Pattern instance = java.util.regex.Pattern.compile(
                    "\"instance\":\"([^\"]+):" + ProcessHandle.current().pid() + ":[0-9a-f]{8}\"}$");
            assertThat(first).containsPattern(instance);
            String id = first.substring(first.indexOf("\"instance\":"));
            assertThat(second).as("the same instance in every body").endsWith(id);
        } finally {
            hook.stop(0);
        }
    }

    @Test
    void theLogLineOfEventsIsRateLimitedAndCountsWhatItHeldBack() throws Exception {
        StringBuilder assigned = new StringBuilder("acme: pro");
        for (int t = 0; t < 30; t++) assigned.append(", t").append(t).append(": free");
        try (LogCapture log = LogCapture.of(io.quotagate.filter.signals.QuotaEvent.class, java.util.logging.Level.ALL)) {
            start(PLANS.replace("acme: pro, globex: free", assigned).replace("global: { limits: [ { name: api, capacity: 100,"
                    + " refill: 100, period: 1m } ] }\n", ""), events::add);
            for (int t = 0; t < 30; t++) for (int i = 0; i < 6; i++) get("t" + t); // 30 exhausted + 30 near-limit
            check();
            assertThat(log.messages().stream().filter(m -> m.startsWith("quotagate event=")).count()).isEqualTo(10);
            clock.advance(Duration.ofSeconds(1));
            get("acme");
            get("acme");
            for (int i = 0; i < 4; i++) get("acme");
            check();
            assertThat(log.messages()).anyMatch(m -> m.startsWith("quotagate event=") && m.endsWith("unlogged_events=50"));
        }
    }

    @Test
    void aBadSignalsSectionFailsAtStartNamingFileLineAndField() {
        assertThatThrownBy(() -> PlansFile.parse("p.yml", PLANS.replace("pro: { burst: 50%", "pro: { bust: 50%")))
                .isInstanceOf(InvalidPlansException.class)
                .hasMessage("p.yml:15: signals.near-limit.plans.pro.bust: plan pro has no limit 'bust', its limits: [burst, daily]");
        assertThatThrownBy(() -> PlansFile.parse("p.yml", PLANS.replace("global-near-limit: 90%", "global-near-limit: 190%")))
                .hasMessage("p.yml:16: signals.global-near-limit: must be 1% to 100%, was '190%'");
        assertThatThrownBy(() -> PlansFile.parse("p.yml", PLANS.replace("{ minutes: 3, within: 10m }",
                "{ minutes: 30, within: 10m }")))
                .hasMessageStartingWith("p.yml:17: signals.throttled-for-long.within: throttled-for-long: more than 30 minutes");
        String hook = PLANS + "  webhook: { url: http://127.0.0.1:1/hook, secret-env: QUOTAGATE_TEST_UNSET_SECRET }\n";
        assertThatThrownBy(() -> QuotaFilter.builder().plans(PlansFile.parse("p.yml", hook)).build())
                .isInstanceOf(InvalidPlansException.class)
                .hasMessage("p.yml:19: signals.webhook.secret-env: environment variable QUOTAGATE_TEST_UNSET_SECRET is not set (or empty)");
    }
}

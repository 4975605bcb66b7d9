package io.quotagate.filter;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quotagate.filter.metrics.QuotaMeterBinder;
import io.quotagate.filter.status.BandwidthStatus;
import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.HeldScheduler;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.filter.testing.ManyConnections;
import io.quotagate.plans.PlansFile;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code throttle:} through the filter on real Jetty: delayed requests wait in async mode (no thread held)
 * and then run, uncharged a second time; the bounds refuse at once; a dropped request gives its units back.
 *
 * <p>The scheduler is held by the test ({@link HeldScheduler}): it records each planned delay and resumes
 * the requests only when told, so nothing depends on how fast this machine is.
 */
class ThrottleFilterTest {
    /** How long a test waits for a delay or a release: below the requests' own 2 min. */
    private static final Duration PATIENCE = Duration.ofSeconds(100);
    private static final String PLANS = """
            plans:
              free:
                limits: [ { capacity: 10, refill: 10, period: 1s } ]
                throttle: { max-delay: 1s, queue: 100 }
              bulk:
                limits: [ { capacity: 1, refill: 1000, period: 1s } ]
                throttle: { max-delay: 10s, queue: 10000 }
              small:
                limits: [ { capacity: 1, refill: 10, period: 1s } ]
                throttle: { max-delay: 1s, queue: 2 }
            tenants:
              default-plan: free
              assignments: { bulk: bulk, small: small, other: small }
            """;

    private final ManualClock clock = new ManualClock();
    private final HeldScheduler scheduler = new HeldScheduler();
    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private QuotaFilter filter;
    private JettyServer server;

    private void start(int maxThreads, int maxDelayed) throws Exception {
        start(maxThreads, maxDelayed, Duration.ofMinutes(10)); // the held scheduler is late by design
    }

    private void start(int maxThreads, int maxDelayed, Duration grace) throws Exception {
        QuotaFilter.Builder b = QuotaFilter.builder().plans(PlansFile.parse("t.yml", PLANS)).clock(clock)
                .throttleScheduler(scheduler).maxDelayedRequests(maxDelayed);
        b.throttleGrace = grace;
        filter = b.build();
        ServletContextHandler context = JettyServer.asyncContext(filter);
        server = maxThreads > 0 ? JettyServer.startWithThreads(context, maxThreads) : JettyServer.start(context);
    }

    @AfterEach
    void stop() throws Exception {
        scheduler.shutdownNow();
        if (server != null) server.close();
        if (filter != null) filter.destroy();
    }

    private CompletableFuture<HttpResponse<String>> send(String tenant) {
        return client.sendAsync(HttpRequest.newBuilder(server.uri("/items")).header("X-Tenant-Id", tenant)
                .timeout(Duration.ofMinutes(2)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aTenantSendingAtTwiceItsRateIsDelayedWithinMaxDelayAndNeverRefused() throws Exception {
        start(0, 10_000);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new QuotaMeterBinder(filter.control()).bindTo(registry);
        List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
        // 10 a second, burst 10, sent at 20 a second for 1.8 s of the filter's clock: the burst and the refill
        // carry the first 19 at once, the other 17 are delayed, the last one by 0.85 s
        for (int i = 0; i < 36; i++) {
            int delayedBefore = scheduler.delays.size(); // before sending: the request may be decided at once
            CompletableFuture<HttpResponse<String>> r = send("acme");
            responses.add(r);
            Await.within(PATIENCE, "request " + i + " decided", () -> r.isDone() || scheduler.delays.size() > delayedBefore);
            clock.advance(Duration.ofMillis(50));
        }
        assertThat(scheduler.delays).as("the requests beyond the burst were delayed").hasSize(17)
                .allSatisfy(d -> assertThat(d).isPositive().isLessThanOrEqualTo(TimeUnit.SECONDS.toNanos(1)));
        assertThat(filter.control().statistics().delayedNow()).isEqualTo(17);
        scheduler.release();
        int delayedAnswers = 0;
        for (CompletableFuture<HttpResponse<String>> r : responses) {
            HttpResponse<String> response = r.get(2, TimeUnit.MINUTES);
            assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
            if (response.headers().firstValue("Quota-Delay").isPresent()) {
                delayedAnswers++;
                assertThat(Long.parseLong(response.headers().firstValue("Quota-Delay").get()))
                        .isBetween(1L, 1000L);
            }
        }
        assertThat(delayedAnswers).isEqualTo(17);
        Await.within(PATIENCE, "the delays counted", () -> registry.find(QuotaMeterBinder.DELAY).tag("outcome", "resumed").timer() != null
                && registry.find(QuotaMeterBinder.DELAY).tag("outcome", "resumed").timer().count() == 17);
        assertThat(registry.get(QuotaMeterBinder.DELAYED).gauge().value()).isZero();
        // charged once: 36 taken in 1.8 s of 10 a second plus a burst of 10 leaves it 8 in debt, not more
        BandwidthStatus acme = filter.control().tenantLimits("acme").get(0);
        assertThat(acme.nanosToFull()).isEqualTo(TimeUnit.MILLISECONDS.toNanos(1800));
    }

    @Test
    void tenThousandDelayedRequestsWaitOnAServerOfTwelveThreadsAndAllComplete() throws Exception {
        start(12, 10_000);
        int n = 10_000;
        // from a child process: 10,000 connections on both ends would pass this process's limit of open files
        try (ManyConnections clients = ManyConnections.start(server.port(), n, "/items", "bulk")) {
            clients.awaitSent();
            // the first takes the burst; every other one waits in async mode, holding none of the 12 threads:
            // were a delayed request holding one, the 13th could not even be decided
            Await.within(PATIENCE, "all but one delayed", () -> scheduler.delays.size() == n - 1);
            assertThat(filter.control().statistics().delayedNow()).isEqualTo(n - 1);
            assertThat(((QueuedThreadPool) server.server().getThreadPool()).getThreads()).isLessThanOrEqualTo(12);
            assertThat(scheduler.delays).allSatisfy(d -> assertThat(d).isLessThanOrEqualTo(TimeUnit.SECONDS.toNanos(10)));
            scheduler.release();
            assertThat(clients.awaitResponses()).isEqualTo(Map.of(200, n));
        }
        assertThat(filter.control().statistics().delayedNow()).isZero();
    }

    @Test
    void aFullQueueRefusesAtOnceWithTheWaitAndLeavesOtherTenantsTheirRoom() throws Exception {
        start(0, 10_000);
        CompletableFuture<HttpResponse<String>> first = send("small");
        assertThat(first.get(1, TimeUnit.MINUTES).statusCode()).isEqualTo(200);
        List<CompletableFuture<HttpResponse<String>>> delayed = List.of(send("small"), send("small"));
        Await.within(PATIENCE, "two delayed", () -> scheduler.delays.size() == 2);
        HttpResponse<String> refused = send("small").get(1, TimeUnit.MINUTES);
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.body()).contains("\"reason\":\"throttle_full\"");
        assertThat(refused.headers().firstValue("Retry-After")).as("0.3 s, rounded up").contains("1");
        // the refused request's reservation went back: the two delayed ones are 0.2 s ahead, not 0.3 s
        assertThat(filter.control().tenantLimits("small").get(0).nanosToFull())
                .isEqualTo(TimeUnit.MILLISECONDS.toNanos(300));

        assertThat(send("other").get(1, TimeUnit.MINUTES).statusCode()).isEqualTo(200);
        CompletableFuture<HttpResponse<String>> others = send("other");
        Await.within(PATIENCE, "another tenant delayed", () -> scheduler.delays.size() == 3);
        scheduler.release();
        for (CompletableFuture<HttpResponse<String>> r : delayed) assertThat(r.get(1, TimeUnit.MINUTES).statusCode()).isEqualTo(200);
        assertThat(others.get(1, TimeUnit.MINUTES).statusCode()).isEqualTo(200);
    }

    @Test
    void theFiltersBoundOverEveryTenantRefusesAtOnce() throws Exception {
        start(0, 1);
        assertThat(send("small").get(1, TimeUnit.MINUTES).statusCode()).isEqualTo(200);
        CompletableFuture<HttpResponse<String>> delayed = send("small");
        Await.within(PATIENCE, "one delayed", () -> scheduler.delays.size() == 1);
        assertThat(send("other").get(1, TimeUnit.MINUTES).statusCode()).isEqualTo(200);
        HttpResponse<String> refused = send("other").get(1, TimeUnit.MINUTES);
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.body()).contains("throttle_full");
        scheduler.release();
        assertThat(delayed.get(1, TimeUnit.MINUTES).statusCode()).isEqualTo(200);
    }

    @Test
    void aDelayedRequestWhoseClientLeavesGivesItsReservationBack() throws Exception {
        // Jetty does not read a suspended request's connection, so it may not see the client leave: then
        // the async timeout (its delay plus the grace) drops it, as here with a scheduler that never comes
        start(0, 10_000, Duration.ofSeconds(1));
        assertThat(send("small").get(1, TimeUnit.MINUTES).statusCode()).isEqualTo(200);
        long full = filter.control().tenantLimits("small").get(0).nanosToFull();
        try (Socket socket = new Socket("127.0.0.1", server.port())) {
            OutputStream out = socket.getOutputStream();
            out.write("GET /items HTTP/1.1\r\nHost: x\r\nX-Tenant-Id: small\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            Await.within(PATIENCE, "delayed", () -> scheduler.delays.size() == 1);
            assertThat(filter.control().tenantLimits("small").get(0).nanosToFull()).as("reserved")
                    .isEqualTo(full + TimeUnit.MILLISECONDS.toNanos(100));
        } // the client leaves before its request resumes
        Await.within(PATIENCE, "the reservation given back", () -> filter.control().statistics().delayedNow() == 0);
        assertThat(filter.control().tenantLimits("small").get(0).nanosToFull()).isEqualTo(full);
        scheduler.release(); // a late resumption of the dropped request does nothing
        assertThat(filter.control().tenantLimits("small").get(0).nanosToFull()).isEqualTo(full);
    }

    @Test
    void aDelayedRequestNotResumedInTimeIsAnswered503AndGivesItsReservationBack() throws Exception {
        start(0, 10_000, Duration.ofMillis(500));
        assertThat(send("small").get(1, TimeUnit.MINUTES).statusCode()).isEqualTo(200);
        long full = filter.control().tenantLimits("small").get(0).nanosToFull();
        HttpResponse<String> late = send("small").get(2, TimeUnit.MINUTES); // the scheduler never resumes it
        assertThat(late.statusCode()).isEqualTo(503);
        assertThat(late.body()).contains("delay_overrun");
        assertThat(filter.control().tenantLimits("small").get(0).nanosToFull()).isEqualTo(full);
    }
}

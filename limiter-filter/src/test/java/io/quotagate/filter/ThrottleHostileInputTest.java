package io.quotagate.filter;

import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.HeldScheduler;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.PlansFile;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code throttle:} against hostile clients, on real Jetty with a held scheduler ({@link HeldScheduler}: the
 * test resumes delayed requests when it chooses, nothing is timed): made-up tenant ids trying to fill the
 * filter's waiting room, bodies still arriving while a request waits, pipelined requests, and an estimated
 * route, which is never delayed.
 */
class ThrottleHostileInputTest {
    private static final Duration PATIENCE = Duration.ofSeconds(100);
    private static final String PLANS = """
            plans:
              free:
                limits: [ { capacity: 1, refill: 10, period: 1s } ]
                throttle: { max-delay: 1s, queue: 2 }
              one:
                limits: [ { capacity: 1, refill: 10, period: 1s } ]
                throttle: { max-delay: 1s, queue: 1 }
              bulk:
                limits: [ { capacity: 1, refill: 1000, period: 1s } ]
                throttle: { max-delay: 10s, queue: 10000 }
            routes:
              - { name: priced, paths: ["/priced"], cost: 1 }
            tenants:
              default-plan: free
              unknown: default
              assignments: { acme: free, piper: one, bulk: bulk }
            """;

    private final ManualClock clock = new ManualClock();
    private final HeldScheduler scheduler = new HeldScheduler();
    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private QuotaFilter filter;
    private JettyServer server;

    private void start(int maxThreads, int maxDelayed) throws Exception {
        QuotaFilter.Builder b = QuotaFilter.builder().plans(PlansFile.parse("t.yml", PLANS)).clock(clock)
                .throttleScheduler(scheduler).maxDelayedRequests(maxDelayed)
                .costEstimator("priced", (request, body) -> Long.parseLong(new String(body, StandardCharsets.UTF_8).trim()));
        b.throttleGrace = Duration.ofMinutes(10); // the held scheduler is late by design
        filter = b.build();
        ServletContextHandler context = JettyServer.asyncContext(filter, new BodyLengthServlet());
        server = maxThreads > 0 ? JettyServer.startWithThreads(context, maxThreads) : JettyServer.start(context);
    }

    @AfterEach
    void stop() throws Exception {
        scheduler.shutdownNow();
        if (server != null) server.close();
        if (filter != null) filter.destroy();
    }

    /** Reads the whole body and answers its length. */
    static final class BodyLengthServlet extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            int length = req.getInputStream().readAllBytes().length;
            resp.setContentType("text/plain");
            resp.getWriter().write("read " + length);
        }
    }

    private CompletableFuture<HttpResponse<String>> send(String tenant) {
        return client.sendAsync(HttpRequest.newBuilder(server.uri("/items")).header("X-Tenant-Id", tenant)
                .timeout(Duration.ofMinutes(2)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /**
     * Every made-up id under {@code unknown: default} is a guest with its own bucket: were each its own tenant for
     * the throttle's {@code queue}, five ids with three requests each (one at once, two delayed) would fill a room
     * of 10 and every assigned tenant's delay would become a 429 {@code throttle_full}. Guests share one queue,
     * as they share the guest pool: all of them together are delayed at most {@code queue} at once.
     */
    @Test
    void madeUpTenantIdsShareOneQueueAndCannotFillTheWaitingRoomOfAssignedTenants() throws Exception {
        start(0, 10);
        List<CompletableFuture<HttpResponse<String>>> flood = new ArrayList<>();
        int refused = 0;
        for (int id = 0; id < 5; id++) {
            for (int i = 0; i < 3; i++) {
                int before = scheduler.delays.size();
                CompletableFuture<HttpResponse<String>> r = send("made-up-" + id);
                Await.within(PATIENCE, "decided", () -> r.isDone() || scheduler.delays.size() > before);
                if (r.isDone() && r.get().statusCode() == 429) {
                    assertThat(r.get().body()).contains("throttle_full");
                    refused++;
                } else {
                    flood.add(r);
                }
            }
        }
        assertThat(filter.control().statistics().delayedNow()).as("the guests' one queue of 2").isEqualTo(2);
        assertThat(refused).isEqualTo(8);

        assertThat(send("acme").get(1, TimeUnit.MINUTES).statusCode()).isEqualTo(200);
        CompletableFuture<HttpResponse<String>> delayed = send("acme");
        Await.within(PATIENCE, "acme delayed, not refused", () -> delayed.isDone() || scheduler.delays.size() == 3);
        assertThat(delayed).isNotDone();
        scheduler.release();
        assertThat(delayed.get(1, TimeUnit.MINUTES).statusCode()).isEqualTo(200);
        for (CompletableFuture<HttpResponse<String>> r : flood) assertThat(r.get(1, TimeUnit.MINUTES).statusCode()).isEqualTo(200);
        assertThat(filter.control().statistics().delayedNow()).isZero();
    }

    /**
     * A delayed request whose body is still on its way holds no thread while it waits (Jetty does not read a
     * suspended request), so 20 of them on a server of 12 threads leave it answering others; resumed, each
     * reads its body as any request does (the container's idle timeout bounds a body that never comes), and
     * each was charged once, at its decision.
     */
    @Test
    void delayedRequestsWhoseBodiesAreStillArrivingHoldNoThreadAndAreChargedOnce() throws Exception {
        start(12, 10_000);
        assertThat(send("bulk").get(1, TimeUnit.MINUTES).statusCode()).as("the burst of 1").isEqualTo(200);
        List<Socket> sockets = new ArrayList<>();
        try {
            for (int i = 0; i < 20; i++) {
                Socket s = new Socket("127.0.0.1", server.port());
                s.setSoTimeout(60_000);
                sockets.add(s);
                OutputStream out = s.getOutputStream();
                out.write(("POST /upload HTTP/1.1\r\nHost: x\r\nX-Tenant-Id: bulk\r\nContent-Length: 10\r\n\r\n12345")
                        .getBytes(StandardCharsets.US_ASCII));
                out.flush();
            }
            Await.within(PATIENCE, "20 delayed", () -> scheduler.delays.size() == 20);
            assertThat(send("acme").get(1, TimeUnit.MINUTES).statusCode()).as("the server still answers").isEqualTo(200);
            long nanosToFull = filter.control().tenantLimits("bulk").get(0).nanosToFull();
            assertThat(nanosToFull).as("21 units of 1,000 a second: the burst and 20 reserved")
                    .isEqualTo(TimeUnit.MILLISECONDS.toNanos(21));

            scheduler.release();
            for (Socket s : sockets) {
                s.getOutputStream().write("67890".getBytes(StandardCharsets.US_ASCII));
                s.getOutputStream().flush();
            }
            for (Socket s : sockets) {
                String[] answer = response(new BufferedInputStream(s.getInputStream()));
                assertThat(answer[0]).startsWith("HTTP/1.1 200");
                assertThat(answer[1]).as("the whole body, read once resumed").isEqualTo("read 10");
            }
            assertThat(filter.control().tenantLimits("bulk").get(0).nanosToFull()).as("not charged again on resuming")
                    .isEqualTo(nanosToFull);
        } finally {
            for (Socket s : sockets) s.close();
        }
    }

    /**
     * HTTP/1.1 pipelining does not multiply a connection's delayed requests: Jetty decides the next request of
     * a connection only once the one before it has ended, so three pipelined requests of a tenant whose queue
     * is 1 are delayed one after the other, none refused {@code throttle_full}.
     */
    @Test
    void pipelinedRequestsOfOneConnectionAreDelayedOneAfterTheOther() throws Exception {
        start(0, 10_000);
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(60_000);
            String one = "GET /items HTTP/1.1\r\nHost: x\r\nX-Tenant-Id: piper\r\n\r\n";
            s.getOutputStream().write((one + one + one).getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            InputStream in = new BufferedInputStream(s.getInputStream());
            assertThat(statusOf(in)).as("the burst").isEqualTo(200);
            Await.within(PATIENCE, "the second delayed", () -> scheduler.delays.size() == 1);
            scheduler.release();
            assertThat(statusOf(in)).isEqualTo(200);
            Await.within(PATIENCE, "the third delayed once the second ended", () -> scheduler.delays.size() == 2);
            scheduler.release();
            assertThat(statusOf(in)).isEqualTo(200);
        }
    }

    /** The next response on a connection: its status line and its body (by Content-Length; the servlet's are short). */
    private static String[] response(InputStream in) throws IOException {
        String status = line(in);
        int length = 0;
        for (String h = line(in); !h.isEmpty(); h = line(in)) {
            if (h.regionMatches(true, 0, "Content-Length:", 0, 15)) length = Integer.parseInt(h.substring(15).trim());
        }
        return new String[] {status, new String(in.readNBytes(length), StandardCharsets.US_ASCII)};
    }

    private static int statusOf(InputStream in) throws IOException {
        return Integer.parseInt(response(in)[0].substring(9, 12));
    }

    private static String line(InputStream in) throws IOException {
        StringBuilder b = new StringBuilder();
        for (int c = in.read(); c != '\n'; c = in.read()) {
            if (c < 0) throw new IOException("connection closed after " + b);
            if (c != '\r') b.append((char) c);
        }
        return b.toString();
    }

    /**
     * A route with a cost estimator is never delayed (its cost is known only once the body is read, after the
     * decision): short of units, the request is refused with its wait as without a throttle, charged nothing,
     * and a delay cannot make the body's cost be charged twice.
     */
    @Test
    void anEstimatedRouteIsRefusedNotDelayedAndChargedNothing() throws Exception {
        start(0, 10_000);
        HttpResponse<String> first = client.send(HttpRequest.newBuilder(server.uri("/priced")).header("X-Tenant-Id", "acme")
                .POST(HttpRequest.BodyPublishers.ofString("1")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(first.statusCode()).isEqualTo(200);
        long full = filter.control().tenantLimits("acme").get(0).nanosToFull();
        HttpResponse<String> refused = client.send(HttpRequest.newBuilder(server.uri("/priced")).header("X-Tenant-Id", "acme")
                .POST(HttpRequest.BodyPublishers.ofString("1")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.body()).contains("tenant_rate");
        assertThat(scheduler.delays).isEmpty();
        assertThat(filter.control().tenantLimits("acme").get(0).nanosToFull()).isEqualTo(full);
    }
}

package io.quotagate.filter;

import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
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

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The body of a cost-estimated route is read only after admission has a slot and units for the
 * route's minimum cost, and only for a bounded time: slow or unaffordable bodies cannot hold the
 * server's threads, on real Jetty with a small thread pool.
 */
class BodyAdmissionTest {
    static final String PLANS = """
            plans:
              llm:
                limits: [ { capacity: 50, refill: 1, period: 1s } ]
                concurrency: { gen: 2 }
              big:
                limits: [ { capacity: 10000, refill: 10000, period: 1s } ]
                concurrency: { gen: 2 }
            routes:
              - { name: items, methods: [GET], paths: ["/items/*"] }
              - { name: gen, methods: [POST], paths: ["/gen"], group: gen }
            tenants:
              assignments: { attacker: llm, victim: big }
              default-plan: llm
            """;
    static final Duration READ_TIMEOUT = Duration.ofMillis(400);

    private final AtomicInteger estimates = new AtomicInteger();
    private final AtomicBoolean sawInterrupt = new AtomicBoolean();
    private QuotaFilter filter;
    private JettyServer server;

    /** Answers 200; notes it if a thread ever arrives still interrupted by the body watchdog. */
    final class Answering extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            if (Thread.currentThread().isInterrupted()) sawInterrupt.set(true);
            req.getInputStream().readAllBytes();
            resp.getWriter().write("ok");
        }
    }

    @BeforeEach
    void start() throws Exception {
        filter = QuotaFilter.builder().plans(PlansFile.parse("body.yml", PLANS))
                .costEstimator("gen", (request, body) -> {
                    estimates.incrementAndGet();
                    return CostReconciliationTest.BODY_NUMBER.estimate(request, body);
                })
                .bodyReadTimeout(READ_TIMEOUT)
                .build();
        ServletContextHandler context = new ServletContextHandler();
        FilterHolder quota = new FilterHolder(filter);
        quota.setAsyncSupported(true);
        context.addFilter(quota, "/*", EnumSet.of(DispatcherType.REQUEST));
        context.addServlet(new ServletHolder(new Answering()), "/");
        server = JettyServer.startWithThreads(context, 12);
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
        assertThat(sawInterrupt).as("a request thread reached the application interrupted").isFalse();
    }

    private String post(String tenant, String body) throws IOException {
        return Http.raw(server.port(), "POST", "/gen", "X-Tenant-Id: " + tenant + "\r\nContent-Length: "
                + body.length() + "\r\n\r\n" + body).replaceFirst("(?s)\r\n\r\n$", "");
    }

    /** A connection that sent a POST head announcing {@code length} bytes and then {@code sent} of them. */
    private Socket slowBody(String tenant, int length, String sent) throws IOException {
        Socket s = new Socket("127.0.0.1", server.port());
        s.setSoTimeout(10_000);
        OutputStream out = s.getOutputStream();
        out.write(("POST /gen HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nX-Tenant-Id: " + tenant
                + "\r\nContent-Length: " + length + "\r\n\r\n" + sent).getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
        return s;
    }

    private static String response(Socket s) throws IOException {
        InputStream in = s.getInputStream();
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        try {
            in.transferTo(all);
        } catch (SocketTimeoutException e) {
            // keep what arrived
        }
        return all.toString(StandardCharsets.UTF_8);
    }

    @Test
    void aTenantWithoutUnitsHasItsBodyReadOnlyWhileItHoldsItsSlotAndPaysForAStall() throws Exception {
        assertThat(Http.status(post("attacker", "50"))).isEqualTo(200); // empties its bucket
        // refused for its units, it is read (to state the wait for its own cost) only in its 2 slots
        try (Socket a = slowBody("attacker", 1_000_000, ""); Socket b = slowBody("attacker", 1_000_000, "")) {
            Await.until("the attacker's two bodies hold their slots", () -> filter.control().concurrency().inflight("gen", "attacker") == 2);
            try (Socket third = slowBody("attacker", 10, "")) {
                String answer = response(third);
                assertThat(Http.status(answer)).isEqualTo(429);
                assertThat(answer).contains("\"reason\":\"concurrency\"");
            }
            assertThat(Http.status(response(a))).isEqualTo(408);
            assertThat(Http.status(response(b))).isEqualTo(408);
        }
        assertThat(estimates.get()).isOne(); // only the first, admitted, body was priced
        // each stalled body held a slot and cost the route's minimum, in debt (the bucket had refilled ~1)
        assertThat(filter.control().tenantLimits("attacker").get(0).remaining()).isZero();
        assertThat(filter.control().concurrency().inflight("gen", "attacker")).isZero();
    }

    @Test
    void aTenantWithoutASlotIsRefusedBeforeItsBodyIsRead() throws Exception {
        try (Socket a = slowBody("attacker", 10, "1"); Socket b = slowBody("attacker", 10, "1")) {
            Await.until("the attacker's two bodies hold their slots", () -> filter.control().concurrency().inflight("gen", "attacker") == 2);
            try (Socket third = slowBody("attacker", 10, "")) {
                String answer = response(third);
                assertThat(Http.status(answer)).isEqualTo(429);
                assertThat(answer).contains("\"reason\":\"concurrency\"");
            }
        }
        assertThat(estimates.get()).isZero();
    }

    @Test
    void aSlowBodyGets408AndKeepsItsReservedUnits() throws Exception {
        try (Socket s = slowBody("attacker", 10, "1")) {
            String answer = response(s);
            assertThat(Http.status(answer)).isEqualTo(408);
            assertThat(answer).contains("\"reason\":\"body_timeout\"");
        }
        // it held a slot for the whole read timeout: that costs the route's minimum (1 of 50)
        assertThat(filter.control().tenantLimits("attacker").get(0).remaining()).isEqualTo(49);
        assertThat(filter.control().concurrency().inflight("gen", "attacker")).isZero();
        // the threads that waited serve the next requests, uninterrupted (checked in stop())
        for (int i = 0; i < 20; i++) assertThat(Http.status(post("victim", "1"))).isEqualTo(200);
    }

    @Test
    void manySlowBodiesFromOneTenantLeaveTheServerToTheOthers() throws Exception {
        // 40 connections keep sending slow bodies for 3 s against a server of 12 threads
        long end = System.nanoTime() + Duration.ofSeconds(3).toNanos();
        List<Thread> attackers = new ArrayList<>();
        AtomicInteger refusedAtOnce = new AtomicInteger();
        for (int i = 0; i < 40; i++) {
            Thread t = new Thread(() -> {
                while (System.nanoTime() < end) {
                    try (Socket s = slowBody("attacker", 100, "1")) {
                        String answer = response(s);
                        if (!answer.isEmpty() && Http.status(answer) == 429) refusedAtOnce.incrementAndGet();
                    } catch (IOException e) {
                        // a refused or reset connection: try again
                    }
                }
            });
            t.start();
            attackers.add(t);
        }
        // the attack is under way: its bodies hold the attacker's slots, so its next request is refused at once
        Await.until("a refusal of the attacker's slow bodies", () -> refusedAtOnce.get() > 0);
        int ok = 0;
        for (int i = 0; i < 100; i++) {
            try (Socket s = new Socket("127.0.0.1", server.port())) {
                s.setSoTimeout(5_000); // generous: the point is that they are served, not how fast
                s.getOutputStream().write(("GET /items/" + i + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                        + "X-Tenant-Id: victim\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
                String answer = response(s);
                if (!answer.isEmpty() && Http.status(answer) == 200) ok++;
            }
        }
        for (Thread t : attackers) t.join();
        assertThat(ok).isEqualTo(100);
        assertThat(refusedAtOnce.get()).isPositive();
        assertThat(filter.control().concurrency().inflight("gen", "attacker")).isZero();
    }
}

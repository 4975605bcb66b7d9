package io.quotagate.filter;

import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.plans.PlansFile;
import jakarta.servlet.DispatcherType;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.EnumSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Guests cannot hold the guest pool's concurrency slots for free, nor more than their fair share of
 * them: the attack of issue 28 (4 guest ids x 2 connections sending chunked bodies that stall, again
 * and again) for 20 s, on real Jetty, behind a trusted proxy that names each client's address.
 */
class GuestSlotFairnessTest {
    static final String PLANS = """
            plans:
              free:
                limits: [ { capacity: 20, refill: 10, period: 10s } ]
                concurrency: { completions: 2 }
              pro:
                limits: [ { capacity: 200, refill: 100, period: 10s } ]
                concurrency: { completions: 4 }
            routes:
              - { name: completions, methods: [POST], paths: ["/v1/completions"], group: completions }
            groups:
              completions: { max-inflight: 40 }
            tenants:
              default-plan: free
              unknown: default
              trusted-proxies: [ 127.0.0.1 ]
              guests:
                limits: [ { name: guests, capacity: 200, refill: 600, period: 1m } ]
                concurrency: { completions: 8 }
              assignments: { acme: pro }
            """;
    private static final Duration ATTACK = Duration.ofSeconds(20);
    private static final String ATTACKER_ADDRESS = "10.0.0.66";

    private QuotaFilter filter;
    private JettyServer server;

    @BeforeEach
    void start() throws Exception {
        filter = QuotaFilter.builder().plans(PlansFile.parse("guests.yml", PLANS))
                .costEstimator("completions", CostReconciliationTest.BODY_NUMBER)
                .build(); // the default body read timeout, 5 s, as in the example app
        ServletContextHandler context = new ServletContextHandler();
        context.addFilter(new FilterHolder(filter), "/*", EnumSet.of(DispatcherType.REQUEST));
        context.addServlet(new ServletHolder(new JettyServer.OkServlet()), "/");
        server = JettyServer.start(context);
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    /** A chunked POST that sends one chunk of one byte and then nothing: the answer's status, or -1. */
    private int stall(String guest) {
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(15_000);
            OutputStream out = s.getOutputStream();
            out.write(("POST /v1/completions HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nX-Tenant-Id: " + guest
                    + "\r\nX-Forwarded-For: " + ATTACKER_ADDRESS + "\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            ByteArrayOutputStream answer = new ByteArrayOutputStream();
            s.getInputStream().transferTo(answer);
            return answer.size() < 12 ? -1 : Http.status(answer.toString(StandardCharsets.ISO_8859_1));
        } catch (IOException e) {
            return -1;
        }
    }

    private int complete(String tenant, String address) throws IOException {
        return Http.status(Http.raw(server.port(), "POST", "/v1/completions", "X-Tenant-Id: " + tenant
                + "\r\nX-Forwarded-For: " + address + "\r\nContent-Length: 1\r\n\r\n2"));
    }

    @Test
    void stalledGuestBodiesLeaveOtherGuestsTheirShareOfThePool() throws Exception {
        long end = System.nanoTime() + ATTACK.toNanos();
        Map<Integer, AtomicInteger> attackAnswers = new ConcurrentHashMap<>();
        AtomicInteger mostHeldByAttacker = new AtomicInteger();
        List<Thread> attackers = new ArrayList<>();
        for (int id = 0; id < 4; id++) {
            for (int connection = 0; connection < 2; connection++) {
                String guest = "mallory-" + id;
                Thread t = new Thread(() -> {
                    while (System.nanoTime() < end) {
                        int status = stall(guest);
                        attackAnswers.computeIfAbsent(status, k -> new AtomicInteger()).incrementAndGet();
                        if (status != 408) sleep(100); // refused at once: try again soon
                    }
                });
                t.start();
                attackers.add(t);
            }
        }
        Thread watcher = new Thread(() -> {
            while (System.nanoTime() < end) {
                int held = filter.control().concurrency().inflightByTenant("completions").entrySet().stream()
                        .filter(e -> e.getKey().startsWith("mallory-")).mapToInt(Map.Entry::getValue).sum();
                mostHeldByAttacker.accumulateAndGet(held, Math::max);
                sleep(20); // samples the slots held while the attack lasts
            }
        });
        watcher.start();
        Await.until("the attack holds slots of the pool", () -> mostHeldByAttacker.get() > 0);

        int visitorAdmitted = 0;
        int visitorSent = 0;
        int acmeAdmitted = 0;
        int acmeSent = 0;
        while (System.nanoTime() < end - Duration.ofSeconds(1).toNanos()) {
            visitorSent++;
            if (complete("visitor", "10.0.0.7") == 200) visitorAdmitted++;
            for (int i = 0; i < 2; i++) {
                acmeSent++;
                if (complete("acme", "10.0.0.8") == 200) acmeAdmitted++;
            }
            sleep(2_000); // paces the visitor and acme while the attack lasts: not a wait
        }
        for (Thread t : attackers) t.join();
        watcher.join();

        assertThat(attackAnswers.getOrDefault(408, new AtomicInteger()).get()).as("the attack stalled bodies: %s",
                attackAnswers).isPositive();
        assertThat(visitorSent).isGreaterThanOrEqualTo(9);
        assertThat(visitorAdmitted).as("another guest's completions admitted, of %d; attack answers %s", visitorSent,
                attackAnswers).isGreaterThanOrEqualTo((int) Math.ceil(visitorSent * 0.8));
        assertThat(acmeAdmitted).as("an assigned tenant is unaffected").isEqualTo(acmeSent);
        // one client address holds at most half of the pool's 8 slots while others want them
        assertThat(mostHeldByAttacker.get()).isBetween(1, 4);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

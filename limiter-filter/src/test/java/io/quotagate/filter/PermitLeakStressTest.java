package io.quotagate.filter;

import io.quotagate.filter.status.ConcurrencyView;
import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.plans.PlansFile;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.junit.jupiter.api.Test;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Permits never leak and caps are never exceeded: {@value #DEFAULT_REQUESTS} requests (override with
 * {@code -Dquotagate.stress.requests=N}) on real Jetty over many keep-alive connections, mixing
 * synchronous and asynchronous handlers, thrown exceptions, async timeouts, async handlers that
 * throw, and connections the client aborts (FIN or RST) while their request runs; in a fail-fast
 * group and a queued one, with a tenant whose token bucket refuses most requests after the permit
 * was taken. The application counts its own running requests inside the handler.
 */
class PermitLeakStressTest {
    static final int DEFAULT_REQUESTS = 100_000;
    static final int CONNECTIONS = Integer.getInteger("quotagate.stress.connections", 32);
    static final String[] GROUPS = {"fast", "queued"};
    static final String[] TENANTS = {"t0", "t1", "t2", "t3"};
    /** Caps per tenant: plan std (t0-t2) and tiny (t3), by group; and per group across tenants. */
    static final Map<String, Integer> STD_CAPS = Map.of("fast", 4, "queued", 3);
    static final Map<String, Integer> TINY_CAPS = Map.of("fast", 5, "queued", 4);
    static final Map<String, Integer> GROUP_CAPS = Map.of("fast", 12, "queued", 8);

    static final String PLANS = """
            plans:
              std:
                limits: [ { capacity: 100000000, refill: 100000000, period: 1s } ]
                concurrency: { fast: 4, queued: 3 }
              tiny:
                limits: [ { capacity: 5, refill: 20, period: 1s } ]
                concurrency: { fast: 5, queued: 4 }
            routes:
              - { name: fast, paths: ["/fast/*"], group: fast }
              - { name: queued, paths: ["/queued/*"], group: queued }
            groups:
              fast: { max-inflight: 12 }
              queued: { max-inflight: 8, queue: { size: 6, max-wait: 20ms } }
            tenants:
              default-plan: std
              assignments: { t3: tiny }
            """;

    enum Behaviour {
        SYNC(30), THROW(8), ASYNC(30), ASYNC_NOW(8), ASYNC_THROW(5), TIMEOUT(4), ABORT_FIN(2), ABORT_RST(2);

        final int weight;

        Behaviour(int weight) {
            this.weight = weight;
        }

        String path() {
            return name().toLowerCase().replace('_', '-');
        }
    }

    /** What the application sees: requests running now, and the most ever at once. */
    static final class Running {
        final AtomicInteger now = new AtomicInteger();
        final AtomicInteger max = new AtomicInteger();

        void enter() {
            int n = now.incrementAndGet();
            max.accumulateAndGet(n, Math::max);
        }

        void leave() {
            now.decrementAndGet();
        }
    }

    private final Map<String, Running> perTenant = new ConcurrentHashMap<>(); // "group/tenant"
    private final Map<String, Running> perGroup = new ConcurrentHashMap<>();
    private final ScheduledExecutorService work = Executors.newScheduledThreadPool(2);
    /** Async-timeout requests the application had to end itself because Jetty's timeout never fired. */
    static final java.util.concurrent.atomic.LongAdder LATE_ENDS = new java.util.concurrent.atomic.LongAdder();

    /** The application: tiny handlers that count themselves in and out. */
    final class Application extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            String[] parts = req.getRequestURI().split("/"); // "", group, behaviour
            String group = parts[1];
            Running tenant = perTenant.computeIfAbsent(group + "/" + req.getHeader("X-Tenant-Id"), k -> new Running());
            Running all = perGroup.computeIfAbsent(group, k -> new Running());
            tenant.enter();
            all.enter();
            Runnable leave = () -> {
                all.leave();
                tenant.leave();
            };
            switch (parts[2]) {
                case "sync" -> {
                    try {
                        ok(resp);
                    } finally {
                        leave.run();
                    }
                }
                case "throw" -> {
                    leave.run();
                    throw new IllegalStateException("expected by the stress test");
                }
                case "async", "abort-fin", "abort-rst" -> {
                    AsyncContext async = req.startAsync();
                    long micros = parts[2].equals("async") ? ThreadLocalRandomMicros.next(2000) : 5000;
                    work.schedule(() -> finish(async, leave), micros, TimeUnit.MICROSECONDS);
                }
                case "async-now" -> {
                    AsyncContext async = req.startAsync();
                    work.execute(() -> finish(async, leave));
                }
                case "async-throw" -> {
                    req.startAsync();
                    leave.run();
                    throw new IllegalStateException("expected by the stress test (after startAsync)");
                }
                case "timeout" -> {
                    AsyncContext async = req.startAsync();
                    async.setTimeout(25);
                    // Under heavy load Jetty 12.1 has, rarely, never fired a 25 ms async timeout (seen at
                    // 32-64 connections; the request simply stayed running, its permit rightly held).
                    // So that such a request cannot hang the test, the application ends it itself after
                    // 2 s if the container has neither timed it out nor completed it; the permit must
                    // then come back through onComplete like any other. Such late ends are counted.
                    AtomicBoolean ended = new AtomicBoolean();
                    work.schedule(() -> {
                        if (ended.compareAndSet(false, true)) {
                            LATE_ENDS.increment();
                            leave.run();
                            async.complete();
                        }
                    }, 2, TimeUnit.SECONDS);
                    async.addListener(new AsyncListener() {
                        @Override
                        public void onTimeout(AsyncEvent event) {
                            // the application gives up; the container answers 500
                            if (ended.compareAndSet(false, true)) leave.run();
                        }

                        @Override
                        public void onComplete(AsyncEvent event) {
                            ended.set(true);
                        }

                        @Override
                        public void onError(AsyncEvent event) {
                        }

                        @Override
                        public void onStartAsync(AsyncEvent event) {
                        }
                    });
                }
                default -> throw new IllegalArgumentException(parts[2]);
            }
        }

        private void finish(AsyncContext async, Runnable leave) {
            leave.run();
            try {
                ok((HttpServletResponse) async.getResponse());
            } catch (IOException | RuntimeException clientGone) {
                // an aborted connection; the request still ends with complete()
            } finally {
                async.complete();
            }
        }

        private static void ok(HttpServletResponse resp) throws IOException {
            resp.setContentType("text/plain");
            resp.setContentLength(2);
            resp.getOutputStream().write(OK);
        }
    }

    static final byte[] OK = {'o', 'k'};

    /** Random delays for the scheduled completions, without sharing one generator across threads. */
    static final class ThreadLocalRandomMicros {
        static long next(int bound) {
            return java.util.concurrent.ThreadLocalRandom.current().nextInt(bound);
        }
    }

    @Test
    void noPermitLeaksAndNoCapIsExceededUnderMixedLoad() throws Exception {
        int requests = Integer.getInteger("quotagate.stress.requests", DEFAULT_REQUESTS);
        QuotaFilter filter = QuotaFilter.builder().plans(PlansFile.parse("stress.yml", PLANS)).build();
        ConcurrencyView view = filter.control().concurrency();
        ServletContextHandler context = new ServletContextHandler();
        FilterHolder holder = new FilterHolder(filter);
        holder.setAsyncSupported(true);
        context.addFilter(holder, "/*", EnumSet.of(DispatcherType.REQUEST));
        ServletHolder app = new ServletHolder(new Application());
        app.setAsyncSupported(true);
        context.addServlet(app, "/");

        Outcomes outcomes = new Outcomes();
        try (JettyServer server = JettyServer.start(context)) {
            ExecutorService clients = Executors.newFixedThreadPool(CONNECTIONS);
            AtomicInteger budget = new AtomicInteger(requests);
            List<Future<?>> done = new ArrayList<>();
            for (int c = 0; c < CONNECTIONS; c++) {
                long seed = c;
                done.add(clients.submit(() -> {
                    drive(server.port(), budget, new SplittableRandom(seed), outcomes);
                    return null;
                }));
            }
            try {
                for (Future<?> f : done) f.get(5, TimeUnit.MINUTES);
            } catch (java.util.concurrent.ExecutionException failed) {
                dumpThreads(view);
                throw failed;
            }
            clients.shutdown();

            // the last async completions and aborted requests end shortly after the clients stop
            Await.until("every permit released and every queue empty", () -> java.util.Arrays.stream(GROUPS)
                            .map(g -> g + ": " + view.inflight(g) + " in flight, " + view.queued(g) + " queued").toList(),
                    groups -> groups.stream().allMatch(g -> g.endsWith(": 0 in flight, 0 queued")));
            for (String g : GROUPS) {
                assertThat(view.inflight(g)).as("permits in flight in %s", g).isZero();
                assertThat(view.queued(g)).as("queued in %s", g).isZero();
                assertThat(view.inflightByTenant(g)).as("tenant entries left in %s", g).isEmpty();
                assertThat(view.queuedByTenant(g)).isEmpty();
            }
        } finally {
            work.shutdownNow();
        }

        assertThat(outcomes.sent.sum()).isEqualTo(requests);
        perTenant.forEach((key, running) -> {
            String group = key.substring(0, key.indexOf('/'));
            int cap = (key.endsWith("/t3") ? TINY_CAPS : STD_CAPS).get(group);
            assertThat(running.now.get()).as("application still running %s", key).isZero();
            assertThat(running.max.get()).as("most in flight at once for %s (cap %d)", key, cap).isBetween(1, cap);
        });
        perGroup.forEach((group, running) ->
                assertThat(running.max.get()).as("most in flight at once in group %s", group).isLessThanOrEqualTo(GROUP_CAPS.get(group)));
        // the test must be able to fail: the caps were reached and every path was taken
        assertThat(perTenant.get("fast/t0").max.get()).isEqualTo(STD_CAPS.get("fast"));
        assertThat(perGroup.get("fast").max.get()).isEqualTo(GROUP_CAPS.get("fast"));
        assertThat(outcomes.status.get(200).sum()).isPositive();
        assertThat(outcomes.status.get(500).sum()).as("exceptions and async timeouts").isPositive();
        assertThat(outcomes.concurrencyRefusals.sum()).isPositive();
        assertThat(outcomes.rateRefusals.sum()).as("bucket refusals after the permit was taken").isPositive();
        assertThat(outcomes.aborted.sum()).isPositive();
        // a rare Jetty stall is tolerated; a systematic one (or a missed release) is not
        assertThat(LATE_ENDS.sum()).as("async timeouts Jetty never fired").isLessThanOrEqualTo(5);
        System.out.printf("stress: %d requests: %s; async timeouts Jetty never fired (ended by the app): %d%n",
                requests, outcomes, LATE_ENDS.sum());
    }

    /** On a failure, leaves the server's threads and counts in target/ to see what hung. */
    private void dumpThreads(ConcurrencyView view) throws IOException {
        StringBuilder b = new StringBuilder();
        for (String g : GROUPS) {
            b.append(g).append(": inflight=").append(view.inflightByTenant(g)).append(" queued=")
                    .append(view.queuedByTenant(g)).append('\n');
        }
        perTenant.forEach((k, r) -> b.append("app ").append(k).append(" running=").append(r.now).append('\n'));
        Thread.getAllStackTraces().forEach((t, stack) -> {
            b.append('\n').append(t.getName()).append(' ').append(t.getState()).append('\n');
            for (StackTraceElement e : stack) b.append("    at ").append(e).append('\n');
        });
        java.nio.file.Files.writeString(java.nio.file.Path.of("target", "stress-failure.txt"), b);
    }

    static final class Outcomes {
        final LongAdder sent = new LongAdder();
        final LongAdder aborted = new LongAdder();
        final LongAdder concurrencyRefusals = new LongAdder();
        final LongAdder rateRefusals = new LongAdder();
        final Map<Integer, LongAdder> status = new ConcurrentHashMap<>(Map.of(200, new LongAdder(), 500, new LongAdder()));

        @Override
        public String toString() {
            return "sent=" + sent + " aborted=" + aborted + " status=" + status + " 429-concurrency=" + concurrencyRefusals
                    + " 429-rate=" + rateRefusals;
        }
    }

    /** One client connection: keep-alive requests until the shared budget is spent. */
    private static void drive(int port, AtomicInteger budget, SplittableRandom random, Outcomes outcomes) throws IOException {
        int totalWeight = 0;
        for (Behaviour b : Behaviour.values()) totalWeight += b.weight;
        Connection conn = null;
        try {
            while (budget.getAndDecrement() > 0) {
                outcomes.sent.increment();
                int pick = random.nextInt(totalWeight);
                Behaviour behaviour = null;
                for (Behaviour b : Behaviour.values()) {
                    if ((pick -= b.weight) < 0) {
                        behaviour = b;
                        break;
                    }
                }
                String group = GROUPS[random.nextInt(GROUPS.length)];
                String tenant = TENANTS[random.nextInt(TENANTS.length)];
                byte[] request = ("GET /" + group + "/" + behaviour.path() + " HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Tenant-Id: "
                        + tenant + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1);
                if (behaviour == Behaviour.ABORT_FIN || behaviour == Behaviour.ABORT_RST) {
                    try (Socket s = new Socket("127.0.0.1", port)) {
                        if (behaviour == Behaviour.ABORT_RST) s.setSoLinger(true, 0); // close with a reset
                        s.getOutputStream().write(request);
                        s.getOutputStream().flush();
                    }
                    outcomes.aborted.increment();
                    continue;
                }
                if (conn == null) conn = new Connection(port);
                Response r;
                try {
                    r = conn.exchange(request);
                } catch (IOException e) {
                    throw new IOException("GET /" + group + "/" + behaviour.path() + " as " + tenant + ": " + e, e);
                }
                outcomes.status.computeIfAbsent(r.status, k -> new LongAdder()).increment();
                if (r.status == 429) {
                    if (r.body.contains("\"reason\":\"concurrency\"")) outcomes.concurrencyRefusals.increment();
                    else if (r.body.contains("\"reason\":\"tenant_rate\"")) outcomes.rateRefusals.increment();
                    else throw new AssertionError("unexpected 429 body " + r.body);
                }
                if (r.close) {
                    conn.close();
                    conn = null;
                }
            }
        } finally {
            if (conn != null) conn.close();
        }
    }

    record Response(int status, String body, boolean close) {
    }

    /** A minimal HTTP/1.1 keep-alive client: Content-Length and chunked bodies. */
    static final class Connection {
        private final Socket socket;
        private final OutputStream out;
        private final InputStream in;

        Connection(int port) throws IOException {
            socket = new Socket("127.0.0.1", port);
            socket.setSoTimeout(10_000);
            socket.setTcpNoDelay(true);
            out = socket.getOutputStream();
            in = new BufferedInputStream(socket.getInputStream(), 8192);
        }

        Response exchange(byte[] request) throws IOException {
            out.write(request);
            out.flush();
            String statusLine = line();
            int status = Integer.parseInt(statusLine.substring(9, 12));
            int length = -1;
            boolean chunked = false;
            boolean close = false;
            for (String h; !(h = line()).isEmpty(); ) {
                int colon = h.indexOf(':');
                String name = h.substring(0, colon).trim().toLowerCase();
                String value = h.substring(colon + 1).trim().toLowerCase();
                switch (name) {
                    case "content-length" -> length = Integer.parseInt(value);
                    case "transfer-encoding" -> chunked = value.contains("chunked");
                    case "connection" -> close = value.contains("close");
                    default -> { }
                }
            }
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            if (chunked) {
                for (int size; (size = Integer.parseInt(line().split(";")[0].trim(), 16)) > 0; ) {
                    body.write(in.readNBytes(size));
                    line();
                }
                while (!line().isEmpty()) { } // trailers
            } else if (length >= 0) {
                body.write(in.readNBytes(length));
            } else {
                in.transferTo(body);
                close = true;
            }
            return new Response(status, body.toString(StandardCharsets.UTF_8), close);
        }

        private String line() throws IOException {
            StringBuilder b = new StringBuilder(64);
            for (int c; (c = in.read()) != '\n'; ) {
                if (c < 0) throw new IOException("connection closed by the server");
                if (c != '\r') b.append((char) c);
            }
            return b.toString();
        }

        void close() throws IOException {
            socket.close();
        }
    }
}

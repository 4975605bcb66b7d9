package io.quotagate.loadtest.scenario;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.status.ConcurrencyView;
import io.quotagate.plans.PlansFile;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.HdrHistogram.Histogram;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.IntSupplier;

/**
 * {@code scenario slow-backend}: a heavy report route whose backend slows down 5× for a while, behind
 * an adaptive concurrency group and, beside it on the same server and the same machine, behind a
 * fixed cap, both fed the same open-loop load over real HTTP.
 *
 * <p>The backend is what a report endpoint usually waits on: a pool of {@value #WORKERS} workers
 * (a database's connections) serving each report in {@code L} ms, {@code 5L} during the slowdown.
 * A request that finds every worker busy waits for one, so its latency is the wait plus the
 * service time: once more requests are let in than the workers can serve, the surplus only queues.
 * Each route has its own backend pool. Four tenants send to each route: one busy (half the load) and
 * three quiet, each on an even schedule of requests, at most {@value #MAX_OUTSTANDING}
 * outstanding per tenant and route (a request the schedule cannot send is counted as skipped).
 *
 * <p>The story (durations ÷ {@code --speed}; latencies stay real, they are what the limit reads):
 * {@code normal} 60 s at L, {@code slow} 60 s at 5L, {@code recovered} 60 s at L.
 */
final class SlowBackend {
    static final String NAME = "slow-backend";
    static final int WORKERS = 8;
    static final int MAX_OUTSTANDING = 64;
    static final String[] TENANTS = {"busy", "quiet-1", "quiet-2", "quiet-3"};
    /** Share of the load each tenant sends. */
    static final double[] SHARES = {0.5, 1 / 6.0, 1 / 6.0, 1 / 6.0};
    static final String[] PHASES = {"normal", "slow (5x)", "recovered"};
    static final String[] GROUPS = {"adaptive", "fixed"};
    static final int WARM_UP_SECONDS = 3;

    private final double speed;
    private final long serviceMillis;
    private final double rate;
    private final int fixedCap;
    private final String algorithm;
    private final PrintStream out;
    private final boolean quiet;

    /**
     * @param speed         phases last 60 s ÷ speed
     * @param serviceMillis L: a report's service time in the normal phases
     * @param rate          requests per second sent to each route, all tenants together
     * @param fixedCap      the fixed group's max-inflight
     * @param algorithm     gradient2 or vegas
     */
    SlowBackend(double speed, long serviceMillis, double rate, int fixedCap, String algorithm, PrintStream out, boolean quiet) {
        this.speed = speed;
        this.serviceMillis = serviceMillis;
        this.rate = rate;
        this.fixedCap = fixedCap;
        this.algorithm = algorithm;
        this.out = out;
        this.quiet = quiet;
    }

    String plansYaml() {
        return """
                plans:
                  pro:
                    limits: [ { capacity: 1000000, refill: 1000000, period: 1s } ]
                    concurrency: { adaptive: 32, fixed: 32 }
                routes:
                  - { name: adaptive-reports, paths: ["/adaptive/*"], group: adaptive }
                  - { name: fixed-reports, paths: ["/fixed/*"], group: fixed }
                groups:
                  adaptive: { adaptive: { algorithm: %s, initial: 20, min: 4, max: 64 } }
                  fixed: { max-inflight: %d }
                tenants:
                  default-plan: pro
                """.formatted(algorithm, fixedCap);
    }

    /** The backend of one route: {@link #WORKERS} workers, each report taking the current service time. */
    static final class Backend extends HttpServlet {
        private static final long serialVersionUID = 1L;
        final transient Semaphore workers = new Semaphore(WORKERS, true);
        final AtomicLong serviceMillis = new AtomicLong();

        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            try {
                workers.acquire();
                try {
                    Thread.sleep(serviceMillis.get());
                } finally {
                    workers.release();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                resp.sendError(500);
                return;
            }
            resp.getWriter().write("report");
        }
    }

    /** What one route's clients saw in one phase. */
    static final class PhaseFigures {
        final Histogram latency = new Histogram(TimeUnit.MINUTES.toMicros(2), 3);
        final AtomicLong admitted = new AtomicLong();
        final AtomicLong refused429 = new AtomicLong();
        final AtomicLong refused503 = new AtomicLong();
        final AtomicLong other = new AtomicLong();
        final AtomicLong skipped = new AtomicLong();
        final AtomicLong busyAdmitted = new AtomicLong();
        final AtomicLong quietAdmitted = new AtomicLong();
        final AtomicLong quietRefused = new AtomicLong();
        /** When the last request refused with 429 in this phase was answered (System.nanoTime), 0 if none. */
        final AtomicLong last429 = new AtomicLong();

        synchronized void record(long micros) {
            latency.recordValue(Math.min(micros, latency.getHighestTrackableValue()));
        }

        synchronized double p(double percentile) {
            return latency.getTotalCount() == 0 ? Double.NaN : latency.getValueAtPercentile(percentile) / 1000.0;
        }
    }

    int run() throws Exception {
        long phaseNanos = (long) (TimeUnit.SECONDS.toNanos(60) / speed);
        Backend[] backends = {new Backend(), new Backend()};
        for (Backend b : backends) b.serviceMillis.set(serviceMillis);
        QuotaFilter filter = QuotaFilter.builder().plans(PlansFile.parse("scenario " + NAME, plansYaml())).build();
        ConcurrencyView view = filter.control().concurrency();
        // the filter logs each rejection (rate-limited) at INFO: noise in a run that provokes them on purpose
        java.util.logging.Logger.getLogger("io.quotagate").setLevel(java.util.logging.Level.WARNING);
        Server server = started(filter, backends);
        String base = "http://127.0.0.1:" + ((ServerConnector) server.getConnectors()[0]).getLocalPort();

        out.printf(Locale.ROOT, "scenario %s: report backend of %d workers, %d ms per report (%d ms in the slow phase), "
                        + "%.0f requests/s to each route from %d tenants (busy: half), phases of %s (speed %s): "
                        + "adaptive group (%s, initial 20, min 4, max 64) beside a fixed max-inflight of %d%n",
                NAME, WORKERS, serviceMillis, 5 * serviceMillis, rate, TENANTS.length,
                ModeRun.mmss(phaseNanos), Reports.fmt(speed), algorithm, fixedCap);

        // one more column: the warm-up before the story (connections, JIT), not reported
        PhaseFigures[][] figures = new PhaseFigures[GROUPS.length][PHASES.length + 1];
        for (PhaseFigures[] row : figures) for (int p = 0; p <= PHASES.length; p++) row[p] = new PhaseFigures();
        AtomicInteger phase = new AtomicInteger(PHASES.length);
        int samplesPerSecond = 4;
        int totalSamples = (int) Math.ceil(3 * phaseNanos / 1e9 * samplesPerSecond) + 1;
        AtomicLongArray limitOverTime = new AtomicLongArray(totalSamples);
        for (int i = 0; i < totalSamples; i++) limitOverTime.set(i, -1);

        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .executor(Executors.newFixedThreadPool(8)).connectTimeout(Duration.ofSeconds(5)).build();
        AtomicInteger[][] outstanding = new AtomicInteger[GROUPS.length][TENANTS.length];
        for (AtomicInteger[] row : outstanding) for (int t = 0; t < TENANTS.length; t++) row[t] = new AtomicInteger();
        ScheduledExecutorService ticks = Executors.newScheduledThreadPool(2);
        long start;
        try {
            sendLoad(ticks, phase::get, (g, t, p) -> send(client, base, g, t, p, figures, outstanding));
            warmUp(phase, outstanding);
            start = System.nanoTime();
            // the limit, four times a second
            ticks.scheduleAtFixedRate(() -> {
                int i = (int) ((System.nanoTime() - start) / (1_000_000_000L / samplesPerSecond));
                if (i < totalSamples) limitOverTime.set(i, view.adaptiveLimit("adaptive").orElse(-1));
            }, 0, 1000 / samplesPerSecond, TimeUnit.MILLISECONDS);
            runPhases(start, phaseNanos, backends, phase, view);
            phase.set(-1); // no more sends; let the outstanding ones end (their figures count in their phase)
            long drainUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (System.nanoTime() < drainUntil && outstandingTotal(outstanding) > 0) TimeUnit.MILLISECONDS.sleep(50);
        } finally {
            ticks.shutdownNow();
            server.stop();
            filter.destroy();
        }
        printFigures(figures, limitOverTime, samplesPerSecond, phaseNanos, start + 2 * phaseNanos);
        return 0;
    }

    /** A Jetty server on a free port of 127.0.0.1, started: the filter before the two routes' backends. */
    private static Server started(QuotaFilter filter, Backend[] backends) throws Exception {
        QueuedThreadPool threads = new QueuedThreadPool(400, 8);
        threads.setName("slow-backend");
        Server server = new Server(threads);
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        ServletContextHandler context = new ServletContextHandler();
        context.addFilter(new FilterHolder(filter), "/*", EnumSet.of(DispatcherType.REQUEST));
        context.addServlet(new ServletHolder(backends[0]), "/adaptive/*");
        context.addServlet(new ServletHolder(backends[1]), "/fixed/*");
        server.setHandler(context);
        server.start();
        return server;
    }

    /** Sends one request of group {@code g} for tenant {@code t}, counted in phase {@code p}. */
    @FunctionalInterface
    private interface Sender {
        void send(int g, int t, int p);
    }

    /** The load: each tenant's requests on an even schedule, the same for both routes; none while the phase is < 0. */
    private void sendLoad(ScheduledExecutorService ticks, IntSupplier phase, Sender sender) {
        long tickMicros = 10_000;
        double[] due = new double[TENANTS.length];
        ticks.scheduleAtFixedRate(new Runnable() {
            long last = System.nanoTime();

            @Override
            public void run() {
                long now = System.nanoTime();
                double seconds = (now - last) / 1e9;
                last = now;
                int p = phase.getAsInt();
                if (p < 0) return;
                for (int t = 0; t < TENANTS.length; t++) {
                    due[t] += rate * SHARES[t] * seconds;
                    while (due[t] >= 1) {
                        due[t] -= 1;
                        for (int g = 0; g < GROUPS.length; g++) sender.send(g, t, p);
                    }
                }
            }
        }, 0, tickMicros, TimeUnit.MICROSECONDS);
    }

    /** The warm-up (connections, JIT), then the load paused until its requests have ended. */
    private void warmUp(AtomicInteger phase, AtomicInteger[][] outstanding) throws InterruptedException {
        if (!quiet) out.printf(Locale.ROOT, "  warming up for %d s (connections, JIT; not counted)%n", WARM_UP_SECONDS);
        TimeUnit.SECONDS.sleep(WARM_UP_SECONDS);
        phase.set(-1); // pause the load until the warm-up's requests have ended
        long warmEnd = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < warmEnd && outstandingTotal(outstanding) > 0) TimeUnit.MILLISECONDS.sleep(20);
    }

    /** The three phases from {@code start}: the backend slow (5×) in the second; progress every 10 s unless quiet. */
    private void runPhases(long start, long phaseNanos, Backend[] backends, AtomicInteger phase, ConcurrencyView view)
            throws InterruptedException {
        for (int p = 0; p < PHASES.length; p++) {
            long service = p == 1 ? 5 * serviceMillis : serviceMillis;
            for (Backend b : backends) b.serviceMillis.set(service);
            phase.set(p);
            if (!quiet) out.printf(Locale.ROOT, "  %s: %s, backend %d ms per report%n", ModeRun.mmss(System.nanoTime() - start),
                    PHASES[p], service);
            long end = start + (p + 1) * phaseNanos;
            long left;
            while ((left = end - System.nanoTime()) > 0) {
                TimeUnit.NANOSECONDS.sleep(Math.min(left, TimeUnit.SECONDS.toNanos(10)));
                if (!quiet && end - System.nanoTime() > 0) {
                    out.printf(Locale.ROOT, "  %s: adaptive limit %d, in flight adaptive %d / fixed %d%n",
                            ModeRun.mmss(System.nanoTime() - start), view.adaptiveLimit("adaptive").orElse(-1),
                            view.inflight("adaptive"), view.inflight("fixed"));
                }
            }
        }
    }

    /** The phases' table, the adaptive limit's summary, and each group's last 429 after {@code recovered}. */
    private void printFigures(PhaseFigures[][] figures, AtomicLongArray limitOverTime, int samplesPerSecond,
                              long phaseNanos, long recovered) {
        out.println();
        out.print(table(figures, phaseNanos));
        out.println();
        out.print(limitSummary(limitOverTime, samplesPerSecond, phaseNanos));
        for (int g = 0; g < GROUPS.length; g++) {
            long last = figures[g][2].last429.get();
            out.printf(Locale.ROOT, "%s: %s%n", GROUPS[g], last == 0 ? "no 429 after the backend recovered"
                    : String.format(Locale.ROOT, "last 429 %.2f s after the backend recovered", (last - recovered) / 1e9));
        }
    }

    private static int outstandingTotal(AtomicInteger[][] outstanding) {
        int n = 0;
        for (AtomicInteger[] row : outstanding) for (AtomicInteger a : row) n += a.get();
        return n;
    }

    private static void send(HttpClient client, String base, int g, int t, int p, PhaseFigures[][] figures,
                             AtomicInteger[][] outstanding) {
        PhaseFigures f = figures[g][p];
        if (outstanding[g][t].incrementAndGet() > MAX_OUTSTANDING) {
            outstanding[g][t].decrementAndGet();
            f.skipped.incrementAndGet();
            return;
        }
        HttpRequest request = HttpRequest.newBuilder(URI.create(base + "/" + GROUPS[g] + "/report"))
                .header("X-Tenant-Id", TENANTS[t]).timeout(Duration.ofSeconds(60)).GET().build();
        long sent = System.nanoTime();
        client.sendAsync(request, HttpResponse.BodyHandlers.discarding()).whenComplete((r, e) -> {
            outstanding[g][t].decrementAndGet();
            if (e != null) {
                f.other.incrementAndGet();
                return;
            }
            switch (r.statusCode()) {
                case 200 -> {
                    f.admitted.incrementAndGet();
                    f.record((System.nanoTime() - sent) / 1000);
                    (t == 0 ? f.busyAdmitted : f.quietAdmitted).incrementAndGet();
                }
                case 429 -> {
                    f.refused429.incrementAndGet();
                    f.last429.accumulateAndGet(System.nanoTime(), Math::max);
                    if (t > 0) f.quietRefused.incrementAndGet();
                }
                case 503 -> f.refused503.incrementAndGet();
                default -> f.other.incrementAndGet();
            }
        });
    }

    private static String table(PhaseFigures[][] figures, long phaseNanos) {
        double seconds = phaseNanos / 1e9;
        StringBuilder sb = new StringBuilder();
        sb.append("| Group | Phase | Admitted/s | p50 ms | p99 ms | 429s | 503s | Quiet tenants' share of admitted | Other failures | Skipped (client at 64 outstanding) |\n");
        sb.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (int g = 0; g < GROUPS.length; g++) {
            for (int p = 0; p < PHASES.length; p++) {
                PhaseFigures f = figures[g][p];
                long admitted = f.admitted.get();
                sb.append(String.format(Locale.ROOT, "| %s | %s | %.1f | %.0f | %.0f | %,d | %,d | %s | %,d | %,d |%n",
                        GROUPS[g], PHASES[p], admitted / seconds, f.p(50), f.p(99), f.refused429.get(), f.refused503.get(),
                        admitted == 0 ? "-" : String.format(Locale.ROOT, "%.0f%%", 100.0 * f.quietAdmitted.get() / admitted),
                        f.other.get(), f.skipped.get()));
            }
        }
        return sb.toString();
    }

    /** Min/max of the adaptive limit per phase, how long it took to fall after the slowdown and to climb back after it. */
    static String limitSummary(AtomicLongArray limit, int perSecond, long phaseNanos) {
        int perPhase = (int) (phaseNanos / 1e9 * perSecond);
        StringBuilder sb = new StringBuilder();
        sb.append("| Adaptive limit | min | max | at the end |\n|---|---:|---:|---:|\n");
        long[] endOf = new long[PHASES.length];
        for (int p = 0; p < PHASES.length; p++) {
            long min = Long.MAX_VALUE;
            long max = Long.MIN_VALUE;
            long last = -1;
            for (int i = p * perPhase; i < Math.min(limit.length(), (p + 1) * perPhase); i++) {
                long v = limit.get(i);
                if (v < 0) continue;
                min = Math.min(min, v);
                max = Math.max(max, v);
                last = v;
            }
            endOf[p] = last;
            sb.append(String.format(Locale.ROOT, "| %s | %d | %d | %d |%n", PHASES[p], min, max, last));
        }
        long before = endOf[0];
        // began to fall: the first sample of the slow phase below the limit it started with; fell: at or below half of it
        double began = Double.NaN;
        double fell = Double.NaN;
        for (int i = perPhase; i < Math.min(limit.length(), 2 * perPhase); i++) {
            long v = limit.get(i);
            if (v >= 0 && v < before && Double.isNaN(began)) began = (i - perPhase) / (double) perSecond;
            if (v >= 0 && v <= before / 2) {
                fell = (i - perPhase) / (double) perSecond;
                break;
            }
        }
        // climbed back: the first sample of the recovered phase at the highest value the limit reaches in it
        // (it climbs only while requests press against it: Gradient2 and Vegas do not grow an idle limit)
        long top = -1;
        double climbed = Double.NaN;
        for (int i = 2 * perPhase; i < Math.min(limit.length(), 3 * perPhase); i++) {
            long v = limit.get(i);
            if (v > top) {
                top = v;
                climbed = (i - 2 * perPhase) / (double) perSecond;
            }
        }
        sb.append(String.format(Locale.ROOT, "limit before the slowdown %d; it began to fall %s and was down to half of it %s "
                        + "after the slowdown began; after the backend recovered it climbed from %d to %d, reached %s after "
                        + "(limit sampled every %d ms)%n",
                before, Double.isNaN(began) ? "never (within the phase)" : String.format(Locale.ROOT, "%.2f s", began),
                Double.isNaN(fell) ? "never (within the phase)" : String.format(Locale.ROOT, "%.2f s", fell),
                endOf[1], top, String.format(Locale.ROOT, "%.2f s", climbed), 1000 / perSecond));
        return sb.toString();
    }
}

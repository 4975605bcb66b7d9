package io.quotagate.loadtest.scenario;

import io.quotagate.loadtest.client.Aimd;
import io.quotagate.loadtest.client.ClientLimiter;
import io.quotagate.loadtest.client.Cubic;
import io.quotagate.loadtest.client.FixedRate;
import io.quotagate.loadtest.client.PublishedPacing;
import io.quotagate.loadtest.client.RateController;
import io.quotagate.loadtest.client.RateLimitFields;

import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.PriorityBlockingQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Runs one mode of a scenario against one server: the workers (each an instance of the same
 * client, sharing one instance count), the neighbour, and the per-second bookkeeping.
 *
 * <p>One driver thread owns the arrivals (each worker wants {@code demand} units per minute,
 * evenly spaced), the limiters' queues and the timed retries; responses arrive on the HTTP
 * client's threads, update the limiters and wake the driver. Requests are {@code GET /items/N}
 * (cost 1) with {@code X-Tenant-Id: workers} or {@code neighbour}.
 */
final class ModeRun {
    static final int MAX_RETRIES = 3;
    private static final long COST = 1;
    private static final long SECOND = 1_000_000_000L;

    private final Scenario scenario;
    private final Mode mode;
    private final URI base;
    private final URI admin;
    private final ScenarioClock clock;
    private final PrintStream progress;
    private final HttpClient http;
    private final ExecutorService httpExecutor;
    final List<Worker> workers = new ArrayList<>();
    final Series neighbour;
    private final AtomicInteger instanceCount = new AtomicInteger();
    private final AtomicLong inFlight = new AtomicLong();
    private final AtomicLong requestIds = new AtomicLong();
    private final PriorityBlockingQueue<Retry> retries = new PriorityBlockingQueue<>();
    private final AtomicLong fieldsSeen = new AtomicLong();
    private final AtomicBoolean firstError = new AtomicBoolean();
    private volatile Thread driver;
    private final String neighbourTenant;
    private final String adminToken;
    final AtomicLong quotaChangeFailures = new AtomicLong();

    /**
     * @param admin        where {@code PUT /admin/quota} is served (the example app's management port)
     * @param sharedTenant the neighbour uses the workers' tenant (for a published quota, which is a
     *                     tenant plan); otherwise its own tenant, and only the global quota is shared
     */
    ModeRun(Scenario scenario, Mode mode, URI base, URI admin, ScenarioClock clock, PrintStream progress, boolean sharedTenant,
            String adminToken) {
        this.scenario = scenario;
        this.adminToken = adminToken;
        this.neighbourTenant = sharedTenant ? "workers" : "neighbour";
        this.mode = mode;
        this.base = base;
        this.admin = admin;
        this.clock = clock;
        this.progress = progress;
        this.httpExecutor = Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "scenario-" + mode.id + "-http");
            t.setDaemon(true);
            return t;
        });
        this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5)).executor(httpExecutor).build();
        for (int i = 0; i < scenario.workers().size(); i++) {
            workers.add(new Worker(mode.id + "-" + (i + 1), scenario.workers().get(i).toNanos()));
        }
        this.neighbour = new Series("neighbour", scenario.seconds());
    }

    /** Whether any response carried {@code RateLimit} fields. */
    boolean sawPublishedFields() {
        return fieldsSeen.get() > 0;
    }

    /** A worker: one instance of the mode's client. */
    final class Worker {
        final Series series;
        final long startNanos;
        ClientLimiter<Request> limiter;
        long nextArrival;
        boolean started;

        Worker(String name, long startNanos) {
            this.series = new Series(name, scenario.seconds());
            this.startNanos = startNanos;
            this.nextArrival = startNanos;
        }

        void start(long now) {
            started = true;
            instanceCount.incrementAndGet();
            RateController controller = controller(now);
            if (controller != null) {
                limiter = new ClientLimiter<>(controller, instanceCount::get,
                        new ClientLimiter.Options(Duration.ofSeconds(5), 100, Duration.ofSeconds(1)), now);
            }
        }
    }

    private RateController controller(long now) {
        double q = scenario.quota();
        return switch (mode) {
            case NONE -> null;
            case FIXED -> new FixedRate(scenario.fixedRate());
            case AIMD -> new Aimd(new Aimd.Options(q / 3, q / 10, q * 4, 0.7, q * 0.12, Duration.ofSeconds(5)), now);
            case CUBIC -> new Cubic(new Cubic.Options(q / 3, q / 10, q * 4, 0.7, 0.4 * q / 3000), now);
            case HEADERS -> new PublishedPacing(q / 3, q / 10, q * 4, 5, now);
        };
    }

    /** One logical request and its attempts. */
    final class Request {
        final Worker worker;   // null for the neighbour
        final long id = requestIds.incrementAndGet();
        int attempt;
        boolean waited;
        long sentAt;

        Request(Worker worker) {
            this.worker = worker;
        }

        Series series() {
            return worker == null ? neighbour : worker.series;
        }
    }

    private record Retry(long due, Request request) implements Comparable<Retry> {
        @Override
        public int compareTo(Retry o) {
            return Long.compare(due, o.due);
        }
    }

    /** Runs the whole scenario for this mode; returns when it is over and the last responses are in. */
    void run() {
        driver = Thread.currentThread();
        long end = scenario.duration().toNanos();
        long neighbourInterval = scenario.neighbour().map(n -> (long) (60 * SECOND / n.unitsPerMinute())).orElse(Long.MAX_VALUE);
        long neighbourNext = scenario.neighbour().map(n -> n.start().toNanos()).orElse(Long.MAX_VALUE);
        long neighbourEnd = scenario.neighbour().map(n -> n.end().toNanos()).orElse(0L);
        long workerInterval = (long) (60 * SECOND / scenario.demand());
        long dropAt = scenario.quotaDrop().map(d -> d.start().toNanos()).orElse(Long.MAX_VALUE);
        long restoreAt = scenario.quotaDrop().map(d -> d.end().toNanos()).orElse(Long.MAX_VALUE);
        int sampled = -1;
        long nextProgress = 0;
        long progressEvery = Math.max(10 * SECOND, (long) (2 * SECOND * clock.speed()));
        try {
            while (true) {
                long now = clock.now();
                if (now >= end) break;
                int second = (int) (now / SECOND);
                while (sampled < second) {
                    sampled++;
                    for (Worker w : workers) {
                        if (w.limiter != null) w.series.rate[sampled] = w.limiter.instanceRate();
                    }
                }
                if (now >= nextProgress) {
                    printProgress(now);
                    nextProgress += progressEvery;
                }
                if (now >= dropAt) {
                    dropAt = Long.MAX_VALUE;
                    setServerQuota(scenario.quotaDrop().orElseThrow().factor());
                }
                if (now >= restoreAt) {
                    restoreAt = Long.MAX_VALUE;
                    setServerQuota(1);
                }
                long next = Math.min(end, (second + 1L) * SECOND);
                next = Math.min(next, nextProgress);
                next = Math.min(next, Math.min(dropAt, restoreAt));
                for (Worker w : workers) {
                    if (!w.started && now >= w.startNanos) w.start(now);
                    if (!w.started) {
                        next = Math.min(next, w.startNanos);
                        continue;
                    }
                    while (w.nextArrival <= now) {
                        w.nextArrival += workerInterval;
                        arrive(new Request(w), now);
                    }
                    next = Math.min(next, w.nextArrival);
                    if (w.limiter != null) {
                        ClientLimiter.Released<Request> released = w.limiter.poll(now);
                        for (Request r : released.expired()) w.series.rejected.incrementAndGet(w.series.bin(now));
                        for (Request r : released.granted()) {
                            r.waited = true;
                            send(r);
                        }
                        next = Math.min(next, w.limiter.nextWake(now));
                    }
                }
                while (neighbourNext <= now && neighbourNext < neighbourEnd) {
                    neighbourNext += neighbourInterval;
                    send(new Request(null));
                }
                if (neighbourNext < neighbourEnd) next = Math.min(next, neighbourNext);
                Retry due;
                while ((due = retries.peek()) != null && due.due() <= now) {
                    retries.poll();
                    arrive(due.request(), now);
                }
                if (due != null) next = Math.min(next, due.due());
                // responses wake us early (unpark); cap the real sleep so a missed wake-up costs little
                clock.park(next - clock.now(), 20_000_000L);
            }
            printProgress(end);
            long deadline = System.nanoTime() + 10 * SECOND;
            while (inFlight.get() > 0 && System.nanoTime() < deadline) LockSupport.parkNanos(5_000_000L);
        } finally {
            httpExecutor.shutdownNow();
        }
    }

    /** {@code PUT /admin/quota}: the scenario's quota × {@code factor}, in the server's real time. */
    private void setServerQuota(double factor) {
        long capacity = Math.max(1, Math.round(scenario.burst() * factor));
        long refill = Math.max(1, Math.round(scenario.quota() * factor * clock.speed()));
        String body = String.format(Locale.ROOT, "{\"capacity\":%d,\"refill\":%d,\"period\":\"1m\"}", capacity, refill);
        HttpRequest request = HttpRequest.newBuilder(admin.resolve("/admin/quota"))
                .header("Authorization", "Bearer " + adminToken).header("Content-Type", "application/json")
                .timeout(Duration.ofSeconds(10)).PUT(HttpRequest.BodyPublishers.ofString(body)).build();
        try {
            HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 200) {
                quotaChangeFailures.incrementAndGet();
                System.err.println("scenario " + mode.id + ": PUT /admin/quota " + body + " answered " + response.statusCode()
                        + ": " + response.body());
            } else if (progress != null) {
                progress.printf(Locale.ROOT, "[%-7s] %s  server quota now %,d units/min (burst %,d)%n", mode.id,
                        mmss(clock.now()), Math.round(scenario.quota() * factor), capacity);
            }
        } catch (java.io.IOException e) {
            quotaChangeFailures.incrementAndGet();
            System.err.println("scenario " + mode.id + ": PUT /admin/quota failed: " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            quotaChangeFailures.incrementAndGet();
        }
    }

    private void printProgress(long now) {
        if (progress == null) return;
        double minutes = Math.max(now, 1) / 60e9;
        long accepted = 0, throttled = 0, rejected = 0, gaveUp = 0;
        for (Worker w : workers) {
            accepted += Series.total(w.series.accepted);
            throttled += Series.total(w.series.throttled);
            rejected += Series.total(w.series.rejected);
            gaveUp += Series.total(w.series.gaveUp);
        }
        progress.printf(Locale.ROOT, "[%-7s] %s/%s  accepted/min %6.0f  429s %6d  rejected %6d  gave up %5d%n",
                mode.id, mmss(now), mmss(scenario.duration().toNanos()), accepted / minutes, throttled, rejected, gaveUp);
    }

    static String mmss(long nanos) {
        long s = nanos / SECOND;
        return String.format(Locale.ROOT, "%02d:%02d", s / 60, s % 60);
    }

    /** A new request, or a retry, wants to go: through the worker's limiter, if it has one. */
    private void arrive(Request r, long now) {
        ClientLimiter<Request> limiter = r.worker == null ? null : r.worker.limiter;
        if (limiter == null) {
            send(r);
            return;
        }
        switch (limiter.offer(r, COST, now)) {
            case GRANTED -> {
                r.waited = false;
                send(r);
            }
            case QUEUED -> { }
            case REJECTED -> r.series().rejected.incrementAndGet(r.series().bin(now));
        }
    }

    private void send(Request r) {
        String tenant = r.worker == null ? neighbourTenant : "workers";
        HttpRequest request = HttpRequest.newBuilder(base.resolve("/items/" + r.id))
                .header("X-Tenant-Id", tenant).timeout(Duration.ofSeconds(10)).GET().build();
        r.sentAt = clock.now();
        inFlight.incrementAndGet();
        http.sendAsync(request, HttpResponse.BodyHandlers.discarding()).whenComplete((response, error) -> {
            try {
                onResponse(r, response, error);
            } catch (RuntimeException e) {
                logFailure(e);
            } finally {
                inFlight.decrementAndGet();
                Thread d = driver;
                if (d != null) LockSupport.unpark(d);
            }
        });
    }

    // a bug in the bookkeeping must not vanish inside the CompletableFuture
    private static void logFailure(RuntimeException e) {
        System.err.println("scenario: response handling failed: " + e);
    }

    private void onResponse(Request r, HttpResponse<Void> response, Throwable error) {
        long now = clock.now();
        Series s = r.series();
        int bin = s.bin(now);
        if (error != null) {
            if (firstError.compareAndSet(false, true)) {
                System.err.println("scenario " + mode.id + ": first failed request (counted in errors): " + error);
            }
            s.errors.incrementAndGet(bin);
            return;
        }
        ClientLimiter<Request> limiter = r.worker == null ? null : r.worker.limiter;
        if (limiter != null) readPublishedFields(limiter, response, now);
        int status = response.statusCode();
        Optional<Long> retryAfter = response.headers().firstValue("Retry-After").flatMap(ModeRun::seconds);
        if (status == 200) {
            s.accepted.addAndGet(bin, COST);
            if (limiter != null) limiter.accepted(now, r.waited);
            return;
        }
        if (status == 429 || (status == 503 && retryAfter.isPresent())) {
            s.throttled.incrementAndGet(bin);
            // Retry-After is a duration like any other: --speed N compresses it too
            long wait = retryAfter.orElse(1L) * SECOND;
            if (limiter != null) limiter.throttled(now, r.sentAt, wait);
            if (r.worker == null) return;  // the neighbour ignores 429s
            if (r.attempt >= MAX_RETRIES) {
                s.gaveUp.incrementAndGet(bin);
                return;
            }
            r.attempt++;
            if (limiter != null) {
                arrive(r, now);  // the paused limiter holds it until Retry-After has passed
            } else {
                retries.add(new Retry(now + wait, r));
            }
            return;
        }
        s.errors.incrementAndGet(bin);
    }

    private void readPublishedFields(ClientLimiter<Request> limiter, HttpResponse<Void> response, long now) {
        Optional<String> limit = response.headers().firstValue("RateLimit");
        if (limit.isEmpty()) return;
        try {
            List<RateLimitFields.Limit> limits = RateLimitFields.parseRateLimit(String.join(", ", response.headers().allValues("RateLimit")));
            List<String> policyValues = response.headers().allValues("RateLimit-Policy");
            List<RateLimitFields.Policy> policies = new ArrayList<>();
            if (!policyValues.isEmpty()) {
                for (RateLimitFields.Policy p : RateLimitFields.parsePolicy(String.join(", ", policyValues))) {
                    // windows are real seconds; the clients live in scenario time
                    policies.add(new RateLimitFields.Policy(p.name(), p.quota(),
                            p.windowSeconds().map(w -> Math.round(w * clock.speed())), p.parameters()));
                }
            }
            fieldsSeen.incrementAndGet();
            limiter.published(now, limits, policies);
        } catch (IllegalArgumentException e) {
            // a malformed field is ignored, as RFC 8941 asks of a parser's caller
        }
    }

    private static Optional<Long> seconds(String value) {
        try {
            long v = Long.parseLong(value.trim());
            return v >= 0 ? Optional.of(v) : Optional.empty();
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    int instanceCount() {
        return instanceCount.get();
    }
}

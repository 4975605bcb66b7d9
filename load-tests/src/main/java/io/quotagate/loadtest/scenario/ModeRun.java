package io.quotagate.loadtest.scenario;

import io.quotagate.client.AdaptiveLimiter;
import io.quotagate.client.RateController;

import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;

import java.io.PrintStream;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.PriorityBlockingQueue;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Runs one mode of a scenario against one server: the workers (each an instance of the same
 * client, sharing one instance count), the neighbour, and the per-second bookkeeping.
 *
 * <p>One driver thread owns the arrivals (each worker wants {@code demand} units per minute,
 * evenly spaced) and the timed retries of the mode without a limiter. Each worker's limiter is the
 * library's {@link AdaptiveLimiter} (quotagate-client) on the scenario clock: its timer, one per
 * mode, grants queued requests and sends them; responses arrive on the HTTP client's threads,
 * report to the request's permit and wake the driver. Requests are {@code GET /items/N}
 * (cost 1) with {@code X-Tenant-Id: workers} or {@code neighbour}.
 *
 * <p>Each worker and the neighbour is a client of its own with its own {@link ClientConnections}
 * (a fixed pool of keep-alive connections and a bounded queue), so a lagging server makes requests
 * wait, never opens more sockets; {@link Pace} records how late requests went out.
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
    private final QueuedThreadPool httpThreads;
    private final ScheduledExecutorScheduler httpScheduler;
    private final ClientConnections neighbourConnections;
    /** grants the limiters' queued requests (scenario delays ÷ speed) and sends them */
    private final ScheduledThreadPoolExecutor limiterTimer;
    final Pace pace = new Pace();
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
        // one small pool of threads for all the mode's clients: each client's selector holds one of them
        this.httpThreads = new QueuedThreadPool(scenario.workers().size() + 9, 4);
        httpThreads.setName("scenario-" + mode.id + "-http");
        httpThreads.setDaemon(true);
        this.httpScheduler = new ScheduledExecutorScheduler("scenario-" + mode.id + "-timer", true);
        this.limiterTimer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "scenario-" + mode.id + "-limiter");
            t.setDaemon(true);
            return t;
        });
        limiterTimer.setRemoveOnCancelPolicy(true);
        try {
            httpThreads.start();
            httpScheduler.start();
        } catch (Exception e) {
            throw new IllegalStateException("starting the HTTP client threads of " + mode.id + " failed", e);
        }
        for (int i = 0; i < scenario.workers().size(); i++) {
            workers.add(new Worker(mode.id + "-" + (i + 1), scenario.workers().get(i).toNanos()));
        }
        this.neighbour = new Series("neighbour", scenario.seconds());
        this.neighbourConnections = connections("neighbour");
    }

    private ClientConnections connections(String client) {
        return new ClientConnections("scenario-" + client, httpThreads, httpScheduler);
    }

    /** Whether any response carried {@code RateLimit} fields. */
    boolean sawPublishedFields() {
        return fieldsSeen.get() > 0;
    }

    /** A worker: one instance of the mode's client. */
    final class Worker {
        final Series series;
        final long startNanos;
        final ClientConnections connections;
        AdaptiveLimiter limiter;
        long nextArrival;
        boolean started;

        Worker(String name, long startNanos) {
            this.series = new Series(name, scenario.seconds());
            this.startNanos = startNanos;
            this.nextArrival = startNanos;
            this.connections = connections(name);
        }

        void start(long now) {
            started = true;
            instanceCount.incrementAndGet();
            RateController controller = controller();
            if (controller != null) {
                double q = scenario.quota();
                // options for the whole app: each worker takes rate / instanceCount
                limiter = AdaptiveLimiter.builder().name(series.name).controller(controller)
                        .initialRate(q / 3).minRate(q / 10).maxRate(q * 4)
                        .instanceCount(instanceCount::get)
                        .maxWait(Duration.ofSeconds(5)).maxQueue(100).burst(Duration.ofSeconds(1))
                        .clock(clock).scheduler(limiterTimer)
                        .build();
            }
        }
    }

    private RateController controller() {
        double q = scenario.quota();
        return switch (mode) {
            case NONE -> null;
            case FIXED -> RateController.fixed(scenario.fixedRate());
            case AIMD -> RateController.aimd(0.7, q * 0.12, Duration.ofSeconds(5));
            case CUBIC -> RateController.cubic(0.7, 0.4 * q / 3000);
            case HEADERS -> RateController.publishedPacing(Duration.ofSeconds(5));
        };
    }

    /** One logical request and its attempts. */
    final class Call {
        final Worker worker;   // null for the neighbour
        final long id = requestIds.incrementAndGet();
        int attempt;
        /** this attempt's units from the worker's limiter: reports the answer */
        volatile AdaptiveLimiter.Permit permit;
        /** when the story wants this attempt sent (scenario time) */
        long due;
        /** when a connection began sending it (scenario time) */
        volatile long sentAt;

        Call(Worker worker) {
            this.worker = worker;
        }

        Series series() {
            return worker == null ? neighbour : worker.series;
        }

        ClientConnections connections() {
            return worker == null ? neighbourConnections : worker.connections;
        }
    }

    private record Retry(long due, Call request) implements Comparable<Retry> {
        @Override
        public int compareTo(Retry o) {
            return Long.compare(due, o.due);
        }
    }

    /** The tenant of the warm-up's requests, which the server does not count. */
    static final String WARM_UP_TENANT = "warm-up";

    /**
     * Sends {@code requests} {@code GET /items/0} as tenant {@link #WARM_UP_TENANT} through each
     * client's connections, as fast as they go, before the story starts: the JIT compiles the
     * client's and the server's paths (admitted and throttled) and the pools open their connections,
     * so the first seconds of a compressed run are not spent on a cold JVM (at {@code --speed 15},
     * 2 s of warm-up are 30 s of story). The quota's bucket is left empty: the caller waits for it
     * to refill ({@link InProcessServer#refillNanos}).
     */
    void warmUp(int requests) throws InterruptedException {
        List<ClientConnections> clients = new ArrayList<>();
        for (Worker w : workers) clients.add(w.connections);
        clients.add(neighbourConnections);
        java.util.concurrent.Semaphore slots = new java.util.concurrent.Semaphore(ClientConnections.CONNECTIONS * clients.size());
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(requests * clients.size());
        URI items = base.resolve("/items/0");
        for (int i = 0; i < requests; i++) {
            for (ClientConnections client : clients) {
                slots.acquire();
                client.newRequest(items).headers(h -> h.put("X-Tenant-Id", WARM_UP_TENANT)).timeout(10, TimeUnit.SECONDS)
                        .send(result -> {
                            slots.release();
                            done.countDown();
                        });
            }
        }
        done.await(30, TimeUnit.SECONDS);
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
                sampled = sampleRates(sampled, second);
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
                next = Math.min(next, workersArrive(now, workerInterval));
                while (neighbourNext <= now && neighbourNext < neighbourEnd) {
                    Call c = new Call(null);
                    c.due = neighbourNext;
                    neighbourNext += neighbourInterval;
                    send(c);
                }
                if (neighbourNext < neighbourEnd) next = Math.min(next, neighbourNext);
                next = Math.min(next, retriesArrive(now));
                // responses wake us early (unpark); cap the real sleep so a missed wake-up costs little
                clock.park(next - clock.now(), 20_000_000L);
            }
            printProgress(end);
            long deadline = System.nanoTime() + 10 * SECOND;
            while (inFlight.get() > 0 && System.nanoTime() < deadline) LockSupport.parkNanos(5_000_000L);
        } finally {
            close();
        }
    }

    /** Each worker's rate for the seconds from {@code sampled + 1} to {@code second}; returns {@code second}. */
    private int sampleRates(int sampled, int second) {
        while (sampled < second) {
            sampled++;
            for (Worker w : workers) {
                if (w.limiter != null) w.series.rate[sampled] = w.limiter.unitsPerMinute();
            }
        }
        return sampled;
    }

    /**
     * Starts the workers whose time has come and has each one's calls due by {@code now} arrive; returns when
     * the next worker starts or the next call arrives.
     */
    private long workersArrive(long now, long workerInterval) {
        long next = Long.MAX_VALUE;
        for (Worker w : workers) {
            if (!w.started && now >= w.startNanos) w.start(now);
            if (!w.started) {
                next = Math.min(next, w.startNanos);
                continue;
            }
            while (w.nextArrival <= now) {
                Call c = new Call(w);
                c.due = w.nextArrival;
                w.nextArrival += workerInterval;
                arrive(c, now);
            }
            next = Math.min(next, w.nextArrival);
        }
        return next;
    }

    /** Has the retries due by {@code now} arrive again; returns when the next one is due (MAX_VALUE: none). */
    private long retriesArrive(long now) {
        Retry due;
        while ((due = retries.peek()) != null && due.due() <= now) {
            retries.poll();
            due.request().due = due.due();
            arrive(due.request(), now);
        }
        return due != null ? due.due() : Long.MAX_VALUE;
    }

    /** Stops the rate timer, the clients' connections and the HTTP client's threads. */
    private void close() {
        limiterTimer.shutdownNow();
        for (Worker w : workers) w.connections.close();
        neighbourConnections.close();
        try {
            httpScheduler.stop();
            httpThreads.stop();
        } catch (Exception e) {
            System.err.println("scenario " + mode.id + ": stopping the HTTP client threads failed: " + e);
        }
    }

    /** {@code PUT /admin/quota}: the scenario's quota × {@code factor}, in the server's real time. */
    private void setServerQuota(double factor) {
        long capacity = Math.max(1, Math.round(scenario.burst() * factor));
        long refill = Math.max(1, Math.round(scenario.quota() * factor * clock.speed()));
        String body = String.format(Locale.ROOT, "{\"capacity\":%d,\"refill\":%d,\"period\":\"1m\"}", capacity, refill);
        // the operator's request: through the neighbour's client, whose connections are idle but for the neighbour's spell
        Request request = neighbourConnections.newRequest(admin.resolve("/admin/quota")).method(HttpMethod.PUT)
                .headers(h -> h.put("Authorization", "Bearer " + adminToken))
                .body(new StringRequestContent("application/json", body)).timeout(10, TimeUnit.SECONDS);
        try {
            ContentResponse response = request.send();
            if (response.getStatus() != 200) {
                quotaChangeFailures.incrementAndGet();
                System.err.println("scenario " + mode.id + ": PUT /admin/quota " + body + " answered " + response.getStatus()
                        + ": " + response.getContentAsString());
            } else if (progress != null) {
                progress.printf(Locale.ROOT, "[%-7s] %s  server quota now %,d units/min (burst %,d)%n", mode.id,
                        mmss(clock.now()), Math.round(scenario.quota() * factor), capacity);
            }
        } catch (ExecutionException | TimeoutException e) {
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
        double worstLag = pace.takeWorstLagMs();
        progress.printf(Locale.ROOT, "[%-7s] %s/%s  accepted/min %6.0f  429s %6d  rejected %6d  gave up %5d  worst lag %s%n",
                mode.id, mmss(now), mmss(scenario.duration().toNanos()), accepted / minutes, throttled, rejected, gaveUp,
                worstLag > Pace.LAG_LIMIT_MS ? String.format(Locale.ROOT, "%,.0f ms: late", worstLag)
                        : String.format(Locale.ROOT, "%.0f ms", worstLag));
    }

    static String mmss(long nanos) {
        long s = nanos / SECOND;
        return String.format(Locale.ROOT, "%02d:%02d", s / 60, s % 60);
    }

    /** A new request, or a retry, wants to go: through the worker's limiter, if it has one. */
    private void arrive(Call c, long now) {
        AdaptiveLimiter limiter = c.worker == null ? null : c.worker.limiter;
        if (limiter == null) {
            send(c);
            return;
        }
        CompletableFuture<AdaptiveLimiter.Permit> units = limiter.acquireAsync(COST);
        // granted at once: runs here; queued: runs on the limiter's timer when granted or rejected
        units.whenComplete((permit, rejected) -> {
            if (rejected != null) {
                // never sent (queue full, wait too long, or waited too long): costs no quota
                c.series().rejected.incrementAndGet(c.series().bin(clock.now()));
                return;
            }
            c.permit = permit;
            if (permit.waited()) c.due = clock.now();   // the story wants it sent at its grant
            send(c);
        });
    }

    private void send(Call c) {
        String tenant = c.worker == null ? neighbourTenant : "workers";
        inFlight.incrementAndGet();
        pace.sent();
        c.connections().newRequest(base.resolve("/items/" + c.id)).method(HttpMethod.GET)
                .headers(h -> h.put("X-Tenant-Id", tenant)).timeout(10, TimeUnit.SECONDS)
                .onRequestBegin(request -> {
                    long now = clock.now();
                    c.sentAt = now;
                    AdaptiveLimiter.Permit permit = c.permit;
                    // it may have waited for a connection since its grant: date its congestion event by the wire
                    if (permit != null && c.worker != null) permit.sent();
                    pace.lag(now - c.due);
                })
                .send(result -> {
                    try {
                        onResult(c, result);
                    } catch (RuntimeException e) {
                        logFailure(e);
                    } finally {
                        inFlight.decrementAndGet();
                        Thread d = driver;
                        if (d != null) LockSupport.unpark(d);
                    }
                });
    }

    // a bug in the bookkeeping must not vanish inside the HTTP client's callback
    private static void logFailure(RuntimeException e) {
        System.err.println("scenario: response handling failed: " + e);
    }

    private void onResult(Call c, Result result) {
        long now = clock.now();
        Series s = c.series();
        int bin = s.bin(now);
        if (result.isFailed()) {
            Throwable error = result.getFailure();
            if (ClientConnections.refusedByPool(error)) {
                // never sent: the client's own bound refused it, as its limiter would
                pace.refusedByPool();
                s.rejected.incrementAndGet(bin);
                return;
            }
            if (firstError.compareAndSet(false, true)) {
                System.err.println("scenario " + mode.id + ": first failed request (counted in errors): " + error);
            }
            pace.failed();
            s.errors.incrementAndGet(bin);
            return;
        }
        pace.response(now - c.sentAt);
        Response response = result.getResponse();
        HttpFields headers = response.getHeaders();
        AdaptiveLimiter.Permit permit = c.worker == null ? null : c.permit;
        if (permit != null) readPublishedFields(permit, headers);
        int status = response.getStatus();
        Optional<Long> retryAfter = Optional.ofNullable(headers.get("Retry-After")).flatMap(ModeRun::seconds);
        if (status == 200) {
            s.accepted.addAndGet(bin, COST);
            if (permit != null) permit.accepted();
            return;
        }
        if (status == 429 || (status == 503 && retryAfter.isPresent())) {
            s.throttled.incrementAndGet(bin);
            // Retry-After is a duration like any other: --speed N compresses it too
            long wait = retryAfter.orElse(1L) * SECOND;
            if (permit != null) permit.throttled(Duration.ofNanos(wait));
            if (c.worker == null) return;  // the neighbour ignores 429s
            if (c.attempt >= MAX_RETRIES) {
                s.gaveUp.incrementAndGet(bin);
                return;
            }
            c.attempt++;
            if (permit != null) {
                c.due = now;
                arrive(c, now);  // the paused limiter holds it until Retry-After has passed
            } else {
                retries.add(new Retry(now + wait, c));
            }
            return;
        }
        pace.failed();
        s.errors.incrementAndGet(bin);
    }

    private void readPublishedFields(AdaptiveLimiter.Permit permit, HttpFields headers) {
        List<String> limitValues = headers.getValuesList("RateLimit");
        if (limitValues.isEmpty()) return;
        fieldsSeen.incrementAndGet();
        // windows are the server's real seconds: the limiter, on the scenario clock, stretches them by the speed
        permit.published(String.join(", ", limitValues), String.join(", ", headers.getValuesList("RateLimit-Policy")));
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

package io.quotagate.client;

import io.quotagate.filter.testing.ManualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.PriorityQueue;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A discrete-event simulation of an application against a hidden quota, on a {@link ManualClock}:
 * no wall clock, no threads, so every run of a setup gives the same figures.
 *
 * <p>The server is a token bucket of {@code quota} requests a second holding one second of refill,
 * as {@link HiddenQuotaApi}, but at least {@link #MIN_BURST} requests; a refused request gets 429 with Retry-After in
 * whole seconds, rounded up, at least 1. During an outage it answers 429 (Retry-After: 1) to
 * everything. The application has {@code instances} instances, each with its own
 * {@link AdaptiveLimiter} built with the defaults (only the controller, the initial rate and the
 * instance count given), and several "threads" each: a thread asks its limiter for a unit, sends
 * when granted, and asks again when the answer is in; a thread the limiter refuses asks again
 * 50 ms later. A round trip takes 20 ms; there are enough threads to want twice the quota.
 * The limiters' timer is an event queue here: a wake-up they schedule runs at its time on the
 * simulated clock.
 */
final class QuotaSimulation {
    static final long SECOND = 1_000_000_000L;
    private static final long ROUND_TRIP = 20_000_000L;
    private static final long REFUSED_RETRY = 50_000_000L;
    /**
     * The least the server's bucket holds, in requests. With one request (a strict 1/s), three
     * instances that cannot see each other's timing collide: two requests within a second of each
     * other get a 429 whatever the rates, as on a slotted-ALOHA channel, and no client-side
     * controller reaches 90 % there. One request per instance absorbs that.
     */
    static final double MIN_BURST = 3;

    /**
     * One run: quota in requests per second, the server's bucket (one second of refill, at least
     * {@code minBurst} requests), the initial rate as a multiple of the quota, an optional outage.
     */
    record Setup(String controllerName, Supplier<RateController> controller, double quota, double minBurst, int instances,
                 double initialFactor, Duration length, Duration warmUp, Duration outageAt, Duration outageFor) {
        /** Ten minutes, figures from 30 s on, a server bucket of at least {@link #MIN_BURST} requests. */
        static Setup of(String controllerName, Supplier<RateController> controller, double quota, int instances,
                        double initialFactor) {
            return new Setup(controllerName, controller, quota, MIN_BURST, instances, initialFactor, Duration.ofMinutes(10),
                    Duration.ofSeconds(30), null, Duration.ZERO);
        }

        Setup withOutage(Duration at, Duration length) {
            return new Setup(controllerName, controller, quota, minBurst, instances, initialFactor, this.length, warmUp, at, length);
        }

        Setup withMinBurst(double requests) {
            return new Setup(controllerName, controller, quota, requests, instances, initialFactor, length, warmUp, outageAt, outageFor);
        }

        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%s, quota %s/s, %d instance%s, initial %s× quota%s%s", controllerName,
                    fmt(quota), instances, instances == 1 ? "" : "s", fmt(initialFactor),
                    minBurst == MIN_BURST ? "" : ", server burst at least " + fmt(minBurst),
                    outageAt == null ? "" : ", outage " + outageFor.toSeconds() + " s at " + outageAt.toSeconds() + " s");
        }

        private static String fmt(double d) {
            return d == Math.rint(d) ? String.format(Locale.ROOT, "%,d", (long) d) : String.valueOf(d);
        }
    }

    /**
     * What the server saw after the warm-up: {@code accepted} and {@code throttled} answers (429s),
     * plus per second of the run the accepted requests and the instances' summed rate (requests per
     * second).
     */
    record Result(Setup setup, long accepted, long throttled, long[] acceptedPerSecond, double[] ratePerSecond) {
        /** Accepted requests over what the quota let through after the warm-up. */
        double utilisation() {
            double seconds = (setup.length.toNanos() - setup.warmUp.toNanos() - setup.outageFor.toNanos()) / 1e9;
            return accepted / (setup.quota * seconds);
        }

        /** 429s over requests answered after the warm-up (outage 429s excluded). */
        double throttledShare() {
            return (double) throttled / (accepted + throttled);
        }

        /** Seconds after {@code from} until the accepted requests of a 10 s window reach {@code share} of the quota. */
        long secondsUntilAccepting(Duration from, double share) {
            int start = (int) from.toSeconds();
            for (int s = start; s + 10 <= acceptedPerSecond.length; s++) {
                long sum = 0;
                for (int i = s; i < s + 10; i++) sum += acceptedPerSecond[i];
                if (sum >= share * setup.quota * 10) return s - start;
            }
            return Long.MAX_VALUE;
        }

        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%s: utilisation %.1f %%, 429s %.2f %% (%d of %d)", setup,
                    100 * utilisation(), 100 * throttledShare(), throttled, accepted + throttled);
        }
    }

    private record Event(long at, long seq, Runnable action) {
    }

    private final Setup setup;
    private final ManualClock clock = new ManualClock();
    private final long origin = clock.nanoTime();
    private final PriorityQueue<Event> events = new PriorityQueue<>((a, b) ->
            a.at != b.at ? Long.compare(a.at, b.at) : Long.compare(a.seq, b.seq));
    private long seq;
    private final EventScheduler scheduler = new EventScheduler();
    // the server's bucket
    private final double capacity;
    private double tokens;
    private long lastRefill;
    // what the server saw
    private long accepted;
    private long throttled;
    private final long[] acceptedPerSecond;
    private final double[] ratePerSecond;

    private QuotaSimulation(Setup setup) {
        this.setup = setup;
        this.capacity = Math.max(setup.minBurst, setup.quota);
        this.tokens = capacity;
        this.lastRefill = origin;
        int seconds = (int) setup.length.toSeconds();
        this.acceptedPerSecond = new long[seconds];
        this.ratePerSecond = new double[seconds];
    }

    static Result run(Setup setup) {
        return new QuotaSimulation(setup).run();
    }

    private Result run() {
        double initial = setup.quota * 60 * setup.initialFactor;
        int threads = (int) Math.max(4, Math.ceil(2 * setup.quota / setup.instances * ROUND_TRIP / 1e9));
        List<AdaptiveLimiter> limiters = new ArrayList<>();
        for (int i = 0; i < setup.instances; i++) {
            AdaptiveLimiter limiter = AdaptiveLimiter.builder().name("instance-" + i).controller(setup.controller.get())
                    .initialRate(initial).instanceCount(InstanceCountSource.fixed(setup.instances))
                    .clock(clock::nanoTime).scheduler(scheduler).build();
            limiters.add(limiter);
            for (int t = 0; t < threads; t++) at(origin, () -> ask(limiter));
        }
        for (int s = 0; s < ratePerSecond.length; s++) {
            int second = s;
            at(origin + s * SECOND, () -> {
                double sum = 0;
                for (AdaptiveLimiter l : limiters) sum += l.unitsPerMinute() / 60;
                ratePerSecond[second] = sum;
            });
        }
        long end = origin + setup.length.toNanos();
        while (!events.isEmpty() && events.peek().at < end) {
            Event e = events.poll();
            clock.advanceNanos(e.at - clock.nanoTime());
            e.action.run();
        }
        return new Result(setup, accepted, throttled, acceptedPerSecond, ratePerSecond);
    }

    private void at(long time, Runnable action) {
        events.add(new Event(time, seq++, action));
    }

    /** A thread asks its limiter for a unit, sends when granted, and asks again when answered. */
    private void ask(AdaptiveLimiter limiter) {
        limiter.acquireAsync(1).whenComplete((permit, refused) -> {
            long now = clock.nanoTime();
            if (refused != null) {
                at(now + REFUSED_RETRY, () -> ask(limiter));
                return;
            }
            at(now + ROUND_TRIP / 2, () -> {
                long retryAfter = answer(clock.nanoTime());
                at(clock.nanoTime() + ROUND_TRIP / 2, () -> {
                    if (retryAfter == 0) {
                        permit.complete(200, name -> List.of());
                    } else {
                        Function<String, List<String>> headers = name -> name.equals("Retry-After")
                                ? List.of(Long.toString(retryAfter)) : List.of();
                        permit.complete(429, headers);
                    }
                    ask(limiter);
                });
            });
        });
    }

    /** The server: 0 for accepted, else the Retry-After in seconds of its 429. */
    private long answer(long now) {
        long since = now - origin;
        tokens = Math.min(capacity, tokens + (now - lastRefill) / 1e9 * setup.quota);
        lastRefill = now;
        boolean counted = since >= setup.warmUp.toNanos();
        if (setup.outageAt != null && since >= setup.outageAt.toNanos()
                && since < setup.outageAt.toNanos() + setup.outageFor.toNanos()) {
            return 1;
        }
        int second = (int) (since / SECOND);
        if (tokens >= 1) {
            tokens -= 1;
            if (counted) accepted++;
            if (second < acceptedPerSecond.length) acceptedPerSecond[second]++;
            return 0;
        }
        if (counted) throttled++;
        return Math.max(1, (long) Math.ceil((1 - tokens) / setup.quota));
    }

    /** The limiters' timer: a task runs at its time on the simulated clock, unless cancelled first. */
    private final class EventScheduler extends AbstractExecutorService implements ScheduledExecutorService {
        @Override
        public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
            Task task = new Task(clock.nanoTime() + unit.toNanos(delay));
            at(task.at, () -> {
                if (task.cancelled) return;
                task.done = true;
                command.run();
            });
            return task;
        }

        @Override
        public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
            throw new UnsupportedOperationException();
        }

        @Override
        public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
            throw new UnsupportedOperationException();
        }

        @Override
        public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void execute(Runnable command) {
            at(clock.nanoTime(), command);
        }

        @Override
        public void shutdown() {
        }

        @Override
        public List<Runnable> shutdownNow() {
            return List.of();
        }

        @Override
        public boolean isShutdown() {
            return false;
        }

        @Override
        public boolean isTerminated() {
            return false;
        }

        @Override
        public boolean awaitTermination(long timeout, TimeUnit unit) {
            return false;
        }
    }

    private final class Task implements ScheduledFuture<Object> {
        final long at;
        boolean cancelled;
        boolean done;

        Task(long at) {
            this.at = at;
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(at - clock.nanoTime(), TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed o) {
            return Long.compare(getDelay(TimeUnit.NANOSECONDS), o.getDelay(TimeUnit.NANOSECONDS));
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            if (done || cancelled) return false;
            cancelled = true;
            return true;
        }

        @Override
        public boolean isCancelled() {
            return cancelled;
        }

        @Override
        public boolean isDone() {
            return done || cancelled;
        }

        @Override
        public Object get() {
            return null;
        }

        @Override
        public Object get(long timeout, TimeUnit unit) {
            return null;
        }
    }
}

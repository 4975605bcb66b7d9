package io.quotagate.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * A client-side token bucket in units per minute whose refill rate a {@link RateController} sets from
 * what the server answers: the adaptive limiter of one API, shared by every request this instance
 * sends to it.
 *
 * <ul>
 *   <li>A request asks for its units ({@link #acquire}, {@link #acquireAsync}). It goes at once if the
 *       units are there and nobody is queued; otherwise it waits in a FIFO queue. It is
 *       <em>rejected</em> ({@link RejectedByLimiterException}, never sent, so it costs no quota) when
 *       the queue is full, when its estimated wait exceeds the maximum wait (also when a pause
 *       begins while it waits), or when it is still queued after the maximum wait. So no caller
 *       waits longer than {@link Builder#maxWait}, and no more than {@link Builder#maxQueue} wait
 *       at once: the others are refused at once.</li>
 *   <li>Its {@link Permit} reports the answer. A 429, or a 503 with Retry-After, cuts the rate (the
 *       controller decides by how much), drops the saved units and pauses every request of the
 *       limiter until Retry-After has passed, at most {@link Builder#maxRetryAfter}: a server that
 *       asks for a year is asked again after that. A success raises the rate only if the request
 *       had to wait for units: a client that sends less than its limit gets no bigger limit.</li>
 *   <li>The rate stays within [min, max]. The options describe the whole application: with
 *       {@code n} instances ({@link InstanceCountSource}) each refills at {@code rate / n}.</li>
 * </ul>
 *
 * <p>Thread-safe. Queued requests are granted by a timer ({@link Builder#scheduler}); an
 * {@link #acquireAsync} future completes on it, so do no blocking work in a dependent stage that is
 * not {@code *Async}.
 *
 * <pre>{@code
 * AdaptiveLimiter limiter = AdaptiveLimiter.builder()
 *         .name("billing-api")
 *         .controller(RateController.aimd())
 *         .initialRate(900).minRate(300).maxRate(6000)       // units per minute, whole app
 *         .instanceCount(InstanceCountSource.fixed(3))
 *         .build();
 * }</pre>
 */
public final class AdaptiveLimiter {
    private static final long DEFAULT_RETRY_AFTER_SECONDS = 1;
    // the longest any duration option may be: every deadline and pause then stays far from overflow
    private static final Duration LONGEST_OPTION = Duration.ofDays(1);

    private final String name;
    private final RateController controller;
    private final InstanceCountSource instanceCount;
    private final LimiterClock clock;
    private final long maxWaitNanos;
    private final long maxPauseNanos;
    private final int maxQueue;

    // Everything below is guarded by lock: one small critical section per call, never held while a
    // future completes (a dependent stage may send the request, or acquire again). The bucket (rate,
    // units, pause), the queue of waiters and the wake-up timer are each a class of their own; this
    // one decides with them under the lock and completes the futures outside it.
    private final ReentrantLock lock = new ReentrantLock();
    private final RateBucket bucket;
    private final WaitQueue queue = new WaitQueue();
    private final WakeTimer timer;

    // read by the meter binder
    final LongAdder granted = new LongAdder();
    final LongAdder waitNanos = new LongAdder();
    final LongAdder throttled = new LongAdder();
    final LongAdder rejected = new LongAdder();

    private AdaptiveLimiter(Builder b) {
        this.name = b.name;
        this.controller = b.controller;
        this.instanceCount = b.instanceCount;
        this.clock = b.clock;
        this.maxWaitNanos = b.maxWait.toNanos();
        this.maxPauseNanos = b.maxRetryAfter.toNanos();
        this.maxQueue = b.maxQueue;
        this.bucket = new RateBucket(controller, instanceCount, b.initial, b.min, b.max, b.burst.toNanos(), clock.nanoTime());
        this.timer = new WakeTimer(b.scheduler != null ? b.scheduler : WakeTimer.shared(), clock, this::onWake);
    }

    /** A builder; only {@link Builder#initialRate} has no default. */
    public static Builder builder() {
        return new Builder();
    }

    /** The name given to the builder (the {@code limiter} tag of its meters). */
    public String name() {
        return name;
    }

    /**
     * The rate this instance has learned and sends at now, units per minute: the whole app's rate
     * ({@link #appUnitsPerMinute()}) divided by the instance count read now. It is the refill rate of
     * the limiter's bucket; during a pause after a 429 nothing refills, but the rate stays what the
     * controller set, and the limiter goes on at it when the pause ends. The meter
     * {@link AdaptiveLimiterMeterBinder#RATE} reads this method.
     */
    public double unitsPerMinute() {
        lock.lock();
        try {
            return bucket.instanceRate();
        } finally {
            lock.unlock();
        }
    }

    /**
     * The rate the controller has learned for the whole app, units per minute, within the builder's
     * [{@link Builder#minRate min}, {@link Builder#maxRate max}]: what the options' rates describe,
     * before the division by the instance count. The meter {@link AdaptiveLimiterMeterBinder#APP_RATE}
     * reads this method.
     */
    public double appUnitsPerMinute() {
        lock.lock();
        try {
            return bucket.rate();
        } finally {
            lock.unlock();
        }
    }

    /** The instance count the limiter divides by now. */
    public int instanceCount() {
        return Math.max(1, instanceCount.instances());
    }

    /** Requests waiting for units now. */
    public int queued() {
        lock.lock();
        try {
            return queue.size();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits for {@code units}, at most the maximum wait; the caller then sends the request and reports
     * its answer through the permit.
     *
     * @throws RejectedByLimiterException the request must not be sent (queue full, wait too long)
     * @throws InterruptedException       the thread was interrupted while waiting: it gave up its place
     */
    public Permit acquire(long units) throws InterruptedException, RejectedByLimiterException {
        CompletableFuture<Permit> pending = acquireAsync(units);
        try {
            // the timer completes every waiter within the maximum wait; the margin covers a late timer
            long realWait = (long) (maxWaitNanos / clock.speed()) + TimeUnit.SECONDS.toNanos(1);
            return pending.get(realWait, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            withdraw(pending);
            throw e;
        } catch (TimeoutException e) {
            withdraw(pending);
            rejected.increment();
            throw new RejectedByLimiterException(name, RejectedByLimiterException.Reason.TIMED_OUT);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RejectedByLimiterException r) {
                throw new RejectedByLimiterException(name, r.reason());   // this thread's stack, not the timer's
            }
            throw new IllegalStateException("acquiring units failed", e.getCause());
        }
    }

    /**
     * Asks for {@code units}: the future completes with a permit when they are granted (at once if
     * they are there and nobody waits), or exceptionally with a {@link RejectedByLimiterException}.
     * Cancelling the future gives up the request's place in the queue.
     */
    public CompletableFuture<Permit> acquireAsync(long units) {
        if (units < 0) throw new IllegalArgumentException("units must be >= 0, was " + units);
        Waiter w;
        lock.lock();
        try {
            long now = clock.nanoTime();
            refill(now);
            if (queue.isEmpty() && !bucket.paused(now) && bucket.take(units)) {
                granted.increment();
                return CompletableFuture.completedFuture(new Permit(units, false, now));
            }
            RejectedByLimiterException.Reason refusal = refusal(units, now);
            if (refusal != null) {
                rejected.increment();
                return CompletableFuture.failedFuture(new RejectedByLimiterException(name, refusal));
            }
            w = new Waiter(units, now, now + maxWaitNanos, this::cancelled);
            queue.add(w);
            scheduleWake(now);
        } finally {
            lock.unlock();
        }
        return w;
    }

    /** Why a request that cannot go at once may not queue either, or null if it may. Under lock. */
    private RejectedByLimiterException.Reason refusal(long units, long now) {
        if (queue.size() >= maxQueue) return RejectedByLimiterException.Reason.QUEUE_FULL;
        double wait = (bucket.paused(now) ? bucket.pausedUntil() - now : 0) + bucket.nanosUntil(queue.units() + units);
        return wait > maxWaitNanos ? RejectedByLimiterException.Reason.WAIT_TOO_LONG : null;
    }

    /** A waiter that has been cancelled leaves the queue; one granted meanwhile gives its units back. */
    private void withdraw(CompletableFuture<Permit> pending) {
        if (pending.cancel(false)) return;
        Permit p = pending.getNow(null);
        if (p != null) p.release();
    }

    private void cancelled(Waiter w) {
        lock.lock();
        try {
            queue.remove(w);
        } finally {
            lock.unlock();
        }
    }

    /** Grants the queued requests whose units are there and expires those that waited too long. */
    void poll() {
        List<Waiter> grants = null;
        List<Waiter> expired;
        List<Waiter> doomed;
        long now;
        lock.lock();
        try {
            now = clock.nanoTime();
            refill(now);
            expired = queue.takeDeadlinesBefore(now);
            // a waiter whose deadline comes before the pause ends can never be granted: it is told
            // now, not held until its maximum wait is up
            doomed = queue.takeDeadlinesBefore(bucket.pausedUntil());
            if (!bucket.paused(now)) grants = queue.takeGranted(bucket);
            scheduleWake(now);
        } finally {
            lock.unlock();
        }
        refuse(expired, RejectedByLimiterException.Reason.TIMED_OUT);
        refuse(doomed, RejectedByLimiterException.Reason.WAIT_TOO_LONG);
        if (grants != null) {
            for (Waiter w : grants) {
                Permit p = new Permit(w.units, true, now);
                if (w.complete(p)) {
                    granted.increment();
                    waitNanos.add(now - w.queuedAt);
                } else {
                    p.release();   // cancelled between leaving the queue and here
                }
            }
        }
    }

    private void refuse(List<Waiter> waiters, RejectedByLimiterException.Reason reason) {
        if (waiters == null) return;
        for (Waiter w : waiters) {
            rejected.increment();
            w.completeExceptionally(new RejectedByLimiterException(name, reason));
        }
    }

    /** When the next queued request may be granted or expire; {@code Long.MAX_VALUE} if none is queued. Under lock. */
    private long nextWake(long now) {
        Waiter head = queue.head();
        if (head == null) return Long.MAX_VALUE;
        long deadline = head.deadline + 1;
        if (head.deadline < bucket.pausedUntil()) return now;   // doomed by the pause: refused at the next poll
        if (bucket.paused(now)) return bucket.pausedUntil();
        return Math.min(now + (long) Math.ceil(bucket.nanosUntil(head.units)), deadline);
    }

    // Under lock.
    private void scheduleWake(long now) {
        timer.wakeAt(nextWake(now), now);
    }

    private void onWake() {
        lock.lock();
        try {
            timer.fired();
        } finally {
            lock.unlock();
        }
        poll();
    }

    // Under lock: the bucket holds at least the first waiter's units (one request's, if none waits).
    private void refill(long now) {
        Waiter head = queue.head();
        bucket.refill(now, head == null ? 1 : head.units);
    }

    private void onThrottled(long sentAt, long retryAfterNanos) {
        lock.lock();
        try {
            long now = clock.nanoTime();
            refill(now);
            // at most the maximum pause, itself at most a day: no overflow, and a server asking for a
            // year is asked again after maxRetryAfter
            bucket.throttled(now, sentAt, Math.max(0, Math.min(maxPauseNanos, retryAfterNanos)));
            throttled.increment();
            scheduleWake(now);
        } finally {
            lock.unlock();
        }
    }

    private void onAccepted(boolean waited) {
        lock.lock();
        try {
            long now = clock.nanoTime();
            refill(now);
            if (bucket.accepted(now, waited)) scheduleWake(now);
        } finally {
            lock.unlock();
        }
    }

    private void onPublished(List<RateLimitFields.Limit> limits, List<RateLimitFields.Policy> policies) {
        lock.lock();
        try {
            long now = clock.nanoTime();
            refill(now);
            if (bucket.published(now, limits, policies)) scheduleWake(now);
        } finally {
            lock.unlock();
        }
    }

    private void giveBack(long units) {
        lock.lock();
        try {
            bucket.giveBack(units);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public String toString() {
        return "AdaptiveLimiter[" + name + ", " + controller + "]";
    }

    /**
     * The right to send one request, and the way to tell the limiter how it went: call
     * {@link #complete} with the response (or {@link #accepted}, {@link #throttled}, {@link #published}
     * yourself). A permit whose request failed without an answer needs no call.
     */
    public final class Permit {
        private final long units;
        private final boolean waited;
        private volatile long sentAt;

        private Permit(long units, boolean waited, long grantedAt) {
            this.units = units;
            this.waited = waited;
            this.sentAt = grantedAt;
        }

        /** The units this request took. */
        public long units() {
            return units;
        }

        /** Whether the request had to wait for its units. */
        public boolean waited() {
            return waited;
        }

        /**
         * Reports a response: its {@code RateLimit} / {@code RateLimit-Policy} fields if any, then a 429
         * (or a 503 with a readable Retry-After) as a throttle with its Retry-After, any other 1xx–3xx
         * as accepted; other statuses change nothing. Retry-After is read as delay-seconds (a decimal
         * rounded up) or an HTTP-date (a date in the past: no pause); absent or unreadable (negative,
         * text): 1 s; several values: the longest; the pause is at most {@link Builder#maxRetryAfter}.
         * Whatever the server sends, this never throws.
         *
         * @param headers all values of a header field by name, empty (or null) when absent; e.g.
         *                {@code response.headers()::allValues}
         */
        public void complete(int status, Function<String, List<String>> headers) {
            List<String> limit = values(headers, "RateLimit");
            if (!limit.isEmpty()) published(String.join(", ", limit), String.join(", ", values(headers, "RateLimit-Policy")));
            long seconds = RetryAfter.seconds(values(headers, "Retry-After"), System.currentTimeMillis());
            if (status == 429 || (status == 503 && seconds >= 0)) {
                long s = seconds >= 0 ? seconds : DEFAULT_RETRY_AFTER_SECONDS;
                // the server's seconds are real seconds: on a clock that runs faster they last longer;
                // in double, so that a server's 10^18 s saturates at the maximum pause instead of wrapping
                onThrottled(sentAt, (long) Math.min(maxPauseNanos, s * 1e9 * clock.speed()));
            } else if (status >= 100 && status < 400) {
                accepted();
            }
        }

        /**
         * Marks the moment the request went out, when that is later than its grant (it queued for a
         * connection meanwhile): a throttle of a request sent after the last cut is a new congestion
         * event, one sent before it is not. Without this call, the grant counts as the sending.
         */
        public void sent() {
            sentAt = clock.nanoTime();
        }

        /** The server accepted the request. */
        public void accepted() {
            onAccepted(waited);
        }

        /**
         * The server throttled the request and asked to wait {@code retryAfter} (of the limiter's
         * clock): the limiter pauses that long, at least 0 and at most {@link Builder#maxRetryAfter}.
         */
        public void throttled(Duration retryAfter) {
            long nanos;
            try {
                nanos = Math.min(maxPauseNanos, retryAfter.toNanos());
            } catch (ArithmeticException e) {
                nanos = retryAfter.isNegative() ? 0 : maxPauseNanos;   // beyond ±292 years
            }
            onThrottled(sentAt, nanos);
        }

        /**
         * The response carried these {@code RateLimit} and {@code RateLimit-Policy} field values
         * (several field lines joined by ", "; the policy may be empty). Malformed fields (and a null
         * {@code rateLimit}) are ignored, as RFC 9651 asks of a parser's caller; a rate they would
         * move is clamped to [min, max] as any other.
         */
        public void published(String rateLimit, String rateLimitPolicy) {
            if (rateLimit == null) return;
            List<RateLimitFields.Limit> limits;
            List<RateLimitFields.Policy> policies = new ArrayList<>();
            try {
                limits = RateLimitFields.parseRateLimit(rateLimit);
                if (rateLimitPolicy != null && !rateLimitPolicy.isBlank()) {
                    double speed = clock.speed();
                    for (RateLimitFields.Policy p : RateLimitFields.parsePolicy(rateLimitPolicy)) {
                        // windows are the server's real seconds; the controller lives on the limiter's clock
                        policies.add(speed == 1 ? p : new RateLimitFields.Policy(p.name(), p.quota(),
                                p.windowSeconds().map(w -> Math.round(w * speed)), p.parameters()));
                    }
                }
            } catch (IllegalArgumentException e) {
                return;
            }
            onPublished(limits, policies);
        }

        // the request was never sent after all: its units go back to the bucket
        void release() {
            giveBack(units);
        }

        private List<String> values(Function<String, List<String>> headers, String name) {
            List<String> v = headers.apply(name);
            return v == null ? List.of() : v;
        }
    }

    /** Builds an {@link AdaptiveLimiter}; each setter checks its value at once, {@link #build()} the rest. */
    public static final class Builder {
        private String name = "default";
        private RateController controller;
        private double initial = Double.NaN;
        private double min = Double.NaN;
        private double max = Double.NaN;
        private InstanceCountSource instanceCount = InstanceCountSource.fixed(1);
        private Duration maxWait = Duration.ofSeconds(5);
        private Duration maxRetryAfter = Duration.ofMinutes(5);
        private int maxQueue = 100;
        private Duration burst = Duration.ofSeconds(1);
        private LimiterClock clock = LimiterClock.system();
        private ScheduledExecutorService scheduler;

        private Builder() {
        }

        /** The limiter's name, in messages and as the meters' {@code limiter} tag; default {@code default}. */
        public Builder name(String name) {
            this.name = Objects.requireNonNull(name, "name");
            if (name.isBlank()) throw new IllegalArgumentException("name must not be blank");
            return this;
        }

        /** How the rate moves; default {@link RateController#aimd()}. Give each limiter its own. */
        public Builder controller(RateController controller) {
            this.controller = Objects.requireNonNull(controller, "controller");
            return this;
        }

        /** The starting rate of the whole app, units per minute, &gt; 0; required. */
        public Builder initialRate(double unitsPerMinute) {
            this.initial = positive("initialRate", unitsPerMinute);
            return this;
        }

        /**
         * The lowest rate of the whole app, units per minute, &gt; 0; default initial ÷ 100, so that an
         * initial guess ten times too high still leaves the controller room below the quota.
         */
        public Builder minRate(double unitsPerMinute) {
            this.min = positive("minRate", unitsPerMinute);
            return this;
        }

        /** The highest rate of the whole app, units per minute; default initial × 10. */
        public Builder maxRate(double unitsPerMinute) {
            this.max = positive("maxRate", unitsPerMinute);
            return this;
        }

        /** How many instances share the rate; default {@code InstanceCountSource.fixed(1)}. */
        public Builder instanceCount(InstanceCountSource source) {
            this.instanceCount = Objects.requireNonNull(source, "instanceCount");
            return this;
        }

        /**
         * The longest a request may wait for units before it is rejected unsent, in [0, 1 day]; default
         * 5 s. {@link #acquire} and the clients' {@code send} block at most this long (and a second
         * for a late timer) before the request is sent or refused.
         */
        public Builder maxWait(Duration maxWait) {
            this.maxWait = atMostADay("maxWait", maxWait);
            return this;
        }

        /**
         * The longest pause a 429 (or 503) may impose, whatever its Retry-After says, in [0, 1 day];
         * default 5 min. A server that asks for more (a year, 10^30 seconds, a date in 2100) is asked
         * again after this, so the limiter comes back when the server does. Requests arriving during
         * a pause longer than {@link #maxWait} are refused at once.
         */
        public Builder maxRetryAfter(Duration maxRetryAfter) {
            this.maxRetryAfter = atMostADay("maxRetryAfter", maxRetryAfter);
            return this;
        }

        private static Duration atMostADay(String field, Duration d) {
            Objects.requireNonNull(d, field);
            if (d.isNegative() || d.compareTo(LONGEST_OPTION) > 0) {
                throw new IllegalArgumentException(field + " must be in [0, " + LONGEST_OPTION + "], was " + d);
            }
            return d;
        }

        /** The most requests that may wait at once, &gt; 0; default 100. */
        public Builder maxQueue(int maxQueue) {
            if (maxQueue <= 0) throw new IllegalArgumentException("maxQueue must be > 0, was " + maxQueue);
            this.maxQueue = maxQueue;
            return this;
        }

        /**
         * How much rate the bucket saves while nobody waits: {@code rate × burst} units (at least one
         * request's), &ge; 0; default 1 s. Longer lets a quiet client send a burst, which a hidden
         * quota may answer with 429s.
         */
        public Builder burst(Duration burst) {
            Objects.requireNonNull(burst, "burst");
            if (burst.isNegative()) throw new IllegalArgumentException("burst must be >= 0, was " + burst);
            this.burst = burst;
            return this;
        }

        /** The clock; default {@link LimiterClock#system()}. */
        public Builder clock(LimiterClock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            if (!(clock.speed() > 0)) throw new IllegalArgumentException("clock speed must be > 0, was " + clock.speed());
            return this;
        }

        /**
         * The timer that grants queued requests; default one daemon thread shared by all limiters. Its
         * thread completes {@link #acquireAsync} futures. The caller owns (and shuts down) one given here.
         */
        public Builder scheduler(ScheduledExecutorService scheduler) {
            this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
            return this;
        }

        /** @throws IllegalArgumentException naming the setting, when the settings do not fit together */
        public AdaptiveLimiter build() {
            if (Double.isNaN(initial)) throw new IllegalArgumentException("initialRate: required (units per minute for the whole app)");
            if (Double.isNaN(min)) min = Math.min(initial, initial / 100);
            if (Double.isNaN(max)) max = Math.max(initial, initial * 10);
            if (min > max) throw new IllegalArgumentException("minRate " + min + " is above maxRate " + max);
            if (initial < min || initial > max) {
                throw new IllegalArgumentException("initialRate " + initial + " is outside [minRate " + min + ", maxRate " + max + "]");
            }
            if (controller == null) controller = RateController.aimd();
            return new AdaptiveLimiter(this);
        }

        private static double positive(String field, double value) {
            if (!(value > 0) || Double.isInfinite(value)) throw new IllegalArgumentException(field + " must be > 0 and finite, was " + value);
            return value;
        }
    }
}

package io.quotagate.loadtest.client;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.IntSupplier;

/**
 * A client-side token bucket in units per minute whose refill rate comes from a
 * {@link RateController}, with a bounded FIFO queue of requests waiting for units.
 *
 * <p>Each instance of a client refills at {@code controller.unitsPerMinute() / instanceCount}. A
 * request that finds enough units and nobody queued goes at once; otherwise it queues. It is
 * rejected by the limiter (never sent, so it costs no quota) if the queue is full, if its estimated
 * wait is longer than the maximum wait, or if it is still queued when the maximum wait is over
 * (the rate may have dropped since it queued). A throttle pauses the whole bucket until the
 * server's Retry-After: no units accumulate and nobody leaves the queue meanwhile.
 *
 * <p>Time is the caller's clock in nanoseconds; the caller polls ({@link #poll}) when
 * {@link #nextWake} says something may happen. Thread-safe.
 *
 * @param <T> what the caller queues (its request)
 */
public final class ClientLimiter<T> {
    /**
     * @param maxWait    longest a request may wait for units
     * @param queueLimit most requests queued at once, &gt; 0
     * @param burst      how much rate the bucket can save up while nobody waits ({@code rate × burst} units, at least one request's)
     */
    public record Options(Duration maxWait, int queueLimit, Duration burst) {
        public Options {
            Objects.requireNonNull(maxWait, "maxWait");
            Objects.requireNonNull(burst, "burst");
            if (maxWait.isNegative()) throw new IllegalArgumentException("maxWait must be >= 0");
            if (queueLimit <= 0) throw new IllegalArgumentException("queueLimit must be > 0");
            if (burst.isNegative()) throw new IllegalArgumentException("burst must be >= 0");
        }
    }

    /** What became of an offered request. */
    public enum Offer {
        /** enough units: send now (it did not wait) */
        GRANTED,
        /** queued: {@link #poll} will grant or expire it */
        QUEUED,
        /** refused by the limiter: queue full or the wait would be too long */
        REJECTED
    }

    /** The outcome of a poll: requests to send now (they waited) and requests whose wait ran out. */
    public record Released<T>(List<T> granted, List<T> expired) {
    }

    private record Waiter<T>(T item, long units, long deadline) {
    }

    private final RateController controller;
    private final IntSupplier instanceCount;
    private final long maxWaitNanos;
    private final int queueLimit;
    private final long burstNanos;
    private final ArrayDeque<Waiter<T>> queue = new ArrayDeque<>();
    private long queuedUnits;
    private double tokens;
    private long lastRefill;
    private long pausedUntil = Long.MIN_VALUE;

    /** Starts empty at {@code now}. */
    public ClientLimiter(RateController controller, IntSupplier instanceCount, Options options, long now) {
        this.controller = Objects.requireNonNull(controller, "controller");
        this.instanceCount = Objects.requireNonNull(instanceCount, "instanceCount");
        this.maxWaitNanos = options.maxWait().toNanos();
        this.queueLimit = options.queueLimit();
        this.burstNanos = options.burst().toNanos();
        this.lastRefill = now;
    }

    /** This instance's share of the controller's rate, units per minute. */
    public synchronized double instanceRate() {
        return controller.unitsPerMinute() / Math.max(1, instanceCount.getAsInt());
    }

    /** Offers a request needing {@code units}. */
    public synchronized Offer offer(T item, long units, long now) {
        refill(now);
        boolean paused = now < pausedUntil;
        if (queue.isEmpty() && !paused && tokens >= units) {
            tokens -= units;
            return Offer.GRANTED;
        }
        if (queue.size() >= queueLimit) return Offer.REJECTED;
        double perNano = instanceRate() / 60e9;
        double missing = Math.max(0, queuedUnits + units - tokens);
        double wait = (paused ? pausedUntil - now : 0) + missing / perNano;
        if (wait > maxWaitNanos) return Offer.REJECTED;
        queue.addLast(new Waiter<>(item, units, now + maxWaitNanos));
        queuedUnits += units;
        return Offer.QUEUED;
    }

    /** Grants the queued requests whose units are there, expires those that waited too long. */
    public synchronized Released<T> poll(long now) {
        refill(now);
        List<T> granted = new ArrayList<>();
        List<T> expired = new ArrayList<>();
        if (!queue.isEmpty()) {
            queue.removeIf(w -> {
                if (w.deadline() >= now) return false;
                expired.add(w.item());
                queuedUnits -= w.units();
                return true;
            });
        }
        while (now >= pausedUntil && !queue.isEmpty() && tokens >= queue.peekFirst().units()) {
            Waiter<T> w = queue.pollFirst();
            tokens -= w.units();
            queuedUnits -= w.units();
            granted.add(w.item());
        }
        return new Released<>(granted, expired);
    }

    /** When {@link #poll} may next grant or expire something; {@code Long.MAX_VALUE} if nothing is queued. */
    public synchronized long nextWake(long now) {
        if (queue.isEmpty()) return Long.MAX_VALUE;
        long soonestDeadline = queue.stream().mapToLong(Waiter::deadline).min().orElse(Long.MAX_VALUE) + 1;
        if (now < pausedUntil) return Math.min(pausedUntil, soonestDeadline);
        double perNano = instanceRate() / 60e9;
        double missing = Math.max(0, queue.peekFirst().units() - tokens);
        long tokenAt = now + (long) Math.ceil(missing / perNano);
        return Math.min(tokenAt, soonestDeadline);
    }

    /**
     * The server throttled a request sent at {@code sentAt}: tell the controller, drop the saved
     * units, pause until Retry-After.
     */
    public synchronized void throttled(long now, long sentAt, long retryAfterNanos) {
        refill(now);
        controller.onThrottled(now, sentAt);
        // units saved before the throttle are no credit: the server just said we are over
        tokens = 0;
        pausedUntil = Math.max(pausedUntil, now + Math.max(0, retryAfterNanos));
    }

    /** The server accepted a request; {@code waited}: it had queued for units. */
    public synchronized void accepted(long now, boolean waited) {
        refill(now);
        controller.onAccepted(now, waited);
    }

    /** The server published its limits on a response. */
    public synchronized void published(long now, List<RateLimitFields.Limit> limits, List<RateLimitFields.Policy> policies) {
        refill(now);
        controller.onPublished(now, limits, policies);
    }

    /** Requests queued now. */
    public synchronized int queued() {
        return queue.size();
    }

    // Units accumulate at the rate in force since the last refill; callers refill before the rate changes.
    private void refill(long now) {
        long from = Math.max(lastRefill, pausedUntil);
        if (now > from) {
            double rate = instanceRate();
            double cap = Math.max(queue.isEmpty() ? 1 : queue.peekFirst().units(), rate / 60e9 * burstNanos);
            tokens = Math.min(cap, tokens + rate / 60e9 * (now - from));
        }
        lastRefill = Math.max(lastRefill, now);
    }
}

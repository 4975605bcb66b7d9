package io.quotagate.client;

import java.util.List;

/**
 * The token bucket of an {@link AdaptiveLimiter}: the whole app's rate as its controller sets it within
 * [min, max], this instance's share of it, the units saved, and the pause a throttle imposes. Units
 * accumulate at the rate in force since the last refill (every change of the rate refills first), at most
 * {@code rate × burst} (and at least one request's); nothing accumulates during a pause. Not thread-safe:
 * used under the limiter's lock.
 */
final class RateBucket {
    private final RateController controller;
    private final InstanceCountSource instanceCount;
    private final double min;
    private final double max;
    private final long burstNanos;
    private double rate;                 // units per minute, whole app
    private double tokens;
    private long lastRefill;
    private long pausedUntil = Long.MIN_VALUE;

    RateBucket(RateController controller, InstanceCountSource instanceCount, double initial, double min, double max,
               long burstNanos, long now) {
        this.controller = controller;
        this.instanceCount = instanceCount;
        this.min = min;
        this.max = max;
        this.burstNanos = burstNanos;
        this.lastRefill = now;
        this.rate = clamp(controller.start(initial, min, max, now));
    }

    /** The whole app's rate, units per minute. */
    double rate() {
        return rate;
    }

    /** This instance's rate: the whole app's divided by the instance count, units per minute. */
    double instanceRate() {
        return rate / Math.max(1, instanceCount.instances());
    }

    long pausedUntil() {
        return pausedUntil;
    }

    boolean paused(long now) {
        return now < pausedUntil;
    }

    /**
     * Adds the units accumulated since the last refill, the bucket holding at least {@code atLeast} (the
     * first waiter's units, so a request larger than the burst can still be granted).
     */
    void refill(long now, long atLeast) {
        long from = Math.max(lastRefill, pausedUntil);
        if (now > from) {
            double perNano = instanceRate() / 60e9;
            double cap = Math.max(atLeast, perNano * burstNanos);
            tokens = Math.min(cap, tokens + perNano * (now - from));
        }
        lastRefill = Math.max(lastRefill, now);
    }

    /** Takes {@code units} if they are there. */
    boolean take(long units) {
        if (tokens < units) return false;
        tokens -= units;
        return true;
    }

    /** Units a request took but never used (it was not sent). */
    void giveBack(long units) {
        tokens += units;
    }

    /** Nanoseconds until {@code units} are there at this instance's rate now (0 if they are); no pause counted. */
    double nanosUntil(double units) {
        double perNano = instanceRate() / 60e9;
        return Math.max(0, units - tokens) / perNano;
    }

    /**
     * A throttle of a request sent at {@code sentAt}: the controller cuts the rate, the saved units go (the
     * server just said we are over: they are no credit), and nothing is granted for {@code pauseNanos}.
     */
    void throttled(long now, long sentAt, long pauseNanos) {
        rate = clamp(controller.onThrottled(rate, now, sentAt));
        tokens = 0;
        pausedUntil = Math.max(pausedUntil, now + pauseNanos);
    }

    /** A request accepted; true if the controller raised the rate. */
    boolean accepted(long now, boolean waited) {
        double before = rate;
        rate = clamp(controller.onAccepted(rate, now, waited));
        return rate > before;
    }

    /** RateLimit fields published; true if the controller raised the rate. */
    boolean published(long now, List<RateLimitFields.Limit> limits, List<RateLimitFields.Policy> policies) {
        double before = rate;
        rate = clamp(controller.onPublished(rate, now, limits, policies));
        return rate > before;
    }

    private double clamp(double r) {
        return Double.isNaN(r) ? min : Math.max(min, Math.min(max, r));
    }
}

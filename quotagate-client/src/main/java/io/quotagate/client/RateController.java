package io.quotagate.client;

import java.time.Duration;
import java.util.List;

/**
 * Decides how fast an {@link AdaptiveLimiter} refills, from what the server answers.
 *
 * <p>Rates are units per minute <em>for the whole application</em>: with several instances, each
 * instance's limiter refills at {@code rate / instanceCount}, so a controller's increase step shrinks
 * by the same factor without knowing it. The limiter keeps the rate between its minimum and maximum:
 * a controller returns the rate it wants, and the limiter clamps it. Times are nanoseconds of the
 * limiter's {@link LimiterClock}.
 *
 * <p>A controller keeps state: give each limiter its own (the factories return a new one per call).
 * The limiter calls it under its lock, so an implementation need not be thread-safe.
 *
 * <pre>{@code
 * RateController.aimd()                                   // 0.7, +360/min, every 5 s
 * RateController.aimd(0.5, 120, Duration.ofSeconds(2))
 * RateController.cubic()                                  // RFC 8312: beta 0.7, C 0.4
 * RateController.publishedPacing()                        // reads RateLimit / RateLimit-Policy
 * }</pre>
 */
public interface RateController {
    /**
     * Called once, when the limiter is built, before any other method; returns the starting rate.
     *
     * @param initial the limiter's initial rate (already within [min, max])
     * @param min     the lowest rate the limiter allows
     * @param max     the highest rate the limiter allows
     * @param now     the limiter's clock
     */
    default double start(double initial, double min, double max, long now) {
        return initial;
    }

    /**
     * A request sent at {@code sentAt} was throttled (429, or 503 with Retry-After) at {@code now};
     * returns the new rate. Throttles of requests sent before the last decrease belong to the same
     * congestion event and should not decrease the rate again.
     */
    double onThrottled(double rate, long now, long sentAt);

    /**
     * A request was accepted at {@code now}; {@code waited}: it had to wait for units. Returns the new
     * rate. A client that sends less than its limit must not raise the limit, so a controller raises
     * the rate only when requests waited.
     */
    double onAccepted(double rate, long now, boolean waited);

    /**
     * A response carried {@code RateLimit} fields (windows already in the limiter's clock); returns the
     * new rate. Controllers that do not read them keep the default.
     */
    default double onPublished(double rate, long now, List<RateLimitFields.Limit> limits,
                               List<RateLimitFields.Policy> policies) {
        return rate;
    }

    /** AIMD with the seeds' settings: rate × 0.7 on a throttle, + 360 units/min at most every 5 s. */
    static RateController aimd() {
        return aimd(0.7, 360, Duration.ofSeconds(5));
    }

    /**
     * Additive increase, multiplicative decrease, as TCP does for congestion: on a throttle the rate
     * is multiplied by {@code decreaseFactor} (once per congestion event); on an accepted request that
     * had waited for units, {@code increaseStep} is added, at most once per {@code increaseInterval},
     * and never within an interval after a decrease.
     *
     * @param decreaseFactor   in (0, 1)
     * @param increaseStep     units per minute for the whole app, &gt; 0
     * @param increaseInterval &gt; 0
     */
    static RateController aimd(double decreaseFactor, double increaseStep, Duration increaseInterval) {
        return new Aimd(decreaseFactor, increaseStep, increaseInterval);
    }

    /** CUBIC with RFC 8312's constants: beta 0.7, C 0.4. */
    static RateController cubic() {
        return cubic(0.7, 0.4);
    }

    /**
     * The CUBIC window of RFC 8312 applied to a rate: {@code W(t) = C·(t − K)³ + W_max}, {@code W} in
     * units per second for the whole app (a round trip of one second), {@code W_max} the rate at the
     * last throttle, {@code K = ∛(W_max·(1 − β)/C)}; fast convergence on. It comes back quickly below
     * {@code W_max}, lingers near it, then probes above it. The rate grows only on requests that waited.
     *
     * @param beta in (0, 1): the rate after a throttle is {@code beta × rate}
     * @param c    &gt; 0, units per second per second³
     */
    static RateController cubic(double beta, double c) {
        return new Cubic(beta, c);
    }

    /** {@link #publishedPacing(Duration)} with a time constant of 5 seconds. */
    static RateController publishedPacing() {
        return publishedPacing(Duration.ofSeconds(5));
    }

    /**
     * Paces from the {@code RateLimit} / {@code RateLimit-Policy} fields the server publishes, so that
     * it needs no 429: keeps the remaining units of the most constrained policy near 5 % of its quota
     * with a proportional-integral loop of time constant {@code tau}. A 429 still pauses the limiter
     * and trims the rate by 10 %. Without fields it keeps its rate.
     */
    static RateController publishedPacing(Duration tau) {
        return new PublishedPacing(tau);
    }

    /** A rate that never changes: a classic client-side token bucket at {@code unitsPerMinute}. */
    static RateController fixed(double unitsPerMinute) {
        if (!(unitsPerMinute > 0)) throw new IllegalArgumentException("unitsPerMinute must be > 0, was " + unitsPerMinute);
        return new RateController() {
            @Override
            public double start(double initial, double min, double max, long now) {
                if (unitsPerMinute < min || unitsPerMinute > max) {
                    throw new IllegalArgumentException("fixed rate " + unitsPerMinute + " is outside [" + min + ", " + max + "]");
                }
                return unitsPerMinute;
            }

            @Override
            public double onThrottled(double rate, long now, long sentAt) {
                return unitsPerMinute;
            }

            @Override
            public double onAccepted(double rate, long now, boolean waited) {
                return unitsPerMinute;
            }

            @Override
            public String toString() {
                return "fixed(" + unitsPerMinute + ")";
            }
        };
    }
}

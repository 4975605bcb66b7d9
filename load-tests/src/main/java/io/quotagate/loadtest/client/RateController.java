package io.quotagate.loadtest.client;

import java.util.List;

/**
 * Decides how fast a client's limiter refills, from what the server answers.
 *
 * <p>Rates are in units per minute <em>for the whole app</em>: with several instances of one client,
 * each instance's limiter refills at {@code unitsPerMinute() / instanceCount}. Times are nanoseconds
 * of the clock the caller runs on (a scenario clock in load tests, a manual clock in unit tests).
 * Implementations are not thread-safe; {@link ClientLimiter} calls them under its lock.
 */
public interface RateController {
    /** The current rate for the whole app, in units per minute. */
    double unitsPerMinute();

    /**
     * A request sent at {@code sentAt} was throttled (429, or 503 with Retry-After) at {@code now}.
     * Throttles of requests sent before the last decrease belong to the same congestion event and
     * must not decrease the rate again.
     */
    void onThrottled(long now, long sentAt);

    /**
     * A request was accepted at {@code now}; {@code waited} tells whether it had to wait for units.
     * A client that sends less than its limit must not raise the limit.
     */
    void onAccepted(long now, boolean waited);

    /** Whatever the server published on a response (no-op for controllers that do not read it). */
    default void onPublished(long now, List<RateLimitFields.Limit> limits, List<RateLimitFields.Policy> policies) {
    }

    /** Clamps a rate to [min, max]. */
    static double clamp(double rate, double min, double max) {
        return Math.max(min, Math.min(max, rate));
    }
}

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
 * RateController.aimd()                                   // steps relative to the rate: fits any quota
 * RateController.aimd(0.5, 120, Duration.ofSeconds(2))    // fixed steps, as tuned by hand
 * RateController.cubic()                                  // as aimd(), probing along a cubic
 * RateController.cubic(0.7, 0.4)                          // RFC 8312: beta 0.7, C 0.4
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

    /**
     * The default: AIMD whose every step is relative to the current rate or to the last ceiling, so
     * that it fits a quota of 1 request/s as well as one of 10,000/s without tuning.
     * <ul>
     *   <li>Slow start: the rate doubles, at most once a second, until the first throttle.</li>
     *   <li>A throttle (once per congestion event) cuts to 0.8 × rate and remembers 0.9 × rate as the
     *       ceiling, if at least 80 % of this instance's answers since the last cut were accepted;
     *       otherwise to the accepted share of the rate (never below 0.7 × rate), the new ceiling.</li>
     *   <li>After a cut the rate stays at or below the ceiling for at least 30 s and 300 of this
     *       instance's answers (at most 15 min), then adds 0.5 % of the ceiling a second.</li>
     *   <li>Three cuts in a row with nothing accepted (a server refusing everything) keep the ceiling
     *       of before, so the rate climbs back to it when the server recovers.</li>
     * </ul>
     * In a simulation of ten minutes against hidden quotas of 1, 5, 100 and 2,000 requests/s, one and
     * three instances, initial rates of 0.1×, 1× and 10× the quota, with the limiter's defaults: from
     * 30 s on, 96.3–100 % of the quota used with 0–0.89 % of the answers 429; after a 20 s outage,
     * 90 % of the quota again within 12 s. {@link #aimd(double, double, Duration)} is the classic
     * AIMD with fixed steps (before issue 42 this method was {@code aimd(0.7, 360, 5 s)}).
     */
    static RateController aimd() {
        return new RelativeController(RelativeController.Probe.LINEAR);
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

    /**
     * The default CUBIC: as {@link #aimd()} (slow start, cut, linger at the ceiling, outage), but the
     * probe after the linger follows {@code ceiling · (1 + (t / 2 min)³)}, {@code t} since the linger
     * ended: flat near the ceiling, twice the ceiling after two minutes. Same simulation, same
     * figures (96.3–100 % of the quota, 0–0.89 % 429s). {@link #cubic(double, double)} is RFC 8312's
     * window with absolute constants (before issue 42 this method was {@code cubic(0.7, 0.4)}).
     */
    static RateController cubic() {
        return new RelativeController(RelativeController.Probe.CUBIC);
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
     * and trims the rate by 10 %. While no readable field has come for {@code tau} (a server that
     * publishes none), it moves as {@link #aimd()} does: a 429 cuts the rate, and the 2xx answers of
     * requests that waited climb back, doubling at most once a second, to the ceiling the 429s left.
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

package io.quotagate.loadtest.client;

/**
 * The CUBIC window of RFC 8312 (§4.1, §4.5, §4.6), applied to a rate instead of a congestion
 * window: {@code W(t) = C·(t − K)³ + W_max} with {@code K = ∛(W_max·(1 − β)/C)}, where {@code t} is
 * the seconds since the last throttle, {@code W_max} is the rate at the last throttle and a
 * throttle sets the rate to {@code β·W_max}. The RFC counts {@code W} in segments per round trip;
 * here {@code W} is units per second for the whole app (as if the round trip were one second), so
 * {@code C = 0.4} means what it means in TCP: about 3.3 s to come back to a {@code W_max} of 50
 * units/s (3,000/min). Options and {@link #unitsPerMinute()} stay in units per minute.
 *
 * <p>The curve is concave below {@code W_max} (it comes back quickly, then lingers near the rate
 * that was throttled last time) and convex above it (it probes slowly, then faster). Fast
 * convergence (§4.6) is on: a throttle below the previous {@code W_max} lowers {@code W_max} to
 * {@code W·(1 + β)/2}, releasing share to a newcomer. Like the AIMD controller, the rate grows only
 * on accepted requests that had to wait for units. The TCP-friendly region (§4.2) does not apply:
 * there is no Reno flow to be fair to.
 *
 * <p>Before the first throttle the epoch starts at the initial rate with {@code K = 0}, so the rate
 * grows as {@code initial + C·t³}.
 */
public final class Cubic implements RateController {
    /**
     * CUBIC settings for the whole app (rates in units per minute).
     *
     * @param initial starting rate
     * @param min     lowest rate
     * @param max     highest rate
     * @param beta    multiplicative decrease, in (0, 1); RFC 8312: 0.7
     * @param c       the cubic's scale, units per second per second³; RFC 8312: 0.4
     */
    public record Options(double initial, double min, double max, double beta, double c) {
        public Options {
            if (!(min > 0) || min > max) throw new IllegalArgumentException("need 0 < min <= max, was " + min + ", " + max);
            if (initial < min || initial > max) throw new IllegalArgumentException("initial must be in [min, max], was " + initial);
            if (!(beta > 0 && beta < 1)) throw new IllegalArgumentException("beta must be in (0, 1), was " + beta);
            if (!(c > 0)) throw new IllegalArgumentException("c must be > 0, was " + c);
        }
    }

    private final Options options;
    private double rate;
    private double wMax;
    private double k;
    private long epochStart;
    private long lastDecrease = Long.MIN_VALUE;

    /** Starts at {@code options.initial()} with an epoch beginning at {@code now}. */
    public Cubic(Options options, long now) {
        this.options = options;
        this.rate = options.initial();
        this.wMax = options.initial();
        this.k = 0;
        this.epochStart = now;
    }

    @Override
    public double unitsPerMinute() {
        return rate;
    }

    /** {@code W_max} in units per minute: the rate at the last throttle (after fast convergence). */
    public double wMax() {
        return wMax;
    }

    /** {@code K}, in seconds: how long after a throttle the curve is back at {@code W_max}. */
    public double k() {
        return k;
    }

    @Override
    public void onThrottled(long now, long sentAt) {
        if (lastDecrease != Long.MIN_VALUE && sentAt < lastDecrease) return;
        double beta = options.beta();
        wMax = rate < wMax ? rate * (1 + beta) / 2 : rate;
        rate = RateController.clamp(rate * beta, options.min(), options.max());
        k = Math.cbrt(wMax / 60 * (1 - beta) / options.c());
        epochStart = now;
        lastDecrease = now;
    }

    @Override
    public void onAccepted(long now, boolean waited) {
        if (!waited) return;
        rate = RateController.clamp(window(now), options.min(), options.max());
    }

    /** {@code W(t)} at {@code now} in units per minute, before clamping. */
    double window(long now) {
        double t = (now - epochStart) / 1e9;
        double d = t - k;
        return (options.c() * d * d * d + wMax / 60) * 60;
    }
}

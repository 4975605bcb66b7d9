package io.quotagate.client;

/**
 * {@link RateController#cubic(double, double)}: the CUBIC window of RFC 8312 (§4.1, §4.5, §4.6),
 * applied to a rate instead of a congestion window: {@code W(t) = C·(t − K)³ + W_max} with
 * {@code K = ∛(W_max·(1 − β)/C)}, where {@code t} is the seconds since the last throttle,
 * {@code W_max} is the rate at the last throttle and a throttle sets the rate to {@code β·W_max}. The
 * RFC counts {@code W} in segments per round trip; here {@code W} is units per second for the whole
 * app (as if the round trip were one second), so {@code C = 0.4} means what it means in TCP: about
 * 3.3 s to come back to a {@code W_max} of 50 units/s (3,000/min).
 *
 * <p>Fast convergence (§4.6) is on: a throttle below the previous {@code W_max} lowers {@code W_max}
 * to {@code W·(1 + β)/2}, releasing share to a newcomer. The rate grows only on accepted requests that
 * had to wait for units. The TCP-friendly region (§4.2) does not apply: there is no Reno flow to be
 * fair to. Before the first throttle the epoch starts at the initial rate with {@code K = 0}, so the
 * rate grows as {@code initial + C·t³}.
 */
final class Cubic implements RateController {
    private final double beta;
    private final double c;
    private double wMax;
    private double k;
    private long epochStart;
    private long lastDecrease = Long.MIN_VALUE;

    Cubic(double beta, double c) {
        if (!(beta > 0 && beta < 1)) throw new IllegalArgumentException("beta must be in (0, 1), was " + beta);
        if (!(c > 0)) throw new IllegalArgumentException("c must be > 0, was " + c);
        this.beta = beta;
        this.c = c;
    }

    @Override
    public double start(double initial, double min, double max, long now) {
        wMax = initial;
        k = 0;
        epochStart = now;
        return initial;
    }

    /** {@code W_max} in units per minute: the rate at the last throttle (after fast convergence). */
    double wMax() {
        return wMax;
    }

    /** {@code K}, in seconds: how long after a throttle the curve is back at {@code W_max}. */
    double k() {
        return k;
    }

    @Override
    public double onThrottled(double rate, long now, long sentAt) {
        if (lastDecrease != Long.MIN_VALUE && sentAt < lastDecrease) return rate;
        wMax = rate < wMax ? rate * (1 + beta) / 2 : rate;
        k = Math.cbrt(wMax / 60 * (1 - beta) / c);
        epochStart = now;
        lastDecrease = now;
        return rate * beta;
    }

    @Override
    public double onAccepted(double rate, long now, boolean waited) {
        return waited ? window(now) : rate;
    }

    /** {@code W(t)} at {@code now} in units per minute, before clamping. */
    double window(long now) {
        double t = (now - epochStart) / 1e9;
        double d = t - k;
        return (c * d * d * d + wMax / 60) * 60;
    }

    @Override
    public String toString() {
        return "cubic(" + beta + ", " + c + ")";
    }
}

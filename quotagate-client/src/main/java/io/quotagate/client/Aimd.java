package io.quotagate.client;

import java.time.Duration;
import java.util.Objects;

/** {@link RateController#aimd(double, double, Duration)}: down fast on a throttle, up slowly while requests wait. */
final class Aimd implements RateController {
    private final double decreaseFactor;
    private final double increaseStep;
    private final long intervalNanos;
    private long lastIncrease;
    private long lastDecrease = Long.MIN_VALUE;

    Aimd(double decreaseFactor, double increaseStep, Duration increaseInterval) {
        Objects.requireNonNull(increaseInterval, "increaseInterval");
        if (!(decreaseFactor > 0 && decreaseFactor < 1)) {
            throw new IllegalArgumentException("decreaseFactor must be in (0, 1), was " + decreaseFactor);
        }
        if (!(increaseStep > 0)) throw new IllegalArgumentException("increaseStep must be > 0, was " + increaseStep);
        if (increaseInterval.isNegative() || increaseInterval.isZero()) {
            throw new IllegalArgumentException("increaseInterval must be > 0, was " + increaseInterval);
        }
        this.decreaseFactor = decreaseFactor;
        this.increaseStep = increaseStep;
        this.intervalNanos = increaseInterval.toNanos();
    }

    @Override
    public double start(double initial, double min, double max, long now) {
        // the first increase may come one interval after the start
        lastIncrease = now;
        return initial;
    }

    @Override
    public double onThrottled(double rate, long now, long sentAt) {
        // a 429 for a request sent before the last cut reports the congestion already answered
        if (lastDecrease != Long.MIN_VALUE && sentAt < lastDecrease) return rate;
        lastDecrease = now;
        // the next increase waits a full interval after the cut: otherwise the cut is undone at once
        lastIncrease = now;
        return rate * decreaseFactor;
    }

    @Override
    public double onAccepted(double rate, long now, boolean waited) {
        if (!waited || now - lastIncrease < intervalNanos) return rate;
        lastIncrease = now;
        return rate + increaseStep;
    }

    @Override
    public String toString() {
        return "aimd(" + decreaseFactor + ", " + increaseStep + ", " + Duration.ofNanos(intervalNanos) + ")";
    }
}

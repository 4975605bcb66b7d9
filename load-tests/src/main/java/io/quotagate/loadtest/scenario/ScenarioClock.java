package io.quotagate.loadtest.scenario;

import io.quotagate.client.LimiterClock;

import java.util.concurrent.locks.LockSupport;

/**
 * Scenario time: real time multiplied by the speed-up, from a common origin. Everything a scenario
 * decides (rates, intervals, waits, Retry-After) runs on this clock, so the same code gives the
 * same story at {@code --speed 1} and {@code --speed 30}.
 */
final class ScenarioClock implements LimiterClock {
    private volatile long origin;
    private final double speed;

    ScenarioClock(double speed) {
        if (!(speed > 0)) throw new IllegalArgumentException("speed must be > 0, was " + speed);
        this.origin = System.nanoTime();
        this.speed = speed;
    }

    /** Moves the origin to now: scenario time 0 is when everything is ready to go. */
    void restart() {
        origin = System.nanoTime();
    }

    /** Scenario nanoseconds since the origin. */
    long now() {
        return at(System.nanoTime());
    }

    /** The scenario time of a {@link System#nanoTime()} reading. */
    long at(long systemNanos) {
        return (long) ((systemNanos - origin) * speed);
    }

    /** Scenario nanoseconds per real nanosecond. */
    @Override
    public double speed() {
        return speed;
    }

    /** {@link #now()}: the clients' limiters run on scenario time. */
    @Override
    public long nanoTime() {
        return now();
    }

    /** Parks the calling thread for about this many scenario nanoseconds (at most {@code maxRealNanos} of real time). */
    void park(long scenarioNanos, long maxRealNanos) {
        long real = (long) (scenarioNanos / speed);
        if (real > 0) LockSupport.parkNanos(Math.min(real, maxRealNanos));
    }
}

package io.quotagate.filter.store;

import io.github.bucket4j.TimeMeter;

/**
 * The time a store gives its local buckets: bucket4j's {@link TimeMeter}, which may trail the clock
 * ({@link TickingTime}), and a way to catch up before a refusal is final.
 */
abstract class BucketTime implements TimeMeter {
    /**
     * Reads the clock itself, so that the next {@link #currentTimeNanos} is at least that time.
     *
     * @return false if {@link #currentTimeNanos} reads the clock every time anyway: deciding again
     *         would decide the same
     */
    abstract boolean refreshed();

    @Override
    public boolean isWallClockBased() {
        return false;
    }
}

package io.quotagate.plans;

import java.time.Duration;
import java.util.Objects;

/**
 * Throttling instead of refusing ({@code throttle:} of a plan or a route): a request whose units arrive
 * within {@code maxDelay} is delayed until they do, then admitted; one that would wait longer is refused
 * at once, as without throttling. The units are reserved when the request is decided (the bucket goes
 * into debt up to {@code maxDelay}), so the delayed request is not charged a second time when it resumes.
 *
 * @param maxDelay the longest a request is delayed, &gt; 0 and at most {@link #MAX_DELAY}
 * @param queue    the most requests of one tenant delayed at once (on one instance), &gt; 0 and at most
 *                 {@link #MAX_QUEUE}; one more is refused at once
 */
public record Throttle(Duration maxDelay, int queue) {
    /** The longest {@code max-delay}: a delayed request keeps its connection open that long. */
    public static final Duration MAX_DELAY = Duration.ofMinutes(1);
    /** The largest {@code queue}: each delayed request holds its connection and a little memory. */
    public static final int MAX_QUEUE = 100_000;

    public Throttle {
        Objects.requireNonNull(maxDelay, "maxDelay");
        if (maxDelay.isZero() || maxDelay.isNegative()) {
            throw new IllegalArgumentException("throttle max-delay must be > 0, was " + maxDelay);
        }
        if (maxDelay.compareTo(MAX_DELAY) > 0) {
            throw new IllegalArgumentException("throttle max-delay must be <= " + MAX_DELAY.toSeconds() + "s, was "
                    + maxDelay);
        }
        if (queue <= 0 || queue > MAX_QUEUE) {
            throw new IllegalArgumentException("throttle queue must be 1-" + MAX_QUEUE + ", was " + queue);
        }
    }

    /** {@link #maxDelay} in nanoseconds. */
    public long maxDelayNanos() {
        return maxDelay.toNanos();
    }
}

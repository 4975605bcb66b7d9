package io.quotagate.loadtest.client;

import java.time.Duration;
import java.util.Objects;

/**
 * Additive increase, multiplicative decrease, as TCP does for congestion: down fast on a throttle,
 * up slowly while requests queue for units.
 *
 * <ul>
 *   <li>on a throttle: rate × {@code decreaseFactor} (once per congestion event, see
 *       {@link RateController#onThrottled});</li>
 *   <li>on an accepted request that had to wait for units: rate + {@code increaseStep}, at most once
 *       per {@code increaseInterval};</li>
 *   <li>always clamped to [{@code min}, {@code max}].</li>
 * </ul>
 */
public final class Aimd implements RateController {
    /**
     * AIMD settings for the whole app (rates in units per minute).
     *
     * @param initial          starting rate
     * @param min              lowest rate
     * @param max              highest rate
     * @param decreaseFactor   multiplier on a throttle, in (0, 1); 0.7 by default
     * @param increaseStep     units per minute added per increase
     * @param increaseInterval least time between two increases
     */
    public record Options(double initial, double min, double max, double decreaseFactor,
                          double increaseStep, Duration increaseInterval) {
        public Options {
            Objects.requireNonNull(increaseInterval, "increaseInterval");
            if (!(min > 0) || min > max) throw new IllegalArgumentException("need 0 < min <= max, was " + min + ", " + max);
            if (initial < min || initial > max) throw new IllegalArgumentException("initial must be in [min, max], was " + initial);
            if (!(decreaseFactor > 0 && decreaseFactor < 1)) {
                throw new IllegalArgumentException("decreaseFactor must be in (0, 1), was " + decreaseFactor);
            }
            if (!(increaseStep > 0)) throw new IllegalArgumentException("increaseStep must be > 0, was " + increaseStep);
            if (increaseInterval.isNegative() || increaseInterval.isZero()) {
                throw new IllegalArgumentException("increaseInterval must be > 0, was " + increaseInterval);
            }
        }
    }

    private final Options options;
    private final long intervalNanos;
    private double rate;
    private long lastIncrease;
    private long lastDecrease = Long.MIN_VALUE;

    /** Starts at {@code options.initial()}; the first increase may come one interval after {@code now}. */
    public Aimd(Options options, long now) {
        this.options = Objects.requireNonNull(options, "options");
        this.intervalNanos = options.increaseInterval().toNanos();
        this.rate = options.initial();
        this.lastIncrease = now;
    }

    @Override
    public double unitsPerMinute() {
        return rate;
    }

    @Override
    public void onThrottled(long now, long sentAt) {
        if (lastDecrease != Long.MIN_VALUE && sentAt < lastDecrease) return;
        rate = RateController.clamp(rate * options.decreaseFactor(), options.min(), options.max());
        lastDecrease = now;
        // the next increase waits a full interval after the cut: otherwise the cut is undone at once
        lastIncrease = now;
    }

    @Override
    public void onAccepted(long now, boolean waited) {
        if (!waited || now - lastIncrease < intervalNanos) return;
        rate = RateController.clamp(rate + options.increaseStep(), options.min(), options.max());
        lastIncrease = now;
    }
}

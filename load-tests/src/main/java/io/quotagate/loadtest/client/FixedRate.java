package io.quotagate.loadtest.client;

/** A rate that never changes: the classic client-side token bucket with a number chosen by hand. */
public final class FixedRate implements RateController {
    private final double unitsPerMinute;

    /** @param unitsPerMinute the rate for the whole app, &gt; 0 */
    public FixedRate(double unitsPerMinute) {
        if (!(unitsPerMinute > 0)) throw new IllegalArgumentException("rate must be > 0, was " + unitsPerMinute);
        this.unitsPerMinute = unitsPerMinute;
    }

    @Override
    public double unitsPerMinute() {
        return unitsPerMinute;
    }

    @Override
    public void onThrottled(long now, long sentAt) {
    }

    @Override
    public void onAccepted(long now, boolean waited) {
    }
}

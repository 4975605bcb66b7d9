package io.quotagate.client;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/** A limiter clock that moves only when a test advances it. */
final class ManualClock implements LimiterClock {
    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);

    @Override
    public long nanoTime() {
        return nanos.get();
    }

    void advance(Duration d) {
        nanos.addAndGet(d.toNanos());
    }

    void advanceNanos(long n) {
        nanos.addAndGet(n);
    }
}

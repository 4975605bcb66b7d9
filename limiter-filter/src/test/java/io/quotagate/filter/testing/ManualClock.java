package io.quotagate.filter.testing;

import io.quotagate.filter.admission.QuotaClock;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/** A clock that moves only when a test advances it. */
public final class ManualClock implements QuotaClock {
    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);

    @Override
    public long nanoTime() {
        return nanos.get();
    }

    public void advance(Duration d) {
        nanos.addAndGet(d.toNanos());
    }

    public void advanceNanos(long n) {
        nanos.addAndGet(n);
    }
}

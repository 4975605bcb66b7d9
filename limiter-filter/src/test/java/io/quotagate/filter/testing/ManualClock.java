package io.quotagate.filter.testing;

import io.github.bucket4j.TimeMeter;
import io.quotagate.filter.store.QuotaClock;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
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

    /** This clock as bucket4j reads time (for tests that hold a bucket beside bucket4j's own). */
    public TimeMeter timeMeter() {
        return new TimeMeter() {
            @Override
            public long currentTimeNanos() {
                return nanos.get();
            }

            @Override
            public boolean isWallClockBased() {
                return false;
            }
        };
    }

    /**
     * A wall clock that moves with this one (for stores that need wall time, such as Redis buckets):
     * it starts at the real time of this call and advances only when this clock does.
     */
    public Clock wallClock() {
        return wallClock(Instant.now());
    }

    /** As {@link #wallClock()}, starting at {@code start} (a given day of a calendar: a month's end, a DST change). */
    public Clock wallClock(Instant start) {
        long origin = nanos.get();
        return new Clock() {
            @Override
            public ZoneId getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(ZoneId zone) {
                throw new UnsupportedOperationException();
            }

            @Override
            public Instant instant() {
                return start.plusNanos(nanos.get() - origin);
            }
        };
    }
}

package io.quotagate.filter.redis;

import io.quotagate.filter.store.QuotaClock;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;

/**
 * The one clock every instance sharing a Redis decides on: this instance's wall clock corrected by its
 * offset to Redis's own clock ({@code TIME}, read by the heartbeat script). Shared buckets (their refill,
 * the script's {@code now}), calendar periods (which day it is, a period's key, its expiry, Retry-After and
 * {@code resetsAt}) are all told on it, so instances whose clocks are minutes or hours apart neither grant
 * extra units nor lock a tenant out, nor write counters already expired.
 *
 * <p><b>How it is measured.</b> Each heartbeat reads Redis's {@code TIME} in the same script call; the
 * offset is Redis's time minus this instance's wall time at the middle of the round trip, wrong by at most
 * half the round trip (an offset within that and a millisecond is taken as none). It is taken at the first heartbeat that succeeds, and again when this instance's
 * wall clock stepped against its monotonic clock by more than {@link #STEP_NANOS} (an NTP step, a VM
 * resumed) or {@link #RESYNC_NANOS} after the last time if it moved by more than {@link #STEP_NANOS}
 * plus the round trip meanwhile (a clock that drifts freely). Between two measurements the offset stays put,
 * so the corrected time runs exactly as the instance's clock does: a wait told by one decision holds.
 * Until Redis first answers the offset is 0.
 */
final class RedisClock {
    private static final System.Logger LOG = System.getLogger(RedisStore.class.getName());
    /** A step of the wall clock against the monotonic one that makes the offset measured again. */
    static final long STEP_NANOS = 250_000_000L;
    /** How long an offset is kept at most when the clock does not step (if the new one differs by more than a step). */
    static final long RESYNC_NANOS = 600_000_000_000L;
    /** An offset at least this large is logged when taken. */
    private static final long LOGGED_NANOS = 1_000_000_000L;

    private final Clock wall;
    private final QuotaClock monotonic;
    /** Redis's time minus this instance's wall time, nanoseconds. */
    private volatile long offsetNanos;
    private volatile boolean measured;
    /** Wall minus monotonic time when the offset was taken (a step of the wall clock changes it). */
    private volatile long wallMinusMonotonic;
    /** Monotonic time when the offset was taken. */
    private volatile long takenAt;

    /**
     * @param wall      this instance's wall clock
     * @param monotonic this instance's monotonic clock, which a step of the wall clock does not move
     */
    RedisClock(Clock wall, QuotaClock monotonic) {
        this.wall = wall;
        this.monotonic = monotonic;
    }

    /** The corrected time now, nanoseconds since 1970. */
    long nowNanos() {
        return wallNanos(wall) + offsetNanos;
    }

    /** The offset in force: Redis's time minus this instance's wall time, nanoseconds. */
    long offsetNanos() {
        return offsetNanos;
    }

    /** {@code instanceWall} moved by the offset: the calendar clock of a filter on this store. */
    Clock corrected(Clock instanceWall) {
        return new Corrected(instanceWall, this);
    }

    /**
     * Takes note of one reading of Redis's {@code TIME}.
     *
     * @param wallBefore   this instance's wall time when the call was sent, nanoseconds since 1970
     * @param monoBefore   its monotonic time then
     * @param roundTrip    the call's round trip, nanoseconds
     * @param redisNanos   Redis's time in the reply, nanoseconds since 1970
     */
    void sample(long wallBefore, long monoBefore, long roundTrip, long redisNanos) {
        long measuredOffset = redisNanos - (wallBefore + roundTrip / 2);
        // within the reading's own error (half the round trip, and Redis's whole microseconds), no offset:
        // clocks that agree are left exactly as they are
        if (Math.abs(measuredOffset) <= roundTrip / 2 + 1_000_000) measuredOffset = 0;
        long drift = Math.abs((wallBefore - monoBefore) - wallMinusMonotonic);
        boolean take = !measured || drift > STEP_NANOS
                || monoBefore - takenAt > RESYNC_NANOS && Math.abs(measuredOffset - offsetNanos) > STEP_NANOS + roundTrip;
        if (!take) return;
        long before = offsetNanos;
        offsetNanos = measuredOffset;
        wallMinusMonotonic = wallBefore - monoBefore;
        takenAt = monoBefore;
        boolean first = !measured;
        measured = true;
        if (Math.abs(measuredOffset) >= LOGGED_NANOS && (first || Math.abs(measuredOffset - before) >= LOGGED_NANOS)) {
            LOG.log(System.Logger.Level.WARNING, "quotagate: this instance''s clock is {0} ms {1} Redis''s (within "
                    + "{2} ms); shared buckets and calendar quotas are decided on Redis''s clock",
                    Math.abs(measuredOffset) / 1_000_000, measuredOffset > 0 ? "behind" : "ahead of",
                    Math.max(1, roundTrip / 2_000_000));
        }
    }

    private static long wallNanos(Clock clock) {
        Instant now = clock.instant();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }

    /** This instance's wall time, nanoseconds since 1970 (uncorrected). */
    long instantWallNanos() {
        return wallNanos(wall);
    }

    /** This instance's monotonic time. */
    long monotonicNanos() {
        return monotonic.nanoTime();
    }

    /** A wall clock moved by the offset in force at each reading. */
    private static final class Corrected extends Clock {
        private final Clock base;
        private final RedisClock offset;

        Corrected(Clock base, RedisClock offset) {
            this.base = base;
            this.offset = offset;
        }

        @Override
        public ZoneId getZone() {
            return base.getZone();
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return new Corrected(base.withZone(zone), offset);
        }

        @Override
        public Instant instant() {
            return base.instant().plusNanos(offset.offsetNanos());
        }

        @Override
        public long millis() {
            return instant().toEpochMilli();
        }
    }
}

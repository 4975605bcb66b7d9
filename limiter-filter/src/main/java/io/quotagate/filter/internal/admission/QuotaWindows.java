package io.quotagate.filter.internal.admission;

import io.quotagate.filter.status.Reason;
import io.quotagate.filter.store.QuotaBucket;
import io.quotagate.filter.store.QuotaCounters;
import io.quotagate.plans.CalendarQuota;

import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A plan's calendar quotas as admission counts them: for each quota, the period the wall clock is in
 * (computed once per period, not per request) and its counter key
 * {@code <quota>:<tenant>:<first day of the period>} (the local date it starts on: the 1st, a Monday, the
 * day, or the date of its anchor, see {@link CalendarQuota#periodStartDate}), handed to the store as buckets ({@link #addTo}) so a
 * request is counted in every quota (and taken from every bucket) or in none.
 *
 * <p>Thread-safe; immutable but for the cached periods, which any thread may replace.
 */
final class QuotaWindows {
    /** How long a counter is kept after its period ends: requests that settle late still find it. */
    static final long GRACE_MILLIS = 3_600_000L;
    private static final long NANOS_PER_MILLI = 1_000_000L;

    /** Default of how many closed periods a counter is kept for after its own ends (for the usage export). */
    public static final int DEFAULT_KEPT_PERIODS = 3;

    /**
     * One period of a quota, in epoch nanoseconds, and the label of its counters; its counters are kept until
     * {@code expiresAtMillis} (the end of the period {@code kept} periods later, plus {@link #GRACE_MILLIS}), so
     * that a usage export still reads the closed periods.
     */
    record Period(long startNanos, long endNanos, String label, long expiresAtMillis) {
    }

    private final CalendarQuota[] quotas;
    private final AtomicReferenceArray<Period> periods;
    /** How many periods after its own a counter is kept. */
    private final int kept;

    QuotaWindows(List<CalendarQuota> quotas) {
        this(quotas, DEFAULT_KEPT_PERIODS);
    }

    /** @param kept how many periods after its own a counter is kept (0: only the grace) */
    QuotaWindows(List<CalendarQuota> quotas, int kept) {
        if (kept < 0) throw new IllegalArgumentException("kept periods must be >= 0, was " + kept);
        this.quotas = quotas.toArray(CalendarQuota[]::new);
        this.periods = new AtomicReferenceArray<>(this.quotas.length);
        this.kept = kept;
    }

    /** How many periods after its own a counter is kept. */
    int kept() {
        return kept;
    }

    /** The quotas, in plan order. */
    CalendarQuota[] quotas() {
        return quotas;
    }

    /** The period of quota {@code i} that holds {@code nowNanos} (epoch nanoseconds). */
    Period period(int i, long nowNanos) {
        Period p = periods.get(i);
        if (p != null && nowNanos >= p.startNanos && nowNanos < p.endNanos) return p;
        p = periodAt(quotas[i], nowNanos);
        periods.set(i, p);
        return p;
    }

    private Period periodAt(CalendarQuota q, long nowNanos) {
        return periodStarting(q, q.periodStartDate(instant(nowNanos)), kept);
    }

    /** The period of {@code q} that starts on {@code start}, its counters kept {@code kept} periods more. */
    static Period periodStarting(CalendarQuota q, LocalDate start, int kept) {
        LocalDate end = q.nextPeriodStartDate(start);
        LocalDate keptUntil = end;
        for (int i = 0; i < kept; i++) keptUntil = q.nextPeriodStartDate(keptUntil);
        return new Period(nanos(q.startOf(start)), nanos(q.startOf(end)), start.toString(),
                nanos(q.startOf(keptUntil)) / NANOS_PER_MILLI + GRACE_MILLIS);
    }

    /**
     * The period of {@code q} holding {@code nowNanos}, then the {@code closed} periods before it, newest first.
     * The one before a period starting on {@code d} is the one holding the nanosecond before {@code d} starts.
     */
    List<Period> recent(CalendarQuota q, long nowNanos, int closed) {
        List<Period> out = new java.util.ArrayList<>(closed + 1);
        LocalDate start = q.periodStartDate(instant(nowNanos));
        out.add(periodStarting(q, start, kept));
        for (int i = 0; i < closed; i++) {
            start = q.periodStartDate(q.startOf(start).minusNanos(1));
            out.add(periodStarting(q, start, kept));
        }
        return out;
    }

    static String key(CalendarQuota q, String tenant, String label) {
        return q.name() + ":" + tenant + ":" + label;
    }

    /** How many quotas. */
    int size() {
        return quotas.length;
    }

    /**
     * Puts the counters of the periods {@code nowNanos} is in, as buckets, at {@code into[at..]} (see
     * {@link QuotaCounters#counter}): taken with the request's buckets in one store operation.
     *
     * @return the index after the last
     */
    int addTo(QuotaBucket[] into, int at, QuotaCounters counters, String tenant, long nowNanos) {
        for (int i = 0; i < quotas.length; i++) {
            Period p = period(i, nowNanos);
            into[at++] = counters.counter(key(quotas[i], tenant, p.label), quotas[i].limit(), nowNanos, p.endNanos,
                    p.expiresAtMillis());
        }
        return at;
    }

    /**
     * {@code refusal}, or the refusal of a quota whose wait at {@code waits[from + i]} is longer (the wait
     * of a quota that refuses is the time to its period's end).
     */
    Rejection longest(Rejection refusal, long[] waits, int from) {
        for (int i = 0; i < quotas.length; i++) {
            long wait = waits[from + i];
            if (wait > 0 && wait > refusal.nanosToWait()) refusal = new Rejection(Reason.QUOTA, wait, quotas[i].name());
        }
        return refusal;
    }

    /**
     * Settles a request counted at {@code countedNanos}: {@code units} more (an excess) or fewer (a
     * refund, when negative), in the periods it was counted in, even if they have ended since.
     */
    void settle(QuotaCounters counters, String tenant, long units, long countedNanos, long nowNanos) {
        long nowMillis = nowNanos / NANOS_PER_MILLI;
        for (int i = 0; i < quotas.length; i++) {
            Period p = periodAt(quotas[i], countedNanos);
            counters.add(key(quotas[i], tenant, p.label), units, nowMillis, p.expiresAtMillis());
        }
    }

    /** Epoch nanoseconds of an instant (until 2262). */
    static long nanos(Instant t) {
        return Math.addExact(Math.multiplyExact(t.getEpochSecond(), 1_000_000_000L), t.getNano());
    }

    static Instant instant(long epochNanos) {
        return Instant.ofEpochSecond(Math.floorDiv(epochNanos, 1_000_000_000L), Math.floorMod(epochNanos, 1_000_000_000L));
    }
}

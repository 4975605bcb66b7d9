package io.quotagate.loadtest.scenario;

import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Whether one mode's generator kept the story's schedule, in scenario time. A request's <em>lag</em>
 * runs from when the story wanted it sent (its arrival, its retry time, its grant by the client's
 * limiter) to when a connection began sending it: the driver running late, or the request waiting
 * for one of the client's pooled connections. Its <em>response time</em> runs from then to the
 * answer. Compressing time multiplies every real delay by the speed-up (5 ms of real queueing is
 * 75 ms of story at {@code --speed 15}), so these tell whether a compressed run still tells the
 * story of a {@code --speed 1} run. Thread-safe.
 */
final class Pace {
    /**
     * A p99 lag above this (scenario ms) and the requests no longer go out when the story says: a
     * quarter of the story's unit of time, the whole second of Retry-After. A JVM's young
     * collection (3 to 40 ms of real time here) is 45 to 600 ms of story at {@code --speed 15}:
     * an occasional one passes, a machine that keeps the clients waiting does not.
     */
    static final double LAG_LIMIT_MS = 250;
    /** A p99 response time above this (scenario ms) and the clients learn from stale answers. */
    static final double RESPONSE_LIMIT_MS = 250;
    /** Failed requests above this share of those sent fail the run. */
    static final double FAILED_LIMIT = 0.01;

    private static final long MAX_MICROS = 3_600_000_000L;

    private final Histogram lag = new ConcurrentHistogram(MAX_MICROS, 2);
    private final Histogram response = new ConcurrentHistogram(MAX_MICROS, 2);
    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong refusedByPool = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicLong worstLagSinceReport = new AtomicLong();

    /** A request was handed to the client's connections. */
    void sent() {
        sent.incrementAndGet();
    }

    /** The client's connection pool refused a request: its queue was full; it never left. */
    void refusedByPool() {
        refusedByPool.incrementAndGet();
    }

    /** A request failed: no answer (I/O error, time-out) or an answer that is neither 200 nor a throttle. */
    void failed() {
        failed.incrementAndGet();
    }

    /** A request began to be sent {@code scenarioNanos} after the story wanted it sent. */
    void lag(long scenarioNanos) {
        long micros = clamp(scenarioNanos);
        lag.recordValue(micros);
        worstLagSinceReport.accumulateAndGet(micros, Math::max);
    }

    /** A request was answered {@code scenarioNanos} after it began to be sent. */
    void response(long scenarioNanos) {
        response.recordValue(clamp(scenarioNanos));
    }

    /** The worst lag since the last call, scenario ms (for the progress lines). */
    double takeWorstLagMs() {
        return worstLagSinceReport.getAndSet(0) / 1000.0;
    }

    Verdict verdict() {
        long s = sent.get() - refusedByPool.get();
        return new Verdict(s, refusedByPool.get(), failed.get(), lag.getValueAtPercentile(99) / 1000.0,
                lag.getMaxValue() / 1000.0, response.getValueAtPercentile(99) / 1000.0);
    }

    private static long clamp(long nanos) {
        return Math.max(0, Math.min(MAX_MICROS, nanos / 1000));
    }

    /**
     * @param sent          requests that left through a connection
     * @param refusedByPool requests the connection pool refused (never sent)
     * @param failed        sent requests without a usable answer
     * @param lagP99Ms      99th percentile of the lag, scenario ms
     * @param lagMaxMs      the worst lag, scenario ms
     * @param responseP99Ms 99th percentile of the response time, scenario ms
     */
    record Verdict(long sent, long refusedByPool, long failed, double lagP99Ms, double lagMaxMs, double responseP99Ms) {
        /** Whether the generator could not keep the schedule: the figures are not those of an uncompressed run. */
        boolean saturated() {
            return !reasons().isEmpty();
        }

        /** Why it is saturated; empty when it kept the schedule. */
        List<String> reasons() {
            List<String> why = new ArrayList<>();
            if (refusedByPool > 0) {
                why.add(String.format(Locale.ROOT, "%,d request(s) found the client's %d connections and %d queue places taken",
                        refusedByPool, ClientConnections.CONNECTIONS, ClientConnections.QUEUED));
            }
            if (lagP99Ms > LAG_LIMIT_MS) {
                why.add(String.format(Locale.ROOT, "requests left late: p99 lag %.0f ms of scenario time (limit %.0f ms), worst %.0f ms",
                        lagP99Ms, LAG_LIMIT_MS, lagMaxMs));
            }
            if (responseP99Ms > RESPONSE_LIMIT_MS) {
                why.add(String.format(Locale.ROOT, "answers came late: p99 response time %.0f ms of scenario time (limit %.0f ms)",
                        responseP99Ms, RESPONSE_LIMIT_MS));
            }
            return why;
        }

        /** Failed requests over those sent (0 when none was sent). */
        double failedShare() {
            return sent == 0 ? 0 : (double) failed / sent;
        }

        boolean tooManyFailed() {
            return failedShare() > FAILED_LIMIT;
        }
    }
}

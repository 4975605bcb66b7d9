package io.quotagate.loadtest.scenario;

import java.util.concurrent.atomic.AtomicLongArray;

/** Per-second counters of one client (a worker, the neighbour, or the server), in scenario seconds. */
final class Series {
    final String name;
    final AtomicLongArray accepted;
    final AtomicLongArray throttled;
    final AtomicLongArray rejected;
    final AtomicLongArray gaveUp;
    final AtomicLongArray errors;
    /** the limiter's rate at each second, units per minute (NaN: no limiter or not started) */
    final double[] rate;

    /** {@code seconds} bins plus one for whatever arrives after the end. */
    Series(String name, int seconds) {
        this(name, seconds, 1);
    }

    /** {@code seconds} bins plus {@code tail} for what arrives after the end (the last one takes anything later). */
    Series(String name, int seconds, int tail) {
        this.name = name;
        int bins = seconds + Math.max(1, tail);
        accepted = new AtomicLongArray(bins);
        throttled = new AtomicLongArray(bins);
        rejected = new AtomicLongArray(bins);
        gaveUp = new AtomicLongArray(bins);
        errors = new AtomicLongArray(bins);
        rate = new double[bins];
        java.util.Arrays.fill(rate, Double.NaN);
    }

    int bins() {
        return rate.length;
    }

    /** The bin of a scenario time; times past the end land in the last bin. */
    int bin(long scenarioNanos) {
        long s = scenarioNanos / 1_000_000_000L;
        return (int) Math.max(0, Math.min(rate.length - 1, s));
    }

    static long total(AtomicLongArray a) {
        long sum = 0;
        for (int i = 0; i < a.length(); i++) sum += a.get(i);
        return sum;
    }

    static long sum(AtomicLongArray a, int from, int to) {
        long sum = 0;
        for (int i = Math.max(0, from); i < Math.min(a.length(), to); i++) sum += a.get(i);
        return sum;
    }
}

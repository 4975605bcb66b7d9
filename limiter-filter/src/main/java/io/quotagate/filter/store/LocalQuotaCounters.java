package io.quotagate.filter.store;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The counters of the local store: a table of its own, never evicted with the buckets. Bounded by
 * {@code maxCounters}: when a new counter would exceed the bound, the expired counters (their period
 * ended, plus the closed periods kept for the usage export, plus the grace) are dropped first; if none
 * has, the new counter is not created and its request is admitted without being counted
 * ({@link #untracked()} counts such requests). So a full table never refuses a tenant nor resets another
 * tenant's count; size {@code tenants.max-tracked} above tenants × quotas × (1 + periods kept) to count
 * every one.
 */
final class LocalQuotaCounters implements QuotaCounters {
    private static final System.Logger LOG = System.getLogger(LocalQuotaCounters.class.getName());

    /** One counter: the units used and when it may go. */
    static final class Counter {
        final AtomicLong used = new AtomicLong();
        final long expiresAtMillis;

        Counter(long used, long expiresAtMillis) {
            this.used.set(used);
            this.expiresAtMillis = expiresAtMillis;
        }
    }

    private final int maxCounters;
    final ConcurrentHashMap<String, Counter> counters = new ConcurrentHashMap<>();
    private final LongAdder untracked = new LongAdder();
    /** Claims of quota events, each until it expires; bounded like the counters (expired ones go first). */
    private final ConcurrentHashMap<String, Long> claims = new ConcurrentHashMap<>();
    private volatile boolean fullLogged;

    LocalQuotaCounters(int maxCounters) {
        if (maxCounters <= 0) throw new IllegalArgumentException("maxCounters must be > 0, was " + maxCounters);
        this.maxCounters = maxCounters;
    }

    @Override
    public long tryAdd(String key, long units, long limit, long nowMillis, long expiresAtMillis) {
        Counter c = counter(key, nowMillis, expiresAtMillis);
        if (c == null) {
            untracked.increment();
            return units;
        }
        while (true) {
            long used = c.used.get();
            if (used + units > limit) return -1 - used;
            if (c.used.compareAndSet(used, used + units)) return used + units;
        }
    }

    @Override
    public void add(String key, long units, long nowMillis, long expiresAtMillis) {
        if (units < 0) {
            Counter c = counters.get(key);
            if (c != null) c.used.getAndUpdate(u -> Math.max(0, u + units));
            return;
        }
        Counter c = counter(key, nowMillis, expiresAtMillis);
        if (c == null) {
            untracked.increment();
            return;
        }
        c.used.addAndGet(units);
    }

    @Override
    public long used(String key) {
        Counter c = counters.get(key);
        return c == null ? 0 : c.used.get();
    }

    /**
     * The counters in the order of their keys, {@code count} a page: the page after {@code cursor} (the last
     * key of the previous page) holds the smallest keys above it, found in one pass over the table keeping at
     * most {@code count} of them. So a counter that exists for the whole scan is listed exactly once.
     */
    @Override
    public Page scan(String cursor, int count) {
        if (count < 1) throw new IllegalArgumentException("count must be >= 1, was " + count);
        java.util.TreeSet<String> page = new java.util.TreeSet<>();
        for (String key : counters.keySet()) {
            if (cursor != null && key.compareTo(cursor) <= 0) continue;
            if (page.size() < count) {
                page.add(key);
            } else if (key.compareTo(page.last()) < 0) {
                page.pollLast();
                page.add(key);
            }
        }
        String next = page.size() < count ? null : page.last();
        return new Page(new java.util.ArrayList<>(page), next);
    }

    /**
     * Set-if-absent in a table of this JVM (a key names its period, so it is never claimed twice), bounded
     * by {@code maxCounters}: when it is full, claims whose time has passed go; if none has, the claim is
     * granted without being kept (the filter remembers its own, so an event is still raised once).
     */
    @Override
    public boolean claim(String key, long expiresAtMillis) {
        if (claims.size() >= maxCounters && !claims.containsKey(key)) {
            long now = System.currentTimeMillis();
            claims.values().removeIf(until -> until <= now);
            if (claims.size() >= maxCounters) return !claims.containsKey(key);
        }
        return claims.putIfAbsent(key, expiresAtMillis) == null;
    }

    /** Requests admitted without being counted because the table was full. */
    long untracked() {
        return untracked.sum();
    }

    /** Counters held now. */
    int size() {
        return counters.size();
    }

    /** The counter of {@code key}, created at 0; null if the table is full of counters of live periods. */
    private Counter counter(String key, long nowMillis, long expiresAtMillis) {
        Counter c = counters.get(key);
        if (c != null) return c;
        if (counters.size() >= maxCounters) {
            counters.values().removeIf(old -> old.expiresAtMillis <= nowMillis);
            if (counters.size() >= maxCounters) {
                if (!fullLogged) {
                    fullLogged = true;
                    LOG.log(System.Logger.Level.WARNING, "quotagate: the table of quota counters is full ({0} of "
                            + "live periods); new tenants'' quotas are not counted until a period ends: raise "
                            + "tenants.max-tracked", maxCounters);
                }
                return counters.get(key);
            }
        }
        return counters.computeIfAbsent(key, k -> new Counter(0, expiresAtMillis));
    }

    /** The most counters the table holds ({@code tenants.max-tracked}). */
    int capacity() {
        return maxCounters;
    }

    /**
     * Restores a counter read from a snapshot; one that has expired is dropped.
     *
     * @return false if it was not restored because the table is full
     */
    boolean restore(String key, long used, long nowMillis, long expiresAtMillis) {
        if (expiresAtMillis <= nowMillis) return true;
        if (counters.size() >= maxCounters && !counters.containsKey(key)) return false;
        counters.merge(key, new Counter(used, expiresAtMillis),
                (a, b) -> new Counter(Math.max(a.used.get(), b.used.get()), a.expiresAtMillis));
        return true;
    }
}

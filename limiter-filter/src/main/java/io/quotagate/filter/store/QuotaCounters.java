package io.quotagate.filter.store;

import java.util.List;

/**
 * Where the counters of calendar quotas live ({@link io.quotagate.plans.CalendarQuota}): one counter
 * of units per quota, tenant and period, kept apart from the buckets so that nothing that drops a
 * bucket (idle expiry, a full table, a flood of made-up ids) resets a month's count. A counter names
 * its period in its key, so a new period starts at zero without anyone resetting anything; a store
 * may drop a counter once its {@code expiresAtMillis} has passed.
 *
 * <p>Keys are {@code <quota>:<tenant>:<first day of the period>} (e.g. {@code monthly:acme:2026-12-01});
 * a store adds its own prefix. Thread-safe.
 */
public interface QuotaCounters {

    /**
     * Adds {@code units} to the counter if the sum stays within {@code limit}; else adds nothing.
     *
     * @param nowMillis       the wall time, epoch milliseconds (a store may drop expired counters)
     * @param expiresAtMillis when the counter may be dropped (its period's end, plus a grace)
     * @return the units used after the add; if refused, {@code -1 - used} (the units used now)
     */
    long tryAdd(String key, long units, long limit, long nowMillis, long expiresAtMillis);

    /**
     * Adds {@code units} whatever the limit (an excess found when a request settles), or takes them
     * back when negative (a refund; the counter never goes below 0). A refund to a counter that no
     * longer exists does nothing.
     */
    void add(String key, long units, long nowMillis, long expiresAtMillis);

    /** The units used in the counter, 0 if there is none. */
    long used(String key);

    /**
     * The units used in the counter as this instance last saw them (the latest operation's reply), for
     * a response's published fields right after the request was counted: a remote store answers without
     * a round trip, and reads ({@link #used}) only a counter it has not seen. The default reads.
     */
    default long notedUsed(String key) {
        return used(key);
    }

    /**
     * The counter {@code key} in the period that ends at {@code resetNanos}, as a bucket holding
     * {@code limit − used} units (a refused request waits until the period ends), so that a request's
     * quotas are taken together with its buckets ({@link BucketStore#takeAll}: one operation of a store
     * that can do it, such as one Redis script call). The default goes through this interface's methods.
     *
     * @param nowNanos        the wall time of the request, epoch nanoseconds
     * @param resetNanos      when the period ends, epoch nanoseconds
     * @param expiresAtMillis when the counter may be dropped
     */
    default QuotaBucket counter(String key, long limit, long nowNanos, long resetNanos, long expiresAtMillis) {
        return new CounterBucket(this, key, limit, nowNanos, resetNanos, expiresAtMillis);
    }

    /**
     * One page of a scan of the counters ({@link #scan}).
     *
     * @param keys the counters' keys (without the store's prefix), each in one page only while it exists
     *             for the whole scan; at most about the page's {@code count}
     * @param next where the next page starts, null if this was the last
     */
    record Page(List<String> keys, String next) {
        /** Copies the keys. */
        public Page {
            keys = List.copyOf(keys);
        }
    }

    /**
     * The counters this store holds, a page at a time, read from the store itself (so every instance sharing it
     * lists the same counters), in bounded memory: a page holds about {@code count} keys. A counter that exists
     * from the first page to the last is listed once; one created or dropped meanwhile may be listed or not.
     *
     * @param cursor null to start, else the {@link Page#next} of the previous page
     * @param count  about how many keys a page holds, at least 1
     * @throws IllegalArgumentException if {@code cursor} is not one this store gave
     * @throws UnsupportedOperationException if the store cannot list its counters (the default)
     * @throws StoreUnavailableException if a shared store cannot be reached
     */
    default Page scan(String cursor, int count) {
        throw new UnsupportedOperationException("this store cannot list its quota counters");
    }

    /**
     * The units used in each counter of {@code keys}, 0 for one there is none of, in their order: a remote store
     * reads them in one round trip. The default reads them one by one ({@link #used}).
     *
     * @throws StoreUnavailableException if a shared store cannot be reached (a store whose default {@link #used}
     *                                   falls back to local figures does so)
     */
    default long[] usedAll(List<String> keys) {
        long[] out = new long[keys.size()];
        for (int i = 0; i < out.length; i++) out[i] = used(keys.get(i));
        return out;
    }

    /**
     * Claims {@code key} once for all instances sharing this store: true for the first caller, false for
     * every later one until {@code expiresAtMillis} has passed. The filter claims each calendar quota event
     * ({@code <quota>:<tenant>:<period>:near:<percent>}, {@code ...:exhausted}) before raising it, so two
     * instances raise it once; it is called off the request path (the signals thread), never with a request
     * waiting. The default claims nothing (true every time): each instance then raises such an event once
     * itself, the filter remembering its own claims.
     *
     * @param expiresAtMillis when the claim may be forgotten (the period's end, plus a grace), epoch millis
     * @throws RuntimeException if the store cannot be asked now (the filter tries again at a later check)
     */
    default boolean claim(String key, long expiresAtMillis) {
        return true;
    }
}

package io.quotagate.filter.internal.metrics;

import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The heaviest tenants of a stream of observations, in bounded memory: the Space-Saving algorithm
 * (Metwally, Agrawal, El Abbadi, "Efficient computation of frequent and top-k elements in data
 * streams", ICDT 2005) over at most {@code capacity} entries, with every count halved at each
 * {@link #halve} so that the counts follow recent traffic rather than all traffic ever seen.
 *
 * <p>Each entry has a {@code count} and an {@code error}: a tenant seen for the first time while
 * every entry is taken replaces the entry with the smallest count and inherits that count as its
 * error. Its own observations since then are {@code count − error}, the {@linkplain #lowerBound
 * lower bound}: never more than the tenant's true (decayed) number of observations, however the
 * stream is made. So a tenant observed fewer than {@code n} times can never reach a lower bound of
 * {@code n}, whatever number of other ids floods the table: that is what keeps made-up ids from
 * looking heavy. A tenant with more than {@code 1/capacity} of the observations is never evicted.
 *
 * <p>Halving keeps that promise: {@code count} is rounded down and {@code error} up, so the lower
 * bound only ever shrinks to at most half of itself, as the true decayed count does.
 *
 * <p>The entries form a min-heap on {@code count} (its smallest is the one to replace), found by
 * tenant through a map; an observation costs one map lookup and O(log capacity) swaps. Not
 * thread-safe: {@link TenantNames} calls it under the statistics' lock.
 */
final class HeavyHitters {
    /** One tracked tenant. */
    static final class Entry {
        String tenant;
        /** Whether any of its observations came from a tenant the directory knows. */
        boolean known;
        long count;
        long error;
        int index;

        long lowerBound() {
            return Math.max(0, count - error);
        }
    }

    private final Entry[] heap;
    private final Map<String, Entry> byTenant;
    private int size;
    private int observedSinceHalving;

    /** @param capacity most tenants tracked at once (≥ 1) */
    HeavyHitters(int capacity) {
        if (capacity < 1) throw new IllegalArgumentException("capacity must be >= 1, was " + capacity);
        heap = new Entry[capacity];
        byTenant = new HashMap<>(capacity * 2);
    }

    /** Counts one observation of {@code tenant}; returns its entry (valid until the next call). */
    Entry observe(String tenant, boolean known) {
        observedSinceHalving++;
        Entry e = byTenant.get(tenant);
        if (e != null) {
            e.count++;
            e.known |= known;
            siftDown(e.index);
            return e;
        }
        if (size < heap.length) {
            e = new Entry();
            e.tenant = tenant;
            e.known = known;
            e.count = 1;
            e.index = size;
            heap[size++] = e;
            byTenant.put(tenant, e);
            siftUp(e.index);
            return e;
        }
        // Space-Saving: the newcomer takes the smallest entry's place and its count as the error
        e = heap[0];
        byTenant.remove(e.tenant);
        e.tenant = tenant;
        e.known = known;
        e.error = e.count;
        e.count++;
        byTenant.put(tenant, e);
        siftDown(0);
        return e;
    }

    /**
     * Puts back a tenant whose count is known exactly (a tenant that just lost its name: its own
     * counters measured it), with no error. Dropped if every entry counts more.
     */
    void offer(String tenant, boolean known, long count) {
        Entry e = byTenant.get(tenant);
        if (e != null) {
            if (count > e.count) {
                e.count = count;
                e.error = 0;
                siftDown(e.index);
            }
            return;
        }
        if (size < heap.length) {
            e = new Entry();
            e.index = size;
            heap[size++] = e;
        } else if (count > heap[0].count) {
            e = heap[0];
            byTenant.remove(e.tenant);
        } else {
            return;
        }
        e.tenant = tenant;
        e.known = known;
        e.count = count;
        e.error = 0;
        byTenant.put(tenant, e);
        siftUp(e.index);
        siftDown(e.index);
    }

    /** Forgets a tenant (it got a name: its own counters measure it from now on). */
    void remove(String tenant) {
        Entry e = byTenant.remove(tenant);
        if (e == null) return;
        int i = e.index;
        Entry last = heap[--size];
        heap[size] = null;
        if (i < size) {
            heap[i] = last;
            last.index = i;
            siftUp(i);
            siftDown(last.index);
        }
    }

    /** Halves every count (rounded down) and error (rounded up): the decay. The heap order holds. */
    void halve() {
        observedSinceHalving = 0;
        for (int i = 0; i < size; i++) {
            Entry e = heap[i];
            e.count >>= 1;
            e.error = Math.min(e.count, (e.error + 1) >> 1);
        }
    }

    /** Lower bound of the tenant's decayed observations; 0 if it is not tracked. */
    long lowerBound(String tenant) {
        Entry e = byTenant.get(tenant);
        return e == null ? 0 : e.lowerBound();
    }

    /** Counts a sample that stayed out of the table (see {@link Doorkeeper}) towards {@link #observedSinceHalving}. */
    void countSkipped() {
        observedSinceHalving++;
    }

    /** Calls {@code action} with each tenant tracked now. */
    void forEachTenant(Consumer<String> action) {
        for (int i = 0; i < size; i++) action.accept(heap[i].tenant);
    }

    /** Observations since the last {@link #halve} (or since the start), skipped ones included. */
    int observedSinceHalving() {
        return observedSinceHalving;
    }

    /** Tenants tracked now. */
    int size() {
        return size;
    }

    private void siftUp(int i) {
        Entry e = heap[i];
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            Entry p = heap[parent];
            if (p.count <= e.count) break;
            heap[i] = p;
            p.index = i;
            i = parent;
        }
        heap[i] = e;
        e.index = i;
    }

    private void siftDown(int i) {
        Entry e = heap[i];
        int half = size >>> 1;
        while (i < half) {
            int child = 2 * i + 1;
            Entry c = heap[child];
            int right = child + 1;
            if (right < size && heap[right].count < c.count) {
                child = right;
                c = heap[child];
            }
            if (e.count <= c.count) break;
            heap[i] = c;
            c.index = i;
            i = child;
        }
        heap[i] = e;
        e.index = i;
    }
}

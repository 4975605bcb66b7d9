package io.quotagate.filter.internal.metrics;

import io.quotagate.filter.internal.metrics.RequestStatistics.CellCount;
import io.quotagate.filter.metrics.StatisticsView.Result;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The cells of a {@link RequestStatistics}, found by their tags, and the listeners told when one comes or
 * goes. A request finds its cell without a lock: one probe of an open-addressing table of the cells
 * themselves, compared field by field (identity first), allocating nothing. The table is replaced, never
 * changed, and only under the statistics' lock: {@link #add}, {@link #remove} and {@link #listen} are
 * called with it held, so the listeners are called one at a time, a cell always announced before it is
 * removed. Which tenants may have cells is not decided here ({@link TenantNames}).
 */
final class CellTable {
    /** Cells by their tags; replaced, never changed, under the lock. */
    private volatile CellCount[] table = new CellCount[64];
    private final List<CellCount> all = new CopyOnWriteArrayList<>();
    private final List<Consumer<? super CellCount>> createdListeners = new CopyOnWriteArrayList<>();
    private final List<Consumer<? super CellCount>> removedListeners = new CopyOnWriteArrayList<>();

    /** The cell with these tags, or null if there is none now (no lock). */
    CellCount find(String tenant, String plan, String route, Result result, String reason) {
        CellCount[] t = table;
        int mask = t.length - 1;
        for (int i = hash(tenant, plan, route, result, reason) & mask; ; i = (i + 1) & mask) {
            CellCount c = t[i];
            if (c == null) return null;
            if (c.is(tenant, plan, route, result, reason)) return c;
        }
    }

    /** The cell with these tags, made and announced if another thread did not make it meanwhile (under the lock). */
    CellCount add(String tenant, String plan, String route, Result result, String reason) {
        CellCount c = find(tenant, plan, route, result, reason);
        if (c != null) return c;
        c = new CellCount(tenant, plan, route, result, reason);
        all.add(c);
        table = tableOf(all, table.length);
        for (Consumer<? super CellCount> l : createdListeners) l.accept(c);
        return c;
    }

    /** Removes a tenant's cells and tells the listeners (under the lock); returns their total count. */
    long remove(String tenant) {
        List<CellCount> gone = new ArrayList<>();
        long total = 0;
        for (CellCount c : all) {
            if (c.tenant().equals(tenant)) {
                gone.add(c);
                total += c.count();
            }
        }
        if (gone.isEmpty()) return 0;
        all.removeIf(c -> c.tenant().equals(tenant));
        table = tableOf(all, 64);
        for (CellCount c : gone) {
            for (Consumer<? super CellCount> l : removedListeners) l.accept(c);
        }
        return total;
    }

    /** Adds listeners and announces every cell that exists now to {@code created} (under the lock). */
    void listen(Consumer<? super CellCount> created, Consumer<? super CellCount> removed) {
        createdListeners.add(Objects.requireNonNull(created, "created"));
        removedListeners.add(Objects.requireNonNull(removed, "removed"));
        all.forEach(created);
    }

    /** Visits every cell that exists now. */
    void forEach(Consumer<? super CellCount> visitor) {
        all.forEach(visitor);
    }

    int size() {
        return all.size();
    }

    /** A copy of the cells. */
    List<CellCount> cells() {
        return new ArrayList<>(all);
    }

    /** A table of these cells, at most half full so that a probe always ends at an empty slot. */
    private static CellCount[] tableOf(List<CellCount> cells, int atLeast) {
        int size = atLeast;
        while (size < 2 * (cells.size() + 1)) size *= 2;
        CellCount[] next = new CellCount[size];
        for (CellCount each : cells) {
            int i = hash(each.tenant(), each.plan(), each.route(), each.result(), each.reason()) & (size - 1);
            while (next[i] != null) i = (i + 1) & (size - 1);
            next[i] = each;
        }
        return next;
    }

    private static int hash(String tenant, String plan, String route, Result result, String reason) {
        int h = (((tenant.hashCode() * 31 + plan.hashCode()) * 31 + route.hashCode()) * 31 + reason.hashCode()) * 2
                + result.ordinal();
        return h ^ (h >>> 16);
    }
}

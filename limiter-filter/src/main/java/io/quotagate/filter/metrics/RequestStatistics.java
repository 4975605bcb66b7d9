package io.quotagate.filter.metrics;

import io.quotagate.filter.admission.ConcurrencyListener;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

/**
 * The filter's own request counters, by tenant, plan, route, outcome and reason. Meter registries
 * and the dashboard read these; nothing is counted twice.
 *
 * <p>The {@code tenant} dimension is bounded: at most {@code topTenants} tenants keep their own
 * name — the preferred (assigned) tenants first, then the first others seen — and every other
 * tenant is counted as {@value #OTHER}. Requests without a tenant are {@value #NONE}; anonymous
 * clients are {@value #ANONYMOUS} (the filter passes this very constant). Real tenants whose id is
 * one of these three words are counted as {@value #OTHER}. Routes, plans and reasons come from configuration and code, so
 * the number of cells is bounded by {@code (topTenants + 3) × plans × routes × reasons}.
 *
 * <p>Recording is one probe of an open-addressing table of the cells themselves, compared field by
 * field (identity first: plans, routes and reasons are the configuration's own strings), so it
 * allocates nothing; the table is copied on the rare creation of a cell.
 */
public final class RequestStatistics {
    /** Tenant tag of every tenant beyond the top N. */
    public static final String OTHER = "other";
    /** Tenant tag of a request whose tenant is missing or invalid. */
    public static final String NONE = "none";
    /** Tenant tag of anonymous clients (keyed by address, never named in metrics). */
    public static final String ANONYMOUS = "anonymous";
    /** Reason tag of an allowed request. */
    public static final String NO_REASON = "none";

    /** Whether the request reached the application. */
    public enum Outcome {
        ALLOWED, REJECTED;

        /** The tag value ({@code allowed}, {@code rejected}). */
        public String tag() {
            return this == ALLOWED ? "allowed" : "rejected";
        }
    }

    /**
     * One counter: requests with these tags.
     *
     * @see #forEach
     */
    public static final class Cell {
        private final String tenant;
        private final String plan;
        private final String route;
        private final Outcome outcome;
        private final String reason;
        private final LongAdder count = new LongAdder();

        Cell(String tenant, String plan, String route, Outcome outcome, String reason) {
            this.tenant = tenant;
            this.plan = plan;
            this.route = route;
            this.outcome = outcome;
            this.reason = reason;
        }

        public String tenant() {
            return tenant;
        }

        public String plan() {
            return plan;
        }

        public String route() {
            return route;
        }

        public Outcome outcome() {
            return outcome;
        }

        public String reason() {
            return reason;
        }

        /** Requests counted so far (monotonic). */
        public long count() {
            return count.sum();
        }

        boolean is(String tenant, String plan, String route, Outcome outcome, String reason) {
            return outcome == this.outcome && same(tenant, this.tenant) && same(route, this.route)
                    && same(plan, this.plan) && same(reason, this.reason);
        }

        private static boolean same(String a, String b) {
            return a == b || a.equals(b);
        }
    }

    private final int topTenants;
    private final ConcurrentMap<String, Boolean> named = new ConcurrentHashMap<>();
    /** Set once every named slot is taken: from then on an unnamed tenant costs one map lookup. */
    private volatile boolean full;
    /** Cells by their tags; replaced, never changed, under the lock of {@link #create}. */
    private volatile Cell[] table = new Cell[64];
    private final List<Consumer<Cell>> newCellListeners = new CopyOnWriteArrayList<>();
    private final List<Cell> all = new CopyOnWriteArrayList<>();
    private final List<ConcurrencyListener> queueWaitSinks = new CopyOnWriteArrayList<>();
    private final List<CostSink> costSinks = new CopyOnWriteArrayList<>();

    /** Receives settled costs (see {@link #costSettled}). */
    @FunctionalInterface
    public interface CostSink {
        /**
         * A request whose application reported its actual cost has been settled.
         *
         * @param route    the request's route
         * @param reserved units taken before it ran (the estimate or the static cost)
         * @param actual   units it reported using
         */
        void settled(String route, long reserved, long actual);
    }

    /**
     * @param topTenants most tenants that keep their own tag (≥ 0)
     * @param preferred  tenants that get a named slot first (e.g. those with an assigned plan)
     */
    public RequestStatistics(int topTenants, Collection<String> preferred) {
        if (topTenants < 0) throw new IllegalArgumentException("topTenants must be >= 0, was " + topTenants);
        this.topTenants = topTenants;
        for (String t : preferred) {
            if (named.size() >= topTenants) break;
            named.put(Objects.requireNonNull(t), Boolean.TRUE);
        }
        full = named.size() >= topTenants;
    }

    /**
     * Counts one request.
     *
     * @param tenant  tenant tag source: a valid tenant id, {@link #ANONYMOUS}, or null for none
     * @param plan    plan name, or null if the request never got one
     * @param route   route name
     * @param outcome allowed or rejected
     * @param reason  rejection reason code, or null for an allowed request
     */
    public void record(String tenant, String plan, String route, Outcome outcome, String reason) {
        cell(tagOf(tenant), plan == null ? NONE : plan, route, outcome, reason == null ? NO_REASON : reason)
                .count.increment();
    }

    /** True if {@code tag} is one of the reserved tags (anonymous, none, other) rather than a tenant's name. */
    static boolean isReserved(String tag) {
        return tag.equals(ANONYMOUS) || tag.equals(NONE) || tag.equals(OTHER);
    }

    /** The tag a tenant is counted under. */
    public String tagOf(String tenant) {
        if (tenant == null) return NONE;
        // identity, not equals: only the filter's own marker means anonymous clients; a real tenant
        // that happens to be called "anonymous", "none" or "other" is counted as "other"
        if (tenant == ANONYMOUS) return ANONYMOUS;
        if (isReserved(tenant)) return OTHER;
        if (named.containsKey(tenant)) return tenant;
        if (full) return OTHER;
        return claimName(tenant);
    }

    /** Names a tenant while named slots are left: exactly {@code topTenants} ever get one, and keep it. */
    private synchronized String claimName(String tenant) {
        if (named.containsKey(tenant)) return tenant;
        if (named.size() < topTenants) {
            named.put(tenant, Boolean.TRUE);
            if (named.size() >= topTenants) full = true;
            return tenant;
        }
        full = true;
        return OTHER;
    }

    /** Passes a concurrency queue wait on to the sinks (the meter binder's timer). */
    public void queueWait(String group, String tenant, long waitedNanos, boolean admitted) {
        for (ConcurrencyListener sink : queueWaitSinks) sink.queueWait(group, tenant, waitedNanos, admitted);
    }

    /** Adds a receiver of queue waits (see {@link #queueWait}). */
    public void onQueueWait(ConcurrencyListener sink) {
        queueWaitSinks.add(Objects.requireNonNull(sink, "sink"));
    }

    /** Passes a settled reservation on to the sinks (the meter binder's cost summaries). */
    public void costSettled(String route, long reserved, long actual) {
        for (CostSink sink : costSinks) sink.settled(route, reserved, actual);
    }

    /** Adds a receiver of settled costs (see {@link #costSettled}). */
    public void onCostSettled(CostSink sink) {
        costSinks.add(Objects.requireNonNull(sink, "sink"));
    }

    /** Visits every cell that exists now. */
    public void forEach(Consumer<Cell> visitor) {
        all.forEach(visitor);
    }

    /** Calls {@code listener} for every cell that exists now and for each one created later. */
    public synchronized void onCell(Consumer<Cell> listener) {
        newCellListeners.add(listener);
        all.forEach(listener);
    }

    /** Number of distinct counters (bounded, see the class comment). */
    public int size() {
        return all.size();
    }

    /** Copy of the cells, for tests and dashboards. */
    public List<Cell> cells() {
        return new ArrayList<>(all);
    }

    private Cell cell(String tenant, String plan, String route, Outcome outcome, String reason) {
        Cell[] t = table;
        int mask = t.length - 1;
        for (int i = hash(tenant, plan, route, outcome, reason) & mask; ; i = (i + 1) & mask) {
            Cell c = t[i];
            if (c == null) return create(tenant, plan, route, outcome, reason);
            if (c.is(tenant, plan, route, outcome, reason)) return c;
        }
    }

    private synchronized Cell create(String tenant, String plan, String route, Outcome outcome, String reason) {
        for (Cell c : all) {
            if (c.is(tenant, plan, route, outcome, reason)) return c; // another thread made it meanwhile
        }
        Cell c = new Cell(tenant, plan, route, outcome, reason);
        // at most half full, so a probe always ends at an empty slot
        int size = table.length;
        while (size < 2 * (all.size() + 1)) size *= 2;
        Cell[] next = new Cell[size];
        all.add(c);
        for (Cell each : all) {
            int i = hash(each.tenant, each.plan, each.route, each.outcome, each.reason) & (size - 1);
            while (next[i] != null) i = (i + 1) & (size - 1);
            next[i] = each;
        }
        table = next;
        for (Consumer<Cell> l : newCellListeners) l.accept(c);
        return c;
    }

    private static int hash(String tenant, String plan, String route, Outcome outcome, String reason) {
        int h = (((tenant.hashCode() * 31 + plan.hashCode()) * 31 + route.hashCode()) * 31 + reason.hashCode()) * 2
                + outcome.ordinal();
        return h ^ (h >>> 16);
    }
}

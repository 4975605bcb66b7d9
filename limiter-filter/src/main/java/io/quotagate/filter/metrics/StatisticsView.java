package io.quotagate.filter.metrics;

import io.quotagate.filter.status.ConcurrencyListener;

import java.util.List;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * The request counters of a filter, read-only: what monitoring (the meter binder, a dashboard, the
 * Actuator endpoint) reads and subscribes to; only the filter records into them. A tenant is counted
 * under its own tag only while it is among the {@link #topTenants()} busiest of recent traffic (the names
 * follow traffic, with hysteresis, so a flood of new ids cannot churn them), every other one under
 * {@value #OTHER}: the number of cells stays bounded whatever the ids.
 */
public interface StatisticsView {
    /** Tenant tag of every tenant beyond the top N. */
    String OTHER = "other";
    /** Tenant tag of a request whose tenant is missing or invalid. */
    String NONE = "none";
    /** Tenant tag of anonymous clients (keyed by address, never named in metrics). */
    String ANONYMOUS = "anonymous";
    /** Reason tag of an allowed request. */
    String NO_REASON = "none";

    /**
     * True if {@code tag} is one of the reserved tenant tags ({@value #ANONYMOUS}, {@value #NONE},
     * {@value #OTHER}) rather than a tenant's name.
     */
    static boolean isReserved(String tag) {
        return ANONYMOUS.equals(tag) || NONE.equals(tag) || OTHER.equals(tag);
    }

    /** Whether the request reached the application. */
    enum Result {
        ALLOWED, REJECTED;

        /** The tag value ({@code allowed}, {@code rejected}). */
        public String tag() {
            return this == ALLOWED ? "allowed" : "rejected";
        }
    }

    /** Receives settled costs (the filter calls it once per such request). */
    @FunctionalInterface
    interface CostSink {
        /**
         * A request whose application reported its actual cost has been settled.
         *
         * @param route    the request's route
         * @param reserved units taken before it ran (the estimate or the static cost)
         * @param actual   units it reported using
         */
        void settled(String route, long reserved, long actual);
    }

    /** Receives throttle delays (the filter calls it once per delayed request). */
    @FunctionalInterface
    interface DelaySink {
        /**
         * A delayed request resumed, or was dropped before it did.
         *
         * @param route   the request's route
         * @param nanos   the delay planned at its decision (its units' wait), at most its throttle's max-delay
         * @param resumed true if it resumed and ran; false if it was dropped first (a client disconnect, an
         *                async error or timeout): its reservation was given back
         */
        void delayed(String route, long nanos, boolean resumed);
    }

    /**
     * One counter: requests with these tags. A cell is identified by itself (no {@code equals} beyond
     * identity), so it can key a map of the last count seen.
     *
     * @see #forEach
     */
    interface Cell {
        /** The tenant tag: a named tenant, {@value #OTHER}, {@value #NONE} or {@value #ANONYMOUS}. */
        String tenant();

        /** The plan tag. */
        String plan();

        /** The route tag. */
        String route();

        /** Whether these requests reached the application. */
        Result result();

        /** Why they were refused ({@value #NO_REASON} if allowed). */
        String reason();

        /**
         * Requests counted so far (monotonic). A removed cell (its tenant lost its name) may still grow by
         * the few requests that were being recorded at that moment.
         */
        long count();
    }

    /** The tag a tenant's requests are counted under now ({@value #OTHER} if it has no name). */
    String tagOf(String tenant);

    /** Most tenants named at once. */
    int topTenants();

    /** The tenants named now (a copy). */
    Set<String> namedTenants();

    /** Visits every cell that exists now. */
    void forEach(Consumer<Cell> visitor);

    /** Number of distinct counters (bounded). */
    int size();

    /** Copy of the cells, for tests and dashboards. */
    List<Cell> cells();

    /** Calls {@code listener} for every cell that exists now and for each one created later. */
    void onCell(Consumer<Cell> listener);

    /**
     * Calls {@code created} for every cell that exists now and for each one created later, and
     * {@code removed} for each cell removed later because its tenant lost its name; one at a time, a
     * cell always announced before it is removed. Keep them short: they run under the counters' lock.
     */
    void onCell(Consumer<Cell> created, Consumer<Cell> removed);

    /** Adds a receiver of concurrency queue waits. */
    void onQueueWait(ConcurrencyListener sink);

    /**
     * Adds a receiver of throttle delays: each delayed request once, when it resumes or is dropped before
     * (see {@link DelaySink}).
     */
    void onDelay(DelaySink sink);

    /** Requests delayed by a throttle now, their units reserved, waiting to resume. */
    int delayedNow();

    /** Adds a receiver of settled costs (requests whose application reported their actual cost). */
    void onCostSettled(CostSink sink);

    /**
     * Adds a receiver of refusals by buckets beside the tenant's: the request's route and the bucket's
     * scope ({@code per-user}, {@code tenant}, {@code user}, {@code client-address}); never the user.
     */
    void onScopedRefusal(BiConsumer<String, String> sink);
}

package io.quotagate.filter.metrics;

import io.quotagate.filter.admission.ConcurrencyListener;
import io.quotagate.filter.metrics.RequestStatistics.Cell;
import io.quotagate.filter.metrics.RequestStatistics.CostSink;

import java.util.List;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * The request counters of a filter, read-only: what monitoring (the meter binder, a dashboard, the
 * Actuator endpoint) reads and subscribes to. Only the filter records into them
 * ({@link RequestStatistics}); see there for how tenants are named and how cells are counted.
 */
public interface StatisticsView {
    /** The tag a tenant's requests are counted under now ({@value RequestStatistics#OTHER} if it has no name). */
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
     * (see {@link RequestStatistics.DelaySink}).
     */
    void onDelay(RequestStatistics.DelaySink sink);

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

package io.quotagate.filter.internal.metrics;

import io.quotagate.filter.metrics.QuotaSource;
import io.quotagate.filter.metrics.StatisticsView.Cell;
import io.quotagate.filter.metrics.StatisticsView.CostSink;
import io.quotagate.filter.metrics.StatisticsView.DelaySink;
import io.quotagate.filter.metrics.StatisticsView.Result;
import io.quotagate.filter.metrics.StatisticsView;
import io.quotagate.filter.status.ConcurrencyListener;

import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * The filter's own request counters, by tenant, plan, route, result and reason. Meter registries
 * and the dashboard read these; nothing is counted twice. Read-only to everyone but its
 * {@link Recorder}, which the filter keeps to itself: {@code QuotaSource.statistics()} hands out these
 * counters, never their recorder.
 *
 * <h2>Which tenants keep their name</h2>
 * The {@code tenant} dimension is bounded: at most {@code topTenants} tenants are <em>named</em>
 * (counted under their own id) at any time; every other tenant is counted as {@value #OTHER}.
 * Requests without a tenant are {@value #NONE}; anonymous clients are {@value #ANONYMOUS} (the
 * filter passes this very constant). Real tenants whose id is one of these three words are counted
 * as {@value #OTHER}. Names are given in this order:
 * <ol>
 *   <li><b>Known tenants</b> (an assignment or the directory knows them, so no client can make them
 *       up): the preferred (assigned) tenants from the start, and any other known tenant at its
 *       first request while a slot is free or held by a guest, whose name it takes. A guest never
 *       takes a known tenant's name.</li>
 *   <li><b>Guests</b> (ids nobody knows: anyone can invent them) by <em>recent traffic</em>: the
 *       unnamed tenants' requests are sampled ({@code 1 in }{@value #SAMPLE_EVERY}) into a
 *       Space-Saving table ({@link HeavyHitters}) whose counts are halved every epoch. An id enters
 *       the table at its second sample of an epoch: the first only marks it in a Bloom filter (the
 *       {@link Doorkeeper}), so a flood of ids sampled once each costs two bits a sample and evicts
 *       nothing. Only the table's guaranteed lower bound ({@code count − error}) counts: a guest takes
 *       a free slot once that reaches {@value #MIN_SAMPLES} sampled requests, so an id sent fewer than
 *       {@value #MIN_SAMPLES} times can never be named, however many such ids a flood makes up.</li>
 *   <li><b>Turnover with hysteresis</b>: when no slot is free, a tenant takes the name of the weakest
 *       holder of its own kind (guest for guest, known for known) only when its lower bound exceeds
 *       {@value #HYSTERESIS} × that holder's recent requests (in samples) + {@value #MIN_SAMPLES}, and
 *       a holder can lose its name only after one whole epoch measured under it. So two tenants of
 *       similar traffic do not take turns, and a tenant that goes quiet loses its name to a clearly
 *       heavier one. A holder's recent traffic comes from its own cells, exactly, at each epoch's
 *       end: named tenants are never sampled.</li>
 * </ol>
 *
 * <p><b>Decay by traffic volume, not time.</b> An epoch ends every {@code 8 × tracked} sampled
 * observations of unnamed tenants (12,800 unnamed requests with the default 50 names). Counting
 * needs no clock on the request path, tests are deterministic without one, and the window shrinks
 * exactly when it matters: under a flood of made-up ids epochs pass quickly, so a heavy tenant
 * arriving during it is recognised after a bounded number of its own requests. When no unnamed
 * tenant sends anything, nothing decays, but then nothing competes for a name either.
 *
 * <h2>Bounds</h2>
 * Routes, plans and reasons come from configuration and code, and cells exist only for named tenants
 * and the three fixed words, so the number of cells is at most
 * {@code (topTenants + 3) × plans × routes × outcomes × reasons} <em>at every moment</em>: when a
 * tenant loses its name its cells are removed (and {@linkplain #onCell(Consumer, Consumer) the
 * listeners told}, so the meter binder removes their meters); its later requests count as
 * {@value #OTHER}. The Space-Saving table holds {@code max(64, 4 × topTenants)} ids (at most
 * {@value #MAX_TRACKED}): any tenant with more than one in that many of the sampled unnamed requests
 * stays in it.
 *
 * <h2>Cost</h2>
 * Recording a named tenant is what it always was: one map lookup, then one probe of an
 * open-addressing table of the cells themselves, compared field by field (identity first: plans,
 * routes and reasons are the configuration's own strings), and a {@link LongAdder} increment; it
 * allocates nothing. An unnamed tenant adds a thread-local random draw; one request in
 * {@value #SAMPLE_EVERY} then <em>tries</em> the lock and marks its id at the door or updates the
 * table, or skips its sample if another thread holds the lock: the request path never waits for it.
 * Only a known tenant's first request while it can still take a name at once, a named guest's first
 * request as a known tenant, and the creation of a cell take the lock blocking: each happens a
 * bounded number of times per name given.
 *
 * <p>Inside, by reason to change: {@code TenantNames} gives and takes the names (the rules above),
 * {@code CellTable} finds and keeps the cells, {@code RequestEvents} passes on what is not counted in cells
 * (queue waits, delays, settled costs, scoped refusals); this class records a request through them.
 *
 * <h2>Races with a name change, step by step</h2>
 * Names and cells change together under one lock; requests read both without it.
 * <ol>
 *   <li>Demotion of tenant X: remove X from the names, then replace the cell table with one without
 *       X's cells, then tell the listeners (with the removed cells).</li>
 *   <li>A request of X that looked up the names before step 1 still has the tag X. If it then reads
 *       the old table and finds X's cell there, it increments that removed cell: the request is counted
 *       in a cell the listeners already got (they may read its final count later; a live sum misses
 *       it). If it finds no cell (the new table, or a cell never made), it asks to create one:
 *       creation, under the lock, sees X unnamed and counts the request as {@value #OTHER}. No cell is
 *       ever created for an unnamed tenant.</li>
 *   <li>So every request is counted in exactly one cell, live or removed: the sum over the live
 *       cells equals the requests recorded minus the counts of the removed cells. The dashboard's
 *       per-second rates read each cell's growth, including a removed cell's growth up to its
 *       removal, so they never go negative when a tenant is renamed.</li>
 * </ol>
 */
public final class RequestStatistics implements StatisticsView {

    /** One unnamed tenant's request in this many is observed by the heavy-hitter table. */
    static final int SAMPLE_EVERY = 8;
    /** Sampled observations (lower bound) a tenant needs before any name is given to it by traffic. */
    static final long MIN_SAMPLES = 16;
    /** How many times a holder's recent traffic a newcomer needs to take its name. */
    static final int HYSTERESIS = 2;
    /** Most ids the heavy-hitter table holds, whatever {@code topTenants}. */
    static final int MAX_TRACKED = 16_384;

    /** One counter: requests with these tags (see {@link StatisticsView.Cell}). */
    static final class CellCount implements Cell {
        private final String tenant;
        private final String plan;
        private final String route;
        private final Result result;
        private final String reason;
        private final LongAdder count = new LongAdder();

        CellCount(String tenant, String plan, String route, Result result, String reason) {
            this.tenant = tenant;
            this.plan = plan;
            this.route = route;
            this.result = result;
            this.reason = reason;
        }

        @Override
        public String tenant() {
            return tenant;
        }

        @Override
        public String plan() {
            return plan;
        }

        @Override
        public String route() {
            return route;
        }

        @Override
        public Result result() {
            return result;
        }

        @Override
        public String reason() {
            return reason;
        }

        @Override
        public long count() {
            return count.sum();
        }

        /** These very tag strings (identity: the configuration's own, as the filter passes them). */
        boolean hasTags(String plan, String route, Result result, String reason) {
            return result == this.result && route == this.route && plan == this.plan && reason == this.reason;
        }

        boolean is(String tenant, String plan, String route, Result result, String reason) {
            return result == this.result && same(tenant, this.tenant) && same(route, this.route)
                    && same(plan, this.plan) && same(reason, this.reason);
        }

        private static boolean same(String a, String b) {
            return a == b || a.equals(b);
        }
    }

    /**
     * How the names follow traffic (package-private: tests make the sampling reproducible and the
     * epochs short).
     *
     * @param sampleEvery the weight of one sample, in requests
     * @param sample      whether to observe this unnamed request (true about once in {@code sampleEvery})
     * @param tracked     ids the heavy-hitter table holds
     * @param epoch       sampled observations between two halvings
     */
    record Tuning(int sampleEvery, BooleanSupplier sample, int tracked, int epoch) {
        Tuning {
            if (sampleEvery < 1 || tracked < 1 || epoch < 1) {
                throw new IllegalArgumentException("sampleEvery, tracked and epoch must be >= 1");
            }
            Objects.requireNonNull(sample, "sample");
        }

        static Tuning defaults(int topTenants) {
            int tracked = (int) Math.min(MAX_TRACKED, Math.max(64L, 4L * topTenants));
            return new Tuning(SAMPLE_EVERY, () -> ThreadLocalRandom.current().nextInt(SAMPLE_EVERY) == 0,
                    tracked, 8 * tracked);
        }
    }

    private final int topTenants;
    /** Guards the names, the cells' creation and removal, the heavy-hitter table and the cell listeners. */
    private final ReentrantLock lock = new ReentrantLock();
    private final CellTable cells = new CellTable();
    private final TenantNames names;
    private final RequestEvents events = new RequestEvents();

    /**
     * The one writer of a {@link RequestStatistics}: the filter keeps it and hands out only
     * {@link #statistics()}, read-only, so nothing that monitors the filter can count requests into its
     * counters. Thread-safe; recording costs what the class comment of {@link RequestStatistics} says.
     */
    public static final class Recorder {
        private final RequestStatistics statistics;

        /**
         * Counters of their own, and their recorder.
         *
         * @param topTenants most tenants named at once (≥ 0)
         * @param preferred  known tenants named from the start (e.g. those with an assigned plan), as
         *                   many as fit
         */
        public Recorder(int topTenants, Collection<String> preferred) {
            this.statistics = new RequestStatistics(topTenants, preferred);
        }

        /** The counters this records into, read-only: what monitoring may be given. */
        public RequestStatistics statistics() {
            return statistics;
        }

        /**
         * Counts one request.
         *
         * @param tenant  tenant tag source: a valid tenant id, {@link #ANONYMOUS}, or null for none
         * @param known   whether an assignment or the directory knows the tenant (the filter placed it in
         *                a tenant bucket); false for an unknown id (a guest), which gets a name only by
         *                its recent traffic
         * @param plan    plan name, or null if the request never got one
         * @param route   route name
         * @param result allowed or rejected
         * @param reason  rejection reason code, or null for an allowed request
         */
        public void record(String tenant, boolean known, String plan, String route, Result result, String reason) {
            statistics.record(tenant, known, plan, route, result, reason);
        }

        /**
         * Counts one request of a tenant taken as known: for callers that do not tell guests apart (the
         * naming then is first come, first named while slots are free, then by recent traffic).
         */
        public void record(String tenant, String plan, String route, Result result, String reason) {
            statistics.record(tenant, true, plan, route, result, reason);
        }

        /** Passes a concurrency queue wait on to the receivers ({@link StatisticsView#onQueueWait}). */
        public void queueWait(String group, String tenant, long waitedNanos, boolean admitted) {
            statistics.queueWait(group, tenant, waitedNanos, admitted);
        }

        /** A request is delayed by a throttle ({@link StatisticsView#delayedNow}). */
        public void delayStarted() {
            statistics.events.delayStarted();
        }

        /** A delayed request resumed or was dropped: passed on to the receivers ({@link StatisticsView#onDelay}). */
        public void delayEnded(String route, long nanos, boolean resumed) {
            statistics.events.delayEnded(route, nanos, resumed);
        }

        /** Passes a settled reservation on to the receivers ({@link StatisticsView#onCostSettled}). */
        public void costSettled(String route, long reserved, long actual) {
            statistics.costSettled(route, reserved, actual);
        }

        /**
         * Passes on a refusal by a bucket beside the tenant's ({@link StatisticsView#onScopedRefusal}):
         * the request's {@code route} and the bucket's {@code scope}; never the user.
         */
        public void scopedRefused(String route, String scope) {
            statistics.scopedRefused(route, scope);
        }
    }

    /** Counters whose only writer is their {@link Recorder} (and, in this package, the tests). */
    RequestStatistics(int topTenants, Collection<String> preferred) {
        this(topTenants, preferred, Tuning.defaults(topTenants));
    }

    RequestStatistics(int topTenants, Collection<String> preferred, Tuning tuning) {
        if (topTenants < 0) throw new IllegalArgumentException("topTenants must be >= 0, was " + topTenants);
        this.topTenants = topTenants;
        this.names = new TenantNames(topTenants, preferred, tuning, lock, cells);
    }

    /**
     * Counts one request.
     *
     * @param tenant  tenant tag source: a valid tenant id, {@link #ANONYMOUS}, or null for none
     * @param known   whether an assignment or the directory knows the tenant (the filter placed it in a
     *                tenant bucket); false for an unknown id (a guest), which gets a name only by its
     *                recent traffic
     * @param plan    plan name, or null if the request never got one
     * @param route   route name
     * @param result allowed or rejected
     * @param reason  rejection reason code, or null for an allowed request
     */
    void record(String tenant, boolean known, String plan, String route, Result result, String reason) {
        String p = plan == null ? NONE : plan;
        String r = reason == null ? NO_REASON : reason;
        // a named tenant (the heavy ones) goes straight to the cell of its last request, if the tags are
        // the very same strings; anything else, including a guest becoming known, takes the full path
        TenantNames.Holder h = tenant == null ? null : names.holder(tenant);
        if (h != null && (h.known || !known)) {
            CellCount c = h.last;
            if (c == null || !c.hasTags(p, route, result, r)) h.last = c = cell(tenant, p, route, result, r);
            c.count.increment();
            return;
        }
        cell(tag(tenant, known, h), p, route, result, r).count.increment();
    }

    /**
     * Counts one request of a tenant taken as known: for callers that do not tell guests apart (the
     * naming then is first come, first named while slots are free, then by recent traffic). The filter
     * uses {@link #record(String, boolean, String, String, Result, String)}.
     */
    void record(String tenant, String plan, String route, Result result, String reason) {
        record(tenant, true, plan, route, result, reason);
    }


    /** The tag a tenant's requests are counted under now (no side effect: names are given by {@code record}). */
    @Override
    public String tagOf(String tenant) {
        if (tenant == null) return NONE;
        if (tenant == ANONYMOUS) return ANONYMOUS;
        if (StatisticsView.isReserved(tenant)) return OTHER;
        return names.isNamed(tenant) ? tenant : OTHER;
    }

    /** Most tenants named at once. */
    @Override
    public int topTenants() {
        return topTenants;
    }

    /**
     * The tenants named now (a copy), taken under the lock: the map's own iteration, concurrent with a
     * rename, could see the old name and the new one together, more names than ever held at once.
     */
    @Override
    public Set<String> namedTenants() {
        return names.namedTenants();
    }

    /**
     * The tag of this request, giving or taking names as described in the class comment.
     *
     * @param h the tenant's holder as the caller just looked it up (null: not named, or no tenant)
     */
    private String tag(String tenant, boolean known, TenantNames.Holder h) {
        if (tenant == null) return NONE;
        // identity, not equals: only the filter's own marker means anonymous clients; a real tenant
        // that happens to be called "anonymous", "none" or "other" is counted as "other"
        if (tenant == ANONYMOUS) return ANONYMOUS;
        if (StatisticsView.isReserved(tenant)) return OTHER;
        return names.tag(tenant, known, h);
    }

    /** Ids the heavy-hitter table holds now (for tests). */
    int candidateCount() {
        return names.candidateCount();
    }

    /** The heavy-hitter table's lower bound of an id's sampled requests (for tests). */
    long candidateLowerBound(String tenant) {
        return names.candidateLowerBound(tenant);
    }

    /** Passes a concurrency queue wait on to the sinks (the meter binder's timer). */
    void queueWait(String group, String tenant, long waitedNanos, boolean admitted) {
        events.queueWait(group, tenant, waitedNanos, admitted);
    }

    /** Adds a receiver of queue waits (see {@link Recorder#queueWait}). */
    @Override
    public void onQueueWait(ConcurrencyListener sink) {
        events.onQueueWait(sink);
    }

    /** Passes a settled reservation on to the sinks (the meter binder's cost summaries). */
    void costSettled(String route, long reserved, long actual) {
        events.costSettled(route, reserved, actual);
    }

    /**
     * Passes on a refusal by a bucket beside the tenant's (the meter binder's scoped refusal counter):
     * the request's {@code route} and the bucket's {@code scope} ({@code per-user}, {@code tenant},
     * {@code user}, {@code client-address}); never the user.
     */
    void scopedRefused(String route, String scope) {
        events.scopedRefused(route, scope);
    }

    /** Adds a receiver of refusals by buckets beside the tenant's (see {@link Recorder#scopedRefused}). */
    @Override
    public void onScopedRefusal(BiConsumer<String, String> sink) {
        events.onScopedRefusal(sink);
    }

    @Override
    public void onDelay(DelaySink sink) {
        events.onDelay(sink);
    }

    @Override
    public int delayedNow() {
        return events.delayedNow();
    }

    /** Adds a receiver of settled costs (see {@link Recorder#costSettled}). */
    @Override
    public void onCostSettled(CostSink sink) {
        events.onCostSettled(sink);
    }

    /** Visits every cell that exists now. */
    @Override
    public void forEach(Consumer<Cell> visitor) {
        cells.forEach(visitor);
    }

    /** Calls {@code listener} for every cell that exists now and for each one created later. */
    @Override
    public void onCell(Consumer<Cell> listener) {
        onCell(listener, cell -> { });
    }

    /**
     * Calls {@code created} for every cell that exists now and for each one created later, and
     * {@code removed} for each cell removed later because its tenant lost its name (see the class
     * comment). Both are called under the lock that orders these changes, one at a time, so a cell is
     * always announced before it is removed; keep them short.
     */
    @Override
    public void onCell(Consumer<Cell> created, Consumer<Cell> removed) {
        Objects.requireNonNull(created, "created");
        Objects.requireNonNull(removed, "removed");
        lock.lock();
        try {
            cells.listen(created, removed);
        } finally {
            lock.unlock();
        }
    }

    /** Number of distinct counters (bounded, see the class comment). */
    @Override
    public int size() {
        return cells.size();
    }

    /** Copy of the cells, for tests and dashboards. */
    @Override
    public List<Cell> cells() {
        return List.copyOf(cells.cells());
    }

    private CellCount cell(String tenant, String plan, String route, Result result, String reason) {
        CellCount c = cells.find(tenant, plan, route, result, reason);
        return c != null ? c : create(tenant, plan, route, result, reason);
    }

    private CellCount create(String tenant, String plan, String route, Result result, String reason) {
        lock.lock();
        try {
            // the caller saw the tenant named; if it lost its name since, count it as "other" (step 2
            // of the class comment): a cell exists only for a named tenant or a reserved word
            if (!StatisticsView.isReserved(tenant) && !names.isNamed(tenant)) tenant = OTHER;
            return cells.add(tenant, plan, route, result, reason); // or the one another thread made meanwhile
        } finally {
            lock.unlock();
        }
    }
}

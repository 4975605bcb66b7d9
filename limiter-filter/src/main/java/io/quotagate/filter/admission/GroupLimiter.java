package io.quotagate.filter.admission;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.quotagate.filter.core.QuotaClock;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The in-flight accounting of one concurrency group: per-tenant caps (from the tenant's plan) and an
 * optional cap across tenants. Two engines: {@link FailFastGroup} (lock-free, refuses at once) and
 * {@link QueuedGroup} (one lock, FIFO waiting room).
 *
 * <p>The wait a refusal states ({@code Retry-After}) depends on what is full. A tenant at its own cap
 * waits for its own oldest running request of the group: until that request has run as long as the
 * tenant's requests of the group usually take (its own moving average, remembered for the
 * {@value #TRACKED_DURATIONS} tenants seen last; the group's average for a tenant without one), or,
 * once it has run longer than that, for as long again as it has overrun. So other tenants' short
 * requests never shorten the wait of a tenant whose own requests are long, and a request that runs
 * far longer than usual makes the tenant wait longer with every refusal instead of every second. A
 * request refused because the whole group (or the guests' share of it) is full waits the group's
 * average duration: any tenant's request that ends frees the slot it needs.
 */
abstract sealed class GroupLimiter permits FailFastGroup, QueuedGroup {
    /** Retry-After basis before any request of the group completed. */
    static final long DEFAULT_DURATION_NANOS = 1_000_000_000L;
    /** The most tenants whose own average duration a group remembers (the least used are forgotten). */
    static final int TRACKED_DURATIONS = 10_000;
    /** Marks "no request running" where a start time is expected. */
    static final long NONE_RUNNING = Long.MIN_VALUE;

    final String name;
    /** Total cap across tenants; {@link Integer#MAX_VALUE} when uncapped. */
    final int maxInflight;
    private final QuotaClock clock;
    private final DurationAverage durations = new DurationAverage();
    /** tenant → the moving average of its own completed requests of the group. */
    private final Cache<String, DurationAverage> tenantDurations =
            Caffeine.newBuilder().maximumSize(TRACKED_DURATIONS).build();

    GroupLimiter(String name, int maxInflight, QuotaClock clock) {
        this.name = name;
        this.maxInflight = maxInflight;
        this.clock = clock;
    }

    /** Takes a slot for {@code tenant} whose own cap is {@code cap}, or refuses. */
    abstract Acquisition acquire(String tenant, int cap);

    /** Gives back the slot of a permit; called exactly once per granted permit. */
    abstract void free(GroupPermit permit);

    abstract int inflight();

    abstract int inflight(String tenant);

    abstract int queued();

    abstract int queued(String tenant);

    abstract Map<String, Integer> inflightByTenant();

    abstract Map<String, Integer> queuedByTenant();

    /** Entries in the tenant map: the tenants holding (or waiting for) slots now; tests check they vanish. */
    abstract int trackedTenants();

    final Acquisition.Refused refused(boolean timedOut) {
        return new Acquisition.Refused(name, durations.nanos(DEFAULT_DURATION_NANOS), timedOut);
    }

    /**
     * The refusal of a request whose tenant holds its whole cap of the group, with the wait until its
     * oldest running request (started at {@code oldestStart}, or {@link #NONE_RUNNING}) is expected
     * to end; see the class comment.
     */
    final Acquisition.Refused refusedAtTenantCap(String tenant, long oldestStart, boolean timedOut) {
        if (oldestStart == NONE_RUNNING) return new Acquisition.Refused(name, 0, timedOut); // ended meanwhile
        long expected = expectedDurationNanos(tenant);
        long age = now() - oldestStart;
        long wait = expected >= age ? expected - age : age - expected;
        return new Acquisition.Refused(name, wait, timedOut);
    }

    /** How long a request of {@code tenant} usually runs: its own average, else the group's, else 1 s. */
    final long expectedDurationNanos(String tenant) {
        DurationAverage own = tenantDurations.getIfPresent(tenant);
        long nanos = own == null ? -1 : own.nanos(-1);
        return nanos >= 0 ? nanos : durations.nanos(DEFAULT_DURATION_NANOS);
    }

    final long averageDurationNanos() {
        return durations.nanos(0);
    }

    /** Counts a completed request's duration for the group and for its tenant. */
    private void completed(String tenant, long nanos) {
        durations.add(nanos);
        // a non-capturing function: nothing is allocated unless the tenant is new to the table
        tenantDurations.get(tenant, t -> new DurationAverage()).add(nanos);
    }

    /**
     * One tenant's running requests of a group, oldest first, linked through their permits (no node
     * is allocated); {@link FailFastGroup} also counts the tenant's slots in it. The list is guarded
     * by the engine: {@link FailFastGroup} by this object's monitor, {@link QueuedGroup} by its lock.
     */
    static final class Running extends AtomicInteger {
        private static final long serialVersionUID = 1L;
        private transient GroupPermit oldest;
        private transient GroupPermit newest;

        Running(int count) {
            super(count);
        }

        void add(GroupPermit p) {
            p.older = newest;
            if (newest == null) oldest = p;
            else newest.newer = p;
            newest = p;
        }

        void remove(GroupPermit p) {
            if (p.older == null) oldest = p.newer;
            else p.older.newer = p.newer;
            if (p.newer == null) newest = p.older;
            else p.newer.older = p.older;
            p.older = null;
            p.newer = null;
        }

        /** The start of the oldest running request, or {@link #NONE_RUNNING}. */
        long oldestStart() {
            return oldest == null ? NONE_RUNNING : oldest.startNanos;
        }
    }

    final long now() {
        return clock.nanoTime();
    }

    /**
     * A granted slot. {@code state} goes 0 → 1 exactly once (compare-and-set), so of any number of
     * release/cancel calls from any threads only the first frees the slot.
     */
    static final class GroupPermit implements Permit {
        private static final VarHandle STATE;

        static {
            try {
                STATE = MethodHandles.lookup().findVarHandle(GroupPermit.class, "state", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        final GroupLimiter group;
        final String tenant;
        /** The tenant's running requests, this one among them until it is freed. */
        final Running running;
        final long startNanos;
        /** Neighbours in {@link #running}; guarded as the list is. */
        GroupPermit older;
        GroupPermit newer;
        @SuppressWarnings("unused") // accessed through STATE
        private volatile int state;

        /** A permit started now; the engine adds it to {@code running} before it hands it out. */
        GroupPermit(GroupLimiter group, String tenant, Running running) {
            this.group = group;
            this.tenant = tenant;
            this.running = running;
            this.startNanos = group.now();
        }

        @Override
        public void release() {
            if (STATE.compareAndSet(this, 0, 1)) {
                group.completed(tenant, group.now() - startNanos);
                group.free(this);
            }
        }

        @Override
        public void cancel() {
            if (STATE.compareAndSet(this, 0, 1)) group.free(this);
        }

        @Override
        public String group() {
            return group.name;
        }

        @Override
        public String toString() {
            return "Permit[" + group.name + ", " + tenant + (state == 0 ? ", held]" : ", released]");
        }
    }
}

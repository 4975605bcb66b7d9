package io.quotagate.filter.internal.admission;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.quotagate.filter.store.QuotaClock;
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
 *
 * <p>An <em>adaptive</em> group ({@code groups.<g>.adaptive}) has no fixed cap across tenants: its
 * {@link #total()} is read from an {@link AdaptiveLimit} on every acquire, and every released permit
 * feeds that limit its run time. Inside that moving total the tenants share fairly: a tenant below its
 * fair share ({@link #fairShare}) takes any free slot, and a tenant at or above it only while the
 * slots left free after it are still a fair share, kept for a tenant that arrives. So a busy tenant
 * cannot take the slots a quiet one would find, however many requests it sends, and a tenant alone
 * holds about half the limit. A refusal by that reserve is a refusal of a full group (the group's
 * average duration as its wait). A fixed group has neither the moving total nor the reserve.
 */
abstract sealed class GroupLimiter permits FailFastGroup, QueuedGroup {
    /** Retry-After basis before any request of the group completed. */
    static final long DEFAULT_DURATION_NANOS = 1_000_000_000L;
    /** The most tenants whose own average duration a group remembers (the least used are forgotten). */
    static final int TRACKED_DURATIONS = 10_000;
    /** Marks "no request running" where a start time is expected. */
    static final long NONE_RUNNING = Long.MIN_VALUE;

    final String name;
    /** Total cap across tenants; {@link Integer#MAX_VALUE} when uncapped or adaptive. */
    final int maxInflight;
    /** The moving total of an adaptive group, or null. */
    private final AdaptiveLimit adaptive;
    private final QuotaClock clock;
    private final DurationAverage durations = new DurationAverage();
    /** tenant → the moving average of its own completed requests of the group. */
    private final Cache<String, DurationAverage> tenantDurations =
            Caffeine.newBuilder().maximumSize(TRACKED_DURATIONS).build();

    GroupLimiter(String name, int maxInflight, AdaptiveLimit adaptive, QuotaClock clock) {
        this.name = name;
        this.maxInflight = maxInflight;
        this.adaptive = adaptive;
        this.clock = clock;
    }

    /** The cap across tenants now: the adaptive limit's value, else {@link #maxInflight}. */
    final int total() {
        return adaptive == null ? maxInflight : adaptive.current();
    }

    /** True for an adaptive group: its total moves and tenants share it fairly. */
    final boolean adaptive() {
        return adaptive != null;
    }

    /**
     * A tenant's fair share of an adaptive group's {@code total}: the total divided among the
     * {@code holders} (tenants holding or waiting for slots, the asking one counted) and one newcomer;
     * at least 1.
     */
    static int fairShare(int total, int holders) {
        return Math.max(1, total / (holders + 1));
    }

    /**
     * Whether the fair-share rule lets a tenant holding {@code own} slots take one more of a group with
     * {@code inflight} of {@code total} in flight (the total itself is checked by the caller): below
     * its fair share always; at or above it only if the slots still free after it are a fair share.
     * Always true for a fixed group.
     */
    final boolean reserveAllows(int own, int inflight, int total, int holders) {
        if (adaptive == null) return true;
        int share = fairShare(total, holders);
        return own < share || total - inflight - 1 >= share;
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
        /** The group's requests in flight when this one started, itself included (an adaptive limit's sample). */
        final int inflightAtStart;
        /** A throttle's delay before the request runs ({@link #delayedBy}): not part of an adaptive sample. */
        private volatile long delayNanos;
        /** Neighbours in {@link #running}; guarded as the list is. */
        GroupPermit older;
        GroupPermit newer;
        @SuppressWarnings("unused") // accessed through STATE
        private volatile int state;

        /** A permit started now; the engine adds it to {@code running} before it hands it out. */
        GroupPermit(GroupLimiter group, String tenant, Running running, int inflightAtStart) {
            this.group = group;
            this.tenant = tenant;
            this.running = running;
            this.startNanos = group.now();
            this.inflightAtStart = inflightAtStart;
        }

        @Override
        public void release() {
            if (STATE.compareAndSet(this, 0, 1)) {
                long ran = group.now() - startNanos;
                group.completed(tenant, ran);
                // the limit moves before the slot frees, so a queued group hands the slot over under the new limit
                if (group.adaptive != null) {
                    long delay = Math.min(delayNanos, ran); // the held slot counts above, the wait is no latency
                    group.adaptive.completed(startNanos + delay, ran - delay, inflightAtStart);
                }
                group.free(this);
            }
        }

        @Override
        public void cancel() {
            if (STATE.compareAndSet(this, 0, 1)) group.free(this);
        }

        @Override
        public void delayedBy(long nanos) {
            delayNanos = nanos;
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

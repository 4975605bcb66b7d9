package io.quotagate.filter.admission;

import io.quotagate.filter.core.QuotaClock;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Map;

/**
 * The in-flight accounting of one concurrency group: per-tenant caps (from the tenant's plan) and an
 * optional cap across tenants. Two engines: {@link FailFastGroup} (lock-free, refuses at once) and
 * {@link QueuedGroup} (one lock, FIFO waiting room).
 */
abstract sealed class GroupLimiter permits FailFastGroup, QueuedGroup {
    /** Retry-After basis before any request of the group completed. */
    static final long DEFAULT_DURATION_NANOS = 1_000_000_000L;

    final String name;
    /** Total cap across tenants; {@link Integer#MAX_VALUE} when uncapped. */
    final int maxInflight;
    private final QuotaClock clock;
    private final DurationAverage durations = new DurationAverage();

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

    /** Entries in the tenant map (tests check they vanish). */
    abstract int trackedTenants();

    final Acquisition.Refused refused(boolean timedOut) {
        return new Acquisition.Refused(name, durations.nanos(DEFAULT_DURATION_NANOS), timedOut);
    }

    final long averageDurationNanos() {
        return durations.nanos(0);
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
        /** The engine's per-tenant record, if it keeps one (see {@link FailFastGroup}). */
        final Object slot;
        private final long startNanos;
        @SuppressWarnings("unused") // accessed through STATE
        private volatile int state;

        GroupPermit(GroupLimiter group, String tenant, Object slot) {
            this.group = group;
            this.tenant = tenant;
            this.slot = slot;
            this.startNanos = group.now();
        }

        @Override
        public void release() {
            if (STATE.compareAndSet(this, 0, 1)) {
                group.durations.add(group.now() - startNanos);
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

package io.quotagate.filter.internal.admission;

import io.quotagate.filter.status.ConcurrencyListener;
import io.quotagate.filter.store.QuotaClock;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.IntSupplier;
import java.util.function.ToIntFunction;

/**
 * A group with a bounded FIFO waiting room: a request that finds no free slot waits (its thread
 * parked) until a slot is handed to it, at most {@code maxWait}; a full queue or a timeout refuses it.
 *
 * <p>One lock guards every count and the queue, so each rule below holds whenever the lock is free:
 * <ul>
 *   <li>no waiter could take a free slot: every release hands slots to waiters, oldest first, until
 *       none of them fits. So a newcomer that fits steals no slot from a waiter (a waiter that fits
 *       does not exist), and FIFO holds among the requests a freed slot could serve;</li>
 *   <li>a waiter blocked by its own tenant's cap does not block others behind it (no head-of-line
 *       blocking across tenants);</li>
 *   <li>a tenant's entry exists only while it has a request in flight or waiting.</li>
 * </ul>
 * In an adaptive group the total is read at each check and the fair-share rule (see
 * {@link GroupLimiter}) applies to newcomers and to the handover alike: a waiter of a tenant at its
 * fair share is skipped while the reserve is reached, as one at its own cap is.
 * The handover happens under the lock: the releaser counts the slot as the waiter's and then signals
 * it, so a slot is never free and promised at once, and a waiter that wakes at its deadline checks
 * {@code granted} first and keeps a slot handed to it at the last moment.
 */
final class QueuedGroup extends GroupLimiter {
    private static final System.Logger LOG = System.getLogger(QueuedGroup.class.getName());

    private final int queueSize;
    private final long maxWaitNanos;
    private final ConcurrencyListener listener;

    private final ReentrantLock lock = new ReentrantLock();
    private final Map<String, TenantState> tenants = new HashMap<>();
    private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();
    private int inflight;

    QueuedGroup(String name, int maxInflight, int queueSize, long maxWaitNanos, QuotaClock clock,
                ConcurrencyListener listener) {
        this(name, maxInflight, null, queueSize, maxWaitNanos, clock, listener);
    }

    /** @param adaptive the group's moving total, or null for a fixed {@code maxInflight} */
    QueuedGroup(String name, int maxInflight, AdaptiveLimit adaptive, int queueSize, long maxWaitNanos,
                QuotaClock clock, ConcurrencyListener listener) {
        super(name, maxInflight, adaptive, clock);
        this.queueSize = queueSize;
        this.maxWaitNanos = maxWaitNanos;
        this.listener = listener;
    }

    /** A tenant's counts; guarded by {@link #lock}. */
    private static final class TenantState {
        int inflight;
        int queued;
        /** Its running requests, oldest first (their count is {@link #inflight}). */
        final Running running = new Running(0);
    }

    /** A parked request; guarded by {@link #lock}. */
    private static final class Waiter {
        final String tenant;
        final int cap;
        final Condition wakeUp;
        boolean granted;

        Waiter(String tenant, int cap, Condition wakeUp) {
            this.tenant = tenant;
            this.cap = cap;
            this.wakeUp = wakeUp;
        }
    }

    @Override
    Acquisition acquire(String tenant, int cap) {
        long waitStart;
        boolean admitted;
        Acquisition result;
        lock.lock();
        try {
            TenantState state = tenants.get(tenant);
            if (fits(state, cap)) {
                if (state == null) tenants.put(tenant, state = new TenantState());
                state.inflight++;
                inflight++;
                return new Acquisition.Granted(started(tenant, state));
            }
            if (waiters.size() >= queueSize) return refusal(tenant, state, cap, false);

            if (state == null) tenants.put(tenant, state = new TenantState());
            Waiter w = new Waiter(tenant, cap, lock.newCondition());
            waiters.addLast(w);
            state.queued++;
            waitStart = System.nanoTime(); // a real wait of a parked thread: real time, not the quota clock
            boolean interrupted = false;
            long remaining = maxWaitNanos;
            while (!w.granted && remaining > 0) {
                try {
                    remaining = w.wakeUp.awaitNanos(remaining);
                } catch (InterruptedException e) {
                    interrupted = true; // stop waiting; keep a slot if it was already handed over
                    break;
                }
            }
            if (w.granted) {
                // the permit exists before any foreign code runs, so a throwing listener cannot strand the slot
                result = new Acquisition.Granted(started(tenant, state));
            } else {
                // timed out (or interrupted): leave the queue; no slot was counted for us
                waiters.remove(w);
                state.queued--;
                result = refusal(tenant, state, cap, true);
                dropIfIdle(tenant, state);
                if (adaptive()) handOver(); // a tenant gone from the holders raises the others' fair shares
            }
            if (interrupted) Thread.currentThread().interrupt();
            admitted = w.granted;
        } finally {
            lock.unlock();
        }
        try {
            listener.queueWait(name, tenant, System.nanoTime() - waitStart, admitted);
        } catch (RuntimeException listenerBug) {
            LOG.log(System.Logger.Level.WARNING, "concurrency listener failed; ignored", listenerBug);
        }
        return result;
    }

    /** A permit for a slot just counted as the tenant's; called under the lock. */
    private GroupPermit started(String tenant, TenantState state) {
        GroupPermit permit = new GroupPermit(this, tenant, state.running, inflight);
        state.running.add(permit);
        return permit;
    }

    /**
     * The refusal of a request that found no slot: if its own tenant holds its cap, it waits for the
     * tenant's oldest running request; otherwise for any request of the group. Called under the lock.
     */
    private Acquisition.Refused refusal(String tenant, TenantState state, int cap, boolean timedOut) {
        if (state != null && state.inflight >= cap) {
            return refusedAtTenantCap(tenant, state.running.oldestStart(), timedOut);
        }
        return refused(timedOut);
    }

    /** Whether a newcomer of a tenant with {@code state} (null: none yet) may take a slot now; under the lock. */
    private boolean fits(TenantState state, int cap) {
        int own = state == null ? 0 : state.inflight;
        int total = total();
        int holders = tenants.size() + (state == null ? 1 : 0);
        return inflight < total && own < cap && reserveAllows(own, inflight, total, holders);
    }

    @Override
    void free(GroupPermit permit) {
        lock.lock();
        try {
            TenantState state = tenants.get(permit.tenant);
            state.running.remove(permit);
            state.inflight--;
            inflight--;
            dropIfIdle(permit.tenant, state); // first: one holder fewer may raise an adaptive group's fair shares
            handOver();
        } finally {
            lock.unlock();
        }
    }

    /** Drops a tenant's entry once it has nothing in flight or waiting; called under the lock. */
    private void dropIfIdle(String tenant, TenantState state) {
        if (state.inflight == 0 && state.queued == 0) tenants.remove(tenant);
    }

    /**
     * Gives free slots to waiters, oldest first, skipping those whose own tenant is still at its cap
     * (or, adaptive, at its fair share with the reserve reached).
     */
    private void handOver() {
        int total = total();
        for (Iterator<Waiter> it = waiters.iterator(); it.hasNext() && inflight < total; ) {
            Waiter w = it.next();
            TenantState state = tenants.get(w.tenant);
            if (state.inflight < w.cap && reserveAllows(state.inflight, inflight, total, tenants.size())) {
                it.remove();
                state.queued--;
                state.inflight++;
                inflight++;
                w.granted = true;
                w.wakeUp.signal();
            }
        }
    }

    @Override
    int inflight() {
        return locked(() -> inflight);
    }

    @Override
    int inflight(String tenant) {
        return locked(() -> count(tenant, s -> s.inflight));
    }

    @Override
    int queued() {
        return locked(waiters::size);
    }

    @Override
    int queued(String tenant) {
        return locked(() -> count(tenant, s -> s.queued));
    }

    @Override
    Map<String, Integer> inflightByTenant() {
        return byTenant(s -> s.inflight);
    }

    @Override
    Map<String, Integer> queuedByTenant() {
        return byTenant(s -> s.queued);
    }

    /** Reads {@code read} under the lock. */
    private int locked(IntSupplier read) {
        lock.lock();
        try {
            return read.getAsInt();
        } finally {
            lock.unlock();
        }
    }

    /** A tenant's count, 0 if it has no entry; called under the lock. */
    private int count(String tenant, ToIntFunction<TenantState> field) {
        TenantState s = tenants.get(tenant);
        return s == null ? 0 : field.applyAsInt(s);
    }

    /** Each tenant's count, for the tenants whose count is above 0, in a fresh map. */
    private Map<String, Integer> byTenant(ToIntFunction<TenantState> field) {
        Map<String, Integer> out = new HashMap<>();
        lock.lock();
        try {
            tenants.forEach((t, s) -> {
                int n = field.applyAsInt(s);
                if (n > 0) out.put(t, n);
            });
        } finally {
            lock.unlock();
        }
        return out;
    }

    @Override
    int trackedTenants() {
        return locked(tenants::size);
    }
}

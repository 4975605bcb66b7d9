package io.quotagate.filter.internal.admission;

import io.quotagate.filter.store.QuotaClock;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A group without a queue: a request that finds its tenant's cap or the group's cap reached is
 * refused at once. Lock-free: one compare-and-set loop on the tenant's count, one on the group's;
 * only the list of the tenant's running requests (for the {@code Retry-After} of its refusals) is
 * linked and unlinked under the tenant's own monitor, which no other tenant touches.
 *
 * <p>In an adaptive group the total is read once per acquire and the fair-share rule (see
 * {@link GroupLimiter}) is checked in the same compare-and-set loop, from the tenant's count and the
 * number of tenants read just before: under a race a tenant may be refused, or admitted, one slot
 * off its fair share; the total is never exceeded.
 *
 * <p>Memory stays bounded by the requests in flight: a tenant's entry exists only while it has a
 * request in flight, and is removed when its count returns to 0 (see {@link #free}).
 */
final class FailFastGroup extends GroupLimiter {
    /** A count no acquire may touch: the entry is being removed from the map. */
    private static final int DEAD = Integer.MIN_VALUE;

    private final ConcurrentHashMap<String, Running> tenants = new ConcurrentHashMap<>();
    private final AtomicInteger inflight = new AtomicInteger();

    FailFastGroup(String name, int maxInflight, QuotaClock clock) {
        this(name, maxInflight, null, clock);
    }

    /** @param adaptive the group's moving total, or null for a fixed {@code maxInflight} */
    FailFastGroup(String name, int maxInflight, AdaptiveLimit adaptive, QuotaClock clock) {
        super(name, maxInflight, adaptive, clock);
    }

    @Override
    Acquisition acquire(String tenant, int cap) {
        // The tenant's slot first, then the group's: if the group is full we give the tenant's slot
        // back. In that short window another request of the same tenant may be refused although a
        // slot is about to free; a refusal too many under a race, never a request too many.
        Running count = takeTenantSlot(tenant, cap);
        if (count == null) return refusedAtTenantCap(tenant, oldestStart(tenant), false);
        int inflightNow = takeGroupSlot(count);
        if (inflightNow < 0) {
            freeTenantSlot(tenant, count);
            return refused(false);
        }
        GroupPermit permit = new GroupPermit(this, tenant, count, inflightNow);
        // linked while the count includes it, so the entry cannot be leaving the map (see free)
        synchronized (count) {
            count.add(permit);
        }
        return new Acquisition.Granted(permit);
    }

    /** The start of the tenant's oldest running request, or {@link #NONE_RUNNING}. */
    private long oldestStart(String tenant) {
        Running running = tenants.get(tenant);
        if (running == null) return NONE_RUNNING;
        synchronized (running) {
            return running.oldestStart();
        }
    }

    /** The tenant's count after taking a slot in it, or null if the tenant is at its cap. */
    private Running takeTenantSlot(String tenant, int cap) {
        for (;;) {
            Running count = tenants.get(tenant);
            if (count == null) {
                Running fresh = new Running(1);
                count = tenants.putIfAbsent(tenant, fresh);
                if (count == null) return fresh; // cap >= 1 always: the first slot is ours
            }
            int n;
            do {
                n = count.get();
                if (n == DEAD) break;
                if (n >= cap) return null;
            } while (!count.compareAndSet(n, n + 1));
            if (n != DEAD) return count;
            // The releaser that saw this count reach 0 has marked it DEAD and is removing it (or
            // has). Help it, so that we do not spin on the stale entry, and start over with a
            // fresh one. remove(key, value) removes only this instance, never a fresh one.
            tenants.remove(tenant, count);
        }
    }

    /**
     * The group's count after taking a slot in it, or -1 if the group is full (or, adaptive, the
     * tenant whose count is {@code own}, already holding this request's tenant slot, is at its fair
     * share and the reserve is reached).
     */
    private int takeGroupSlot(Running own) {
        int total = total();
        boolean fair = adaptive();
        int mine = fair ? Math.max(0, own.get() - 1) : 0; // its slots before this request's
        int holders = fair ? tenants.size() : 0; // the asking tenant is in the map already
        int n;
        do {
            n = inflight.get();
            if (n >= total || !reserveAllows(mine, n, total, holders)) return -1;
        } while (!inflight.compareAndSet(n, n + 1));
        return n + 1;
    }

    @Override
    void free(GroupPermit permit) {
        Running count = permit.running;
        synchronized (count) { // unlinked before the count drops: a dying entry holds no permit
            count.remove(permit);
        }
        inflight.decrementAndGet();
        freeTenantSlot(permit.tenant, count);
    }

    /**
     * Gives a slot back and drops the tenant's entry when it was the last one. The race, step by step,
     * between this releaser R (count 1 → 0) and an acquirer A of the same tenant:
     * <ol>
     *   <li>R decrements the count to 0. The entry is still in the map.</li>
     *   <li>If A now compare-and-sets 0 → 1, R's compare-and-set 0 → DEAD fails: R leaves the entry,
     *       which is in use again. No slot is lost, and the map keeps one entry for one request.</li>
     *   <li>If R's 0 → DEAD wins, A's loop sees DEAD and never increments it: a DEAD count is never
     *       revived, so no acquire can be lost in an entry that is leaving the map. R (or A,
     *       helping) removes exactly this instance with {@code remove(key, value)}; A then installs a
     *       fresh count with {@code putIfAbsent}, and a late {@code remove(key, dead)} cannot touch it.</li>
     * </ol>
     * A count is held only by permits that incremented it, so no other thread decrements it below 0.
     */
    private void freeTenantSlot(String tenant, Running count) {
        if (count.decrementAndGet() == 0 && count.compareAndSet(0, DEAD)) tenants.remove(tenant, count);
    }

    @Override
    int inflight() {
        return inflight.get();
    }

    @Override
    int inflight(String tenant) {
        Running c = tenants.get(tenant);
        return c == null ? 0 : Math.max(0, c.get());
    }

    @Override
    int queued() {
        return 0;
    }

    @Override
    int queued(String tenant) {
        return 0;
    }

    @Override
    Map<String, Integer> inflightByTenant() {
        Map<String, Integer> out = new HashMap<>();
        tenants.forEach((tenant, c) -> {
            int n = c.get();
            if (n > 0) out.put(tenant, n);
        });
        return out;
    }

    @Override
    Map<String, Integer> queuedByTenant() {
        return new HashMap<>();
    }

    @Override
    int trackedTenants() {
        return tenants.size();
    }
}

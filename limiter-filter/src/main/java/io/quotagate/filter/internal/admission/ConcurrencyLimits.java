package io.quotagate.filter.internal.admission;

import io.quotagate.filter.status.ConcurrencyListener;
import io.quotagate.filter.status.ConcurrencyView;
import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.store.QuotaClock;
import io.quotagate.plans.GroupSettings;
import io.quotagate.plans.Plans;
import io.quotagate.plans.RouteRule;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.IntSupplier;

/**
 * Concurrency caps of route groups, servlet-free: at most {@code plans.<plan>.concurrency.<group>}
 * requests of a group in flight per tenant, and at most {@code groups.<group>.max-inflight} across
 * all tenants. Taken <em>before</em> the token buckets (a request never holds budget while it waits
 * for a slot); a caller whose buckets then refuse gives the slot back with {@link Permit#cancel()}.
 *
 * <p>A request that finds no slot is refused at once ({@link Acquisition.Refused}, answered with 429
 * {@code reason: concurrency}) unless its group has a {@code queue}: it then waits, first in first
 * served, at most {@code max-wait}, and is refused if the queue is full or the wait times out. The
 * refusal's wait estimate is, for a tenant at its own cap, the expected end of its own oldest running
 * request of the group (from its own moving average of durations), otherwise the group's moving
 * average of completed request durations (1 s before the first one completes).
 *
 * <p>A group with {@code groups.<group>.adaptive} has, instead of a fixed {@code max-inflight}, a
 * limit that follows the durations of its completed requests (Gradient2 or Vegas, between the
 * file's {@code min} and {@code max}), read on every acquire, and its tenants share that limit fairly:
 * no tenant beyond its plan's cap, and one at or above its fair share only while the slots left free
 * after it are still a fair share for a tenant that arrives (see {@link GroupLimiter}). Like
 * {@code max-inflight}, the adaptive limit is this instance's own (it follows the latency this
 * instance sees) and is not divided by the instance count.
 *
 * <p>Guests (unknown tenants, anonymous clients: {@link BucketKind#GUEST}) each have their plan's cap,
 * and together at most {@code tenants.guests.concurrency.<group>}: a guest takes a slot of that shared
 * cap first, then its own, so a flood of made-up ids cannot hold all of a group's {@code max-inflight};
 * and no guest key or client address holds more than its fair share of that shared cap.
 *
 * <p>A route group that no plan caps and that has no {@code max-inflight} is still counted (its
 * in-flight numbers and durations are visible through {@link ConcurrencyView}), but never refuses.
 * Memory is bounded by the requests in flight and waiting: a tenant's entry is dropped as soon as it
 * has neither. Thread-safe; one instance serves every request.
 */
public final class ConcurrencyLimits implements ConcurrencyView {
    /**
     * Answers for a group no route names: nothing in flight, nothing queued, no durations, and a fresh
     * empty map per call. Never acquired from ({@link #limiter} refuses unknown groups).
     */
    private static final GroupLimiter ABSENT = new FailFastGroup("", Integer.MAX_VALUE, QuotaClock.system());
    private final Map<String, GroupLimiter> groups;
    private final IntSupplier instanceCount;
    /** group → the limiter in which all guests together hold at most their cap, under one key. */
    private final Map<String, GuestLimiters> guestGroups;
    /** The caps of the plans this was built with, for {@link #acquire(String, String, String)}. */
    private final ConcurrencyCaps startCaps;
    /** The one key that stands for every guest in {@link #guestGroups}; no tenant id contains '@'. */
    static final String GUESTS = "@guests";

    /**
     * @param plans    the plans: route groups and their {@code groups:} settings (fixed from now on)
     * @param clock    measures request durations for the {@code Retry-After} estimate
     * @param listener told how long queued requests waited
     */
    public ConcurrencyLimits(Plans plans, QuotaClock clock, ConcurrencyListener listener) {
        this(plans, clock, listener, () -> 1);
    }

    /**
     * Caps for one of several instances sharing a store: each tenant's plan cap is divided by the
     * instances counted now ({@link BucketStore#perInstanceShare}: rounded down, at least 1), so the
     * instances together hold about the plan's cap. A group's {@code max-inflight} is not divided: it
     * protects this instance's own threads.
     *
     * @param instanceCount instances sharing the quotas now ({@link BucketStore#instanceCount()})
     */
    public ConcurrencyLimits(Plans plans, QuotaClock clock, ConcurrencyListener listener, IntSupplier instanceCount) {
        Objects.requireNonNull(plans, "plans");
        this.instanceCount = Objects.requireNonNull(instanceCount, "instanceCount");
        Objects.requireNonNull(clock, "clock");
        Objects.requireNonNull(listener, "listener");
        Set<String> names = new TreeSet<>(plans.groups().keySet());
        for (RouteRule r : plans.routes()) r.group().ifPresent(names::add);
        Map<String, GroupLimiter> g = new HashMap<>();
        for (String name : names) {
            GroupSettings s = plans.group(name);
            int max = s.maxInflight().orElse(Integer.MAX_VALUE);
            AdaptiveLimit adaptive = s.adaptive().map(AdaptiveLimit::of).orElse(null);
            g.put(name, s.queue()
                    .<GroupLimiter>map(q ->
                            new QueuedGroup(name, max, adaptive, q.size(), q.maxWait().toNanos(), clock, listener))
                    .orElseGet(() -> new FailFastGroup(name, max, adaptive, clock)));
        }
        this.groups = Map.copyOf(g);
        // one per group, whether the guests are capped on it now or only after a reload
        Map<String, GuestLimiters> shared = new HashMap<>();
        for (String name : names) shared.put(name, new GuestLimiters(name, clock));
        this.guestGroups = Map.copyOf(shared);
        this.startCaps = ConcurrencyCaps.of(plans);
    }

    /**
     * Takes a slot of {@code group} for a request of {@code tenant} on {@code plan}, capped as the
     * plans this was built with say (the filter passes its policy in force instead), waiting in the
     * group's queue if it has one. The caller must give a granted permit back exactly once when the
     * request ends ({@link Permit#release()}), or at once if it does not run ({@link Permit#cancel()}).
     *
     * @param tenant the key the request is counted under (a tenant id, or an anonymous client's key)
     * @param plan   the tenant's plan, whose {@code concurrency} caps the tenant
     * @param group  the route's concurrency group
     * @throws IllegalArgumentException if no route of the plans has this group
     */
    public Acquisition acquire(String tenant, String plan, String group) {
        return acquire(startCaps, BucketKind.TENANT, tenant, plan, group, null);
    }

    /**
     * As {@link #acquire(String, String, String)}, capped by {@code policy}; a {@link BucketKind#GUEST}
     * also takes a slot of the guests' shared cap of the group, if {@code tenants.guests.concurrency}
     * sets one, and the permit then gives back both. Without its client address a guest is held to
     * its fair share by its key only; see {@link #acquire(Policy, BucketKind, String, String, String, String)}.
     */
    public Acquisition acquire(Policy policy, BucketKind kind, String tenant, String plan, String group) {
        return acquire(policy, kind, tenant, plan, group, null);
    }

    /**
     * As {@link #acquire(Policy, BucketKind, String, String, String)}, for a guest sending from
     * {@code address}. Under a guests' cap of the group, neither one guest key nor one client
     * address may hold more than its fair share of it: one that already holds slots of the pool may
     * take another only while it would hold at most the cap divided among the keys (addresses)
     * holding slots now plus one newcomer. So a newcomer always finds a slot unless as many guests as
     * the cap hold one each, and a client that opens more connections, or sends under more made-up
     * ids, does not get more of the pool for it.
     *
     * @param address the client address of a guest (its key for the per-address share), or null
     */
    public Acquisition acquire(Policy policy, BucketKind kind, String tenant, String plan, String group,
                               String address) {
        return acquire(policy.caps, kind, tenant, plan, group, address);
    }

    private Acquisition acquire(ConcurrencyCaps caps, BucketKind kind, String tenant, String plan, String group,
                                String address) {
        Integer guestCap = kind == BucketKind.GUEST ? caps.guestCap(group) : null;
        if (guestCap == null) return acquireOwn(caps, tenant, plan, group, Integer.MAX_VALUE);
        int pool = share(guestCap);
        GroupLimiter limiter = groups.get(group);
        // an adaptive group's limit moves below a cap sized for its max; made-up ids are newcomers each, below
        // their fair share, so they could take every slot of a low limit: all guests hold at most half of it
        // now, what one tenant alone may
        if (limiter != null && limiter.adaptive()) pool = Math.min(pool, Math.max(1, limiter.total() / 2));
        GuestLimiters guests = guestGroups.get(group);
        Permit[] taken = new Permit[4];
        int n = 0;
        try {
            // the shares first, the slot counted in the group's numbers last: a refused guest never
            // shows in them, not even for a moment
            Acquisition step = fairShare(guests.keys, tenant, pool);
            if (step instanceof Acquisition.Granted key) taken[n++] = key.permit();
            else return step;
            if (address != null) {
                step = fairShare(guests.addresses, address, pool);
                if (step instanceof Acquisition.Granted from) taken[n++] = from.permit();
                else return step;
            }
            step = guests.pool.acquire(GUESTS, pool);
            if (step instanceof Acquisition.Granted pooled) taken[n++] = pooled.permit();
            else return step;
            step = acquireOwn(caps, tenant, plan, group, pool);
            if (step instanceof Acquisition.Granted own) taken[n++] = own.permit();
            else return step;
            Acquisition granted = new Acquisition.Granted(new GuestPermits(taken, n));
            n = 0; // handed over
            return granted;
        } finally {
            for (int i = n - 1; i >= 0; i--) taken[i].cancel();
        }
    }

    /** A slot of {@code key} in {@code shares}, at most its fair share of {@code pool} (see above). */
    private static Acquisition fairShare(GroupLimiter shares, String key, int pool) {
        int holders = shares.trackedTenants();
        return shares.acquire(key, Math.max(1, pool / (holders + 1)));
    }

    private Acquisition acquireOwn(ConcurrencyCaps caps, String tenant, String plan, String group, int atMost) {
        GroupLimiter limiter = limiter(group);
        return limiter.acquire(Objects.requireNonNull(tenant, "tenant"),
                Math.min(atMost, share(caps.cap(plan, group))));
    }

    /** This instance's share of a cap (null: uncapped): the cap divided by the instances counted now. */
    private int share(Integer cap) {
        if (cap == null) return Integer.MAX_VALUE;
        int instances = instanceCount.getAsInt();
        return instances <= 1 ? cap : (int) BucketStore.perInstanceShare(cap, instances);
    }

    /** The guests' slots of one group: the shared cap, and who holds how many of it. */
    private record GuestLimiters(GroupLimiter pool, GroupLimiter keys, GroupLimiter addresses) {
        GuestLimiters(String group, QuotaClock clock) {
            this(new FailFastGroup(group, Integer.MAX_VALUE, clock), new FailFastGroup(group, Integer.MAX_VALUE, clock),
                    new FailFastGroup(group, Integer.MAX_VALUE, clock));
        }
    }

    /** A guest's slots (its shares, the pool's, its own last), given back together (each idempotent). */
    private record GuestPermits(Permit[] permits, int count) implements Permit {
        @Override
        public void release() {
            end(true, 0);
        }

        @Override
        public void cancel() {
            end(false, 0);
        }

        private void end(boolean completed, int from) {
            if (from == count) return;
            try {
                if (completed) permits[from].release();
                else permits[from].cancel();
            } finally {
                end(completed, from + 1);
            }
        }

        @Override
        public void delayedBy(long nanos) {
            for (int i = 0; i < count; i++) permits[i].delayedBy(nanos);
        }

        @Override
        public String group() {
            return permits[count - 1].group();
        }
    }

    /** Requests of the group in flight for all guests together, counted against their shared cap (0 without one). */
    public int guestsInflight(String group) {
        GuestLimiters shared = guestGroups.get(group);
        return shared == null ? 0 : shared.pool().inflight();
    }

    private GroupLimiter limiter(String group) {
        GroupLimiter limiter = groups.get(group);
        if (limiter == null) throw new IllegalArgumentException("unknown concurrency group " + group);
        return limiter;
    }

    @Override
    public Set<String> groups() {
        return groups.keySet();
    }

    @Override
    public int inflight(String group) {
        return groups.getOrDefault(group, ABSENT).inflight();
    }

    @Override
    public int inflight(String group, String tenant) {
        return groups.getOrDefault(group, ABSENT).inflight(tenant);
    }

    @Override
    public int queued(String group) {
        return groups.getOrDefault(group, ABSENT).queued();
    }

    @Override
    public int queued(String group, String tenant) {
        return groups.getOrDefault(group, ABSENT).queued(tenant);
    }

    @Override
    public Map<String, Integer> inflightByTenant(String group) {
        return groups.getOrDefault(group, ABSENT).inflightByTenant();
    }

    @Override
    public Map<String, Integer> queuedByTenant(String group) {
        return groups.getOrDefault(group, ABSENT).queuedByTenant();
    }

    @Override
    public long averageDurationNanos(String group) {
        return groups.getOrDefault(group, ABSENT).averageDurationNanos();
    }

    @Override
    public OptionalInt adaptiveLimit(String group) {
        GroupLimiter limiter = groups.get(group);
        return limiter != null && limiter.adaptive() ? OptionalInt.of(limiter.total()) : OptionalInt.empty();
    }

    /** Tenant entries held by a group's engine; package-private so tests can check memory is bounded. */
    int trackedTenants(String group) {
        return limiter(group).trackedTenants();
    }
}

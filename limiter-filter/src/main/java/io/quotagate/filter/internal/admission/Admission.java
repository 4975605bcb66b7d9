package io.quotagate.filter.internal.admission;

import io.quotagate.filter.status.BandwidthStatus;
import io.quotagate.filter.status.QuotaUsage;
import io.quotagate.filter.status.Reason;
import io.quotagate.filter.status.RetryAfter;
import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.store.BucketLimits;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.store.Probe;
import io.quotagate.filter.store.QuotaBucket;
import io.quotagate.filter.store.QuotaCounters;
import io.quotagate.filter.store.StoreUnavailableException;
import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.CalendarQuota;
import io.quotagate.plans.GlobalQuota;
import io.quotagate.plans.Plan;
import io.quotagate.plans.Plans;
import io.quotagate.tenant.TenantDirectory;

import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;

/**
 * The servlet-free admission decision: takes a request's cost from the tenant's bucket (sized by its
 * plan, every bandwidth at once) and then from the global quota, if one is configured. A guest's units
 * come from the guest pool before its own bucket, which is only looked at until then, so a guest the
 * pool refuses leaves no bucket of its own behind.
 *
 * <p>A tenant is never charged for a refused request: when the global quota refuses, the units just
 * taken from the tenant are given back. When a request is refused, the wait reported is the longest
 * of the buckets that would refuse it, so a client that waits that long and retries is admitted
 * (unless someone else used the units meanwhile).
 *
 * <p>It holds no configuration of its own: every call names the {@link Policy} that decides it, so
 * one request is decided and settled by one policy however the limits change meanwhile. A new policy
 * ({@link #policy}) keeps every bucket's state: the shared buckets are moved at once, each tenant
 * bucket lazily on its next use, both with {@link BucketLimits#INHERITANCE} (the store moves a bucket when handed
 * other {@link BucketLimits}). A plan (or the whole plans file) in shadow mode refuses nothing: the refusal
 * is counted ({@link #shadowRejections}) and reported in {@link Ticket#shadowRejection()}.
 *
 * <p>An assigned tenant whose plan (or own contract) has calendar quotas is also counted in them
 * ({@link QuotaWindows}, counters in the store's {@link QuotaCounters}), in the same store operation as
 * its buckets ({@link BucketStore#takeAll}): counted only if every bucket takes the units; a quota that
 * refuses answers {@link Reason#QUOTA}, waiting for its reset. A plan without quotas reads no wall clock
 * and allocates nothing more.
 *
 * <p>Thread-safe; one instance serves every request.
 */
final class Admission {
    /** Key of the single global bucket. */
    static final String GLOBAL_KEY = "global";
    /** Key of the guest pool, in the same table as the global bucket. */
    static final String GUESTS_KEY = "guests";
    /**
     * The published name of a plan's {@code per-user} bandwidth {@code b} is {@code per-user.b}, a route's
     * own {@code <route>.<per>.b}: a dot is in no bandwidth, quota or route name, so none of them can be
     * mistaken for one of the plan's policies or for each other.
     */
    static final String PER_USER_POLICY = "per-user";


    /** Where a ticket's give-backs that failed are logged (under the ticket's name, as before they moved here). */
    private static final System.Logger TICKET_LOG = System.getLogger(Ticket.class.getName());

    private final BucketStore store;
    /** Where calendar quotas count; null if the store keeps no counters (plans with quotas are refused). */
    private final QuotaCounters counters;
    /** The calendar of the quotas: which day, week and month it is. */
    private final Clock wall;
    private final LongAdder[] shadowed = new LongAdder[Reason.values().length];

    /**
     * One plan's buckets: their configuration and what else admission needs to know per request; its
     * calendar quotas, or null for none (then a request reads no wall clock and allocates nothing more).
     */
    record PlanLimits(BucketLimits limits, long maxCost, boolean shadow, boolean publish, QuotaWindows quotas,
                      BucketLimits perUser) {
    }

    /** The bucket limits of a {@link Policy}: what it sizes and which shared buckets it charges. */
    record Limits(Map<String, PlanLimits> plans, Map<String, PlanLimits> overrides, ContractLimits contracts,
                  QuotaBucket global, BucketLimits globalLimits, long globalMaxCost, QuotaBucket guests,
                  BucketLimits guestsLimits, long guestsMaxCost, Map<String, RouteLimits> routes) {
    }

    /** A route's own buckets ({@code routes[].limits}): per tenant, per user, per client address; null for none. */
    record RouteLimits(BucketLimits tenant, BucketLimits user, BucketLimits address) {
    }

    /** @param store where the buckets live; calendar quotas on the system's UTC clock */
    public Admission(BucketStore store) {
        this(store, Clock.systemUTC());
    }

    /**
     * @param store where the buckets (and the calendar quotas' counters) live
     * @param wall  the wall clock that tells which day, week and month it is for calendar quotas
     */
    Admission(BucketStore store, Clock wall) {
        this.store = Objects.requireNonNull(store, "store");
        this.counters = store.quotaCounters().orElse(null);
        this.wall = Objects.requireNonNull(wall, "wall");
        for (int i = 0; i < shadowed.length; i++) shadowed[i] = new LongAdder();
    }

    /** The policy of these plans, tenants placed by their {@code tenants.assignments}, as at start. */
    public Policy policy(Plans plans) {
        return policy(plans, TenantDirectory.of(plans.tenants().assignments()), null);
    }

    /**
     * The policy of these plans, placing tenants with {@code directory}. With a {@code previous}
     * policy, every bucket keeps its state (see {@link BucketLimits#INHERITANCE}): the shared buckets move to the
     * new limits now, each tenant's bucket on its next request; a plan whose limits did not change
     * keeps its buckets untouched. Callers that put policies in force one after another must build
     * them one at a time (a shared bucket is moved here).
     */
    public Policy policy(Plans plans, TenantDirectory directory, Policy previous) {
        Objects.requireNonNull(plans, "plans");
        return new Policy(this, plans, directory, limits(plans, previous == null ? null : previous.limits));
    }

    private Limits limits(Plans plans, Limits previous) {
        SharedBucket global = shared(GLOBAL_KEY, plans.global().map(GlobalQuota::limits).orElse(List.of()),
                previous == null ? null : previous.globalLimits, previous != null);
        SharedBucket guests = shared(GUESTS_KEY, plans.tenants().guests().limits(),
                previous == null ? null : previous.guestsLimits, previous != null);
        long globalMaxCost = global.maxCost();
        Map<String, PlanLimits> byName = new HashMap<>();
        for (Plan plan : plans.plans().values()) {
            PlanLimits old = previous == null ? null : previous.plans.get(plan.name());
            if (!plan.quotas().isEmpty() && counters == null) {
                throw new IllegalArgumentException("plans." + plan.name() + ".quotas: the bucket store keeps no "
                        + "quota counters; calendar quotas need the local or the Redis store");
            }
            QuotaWindows quotas = plan.quotas().isEmpty() ? null
                    : old != null && old.quotas != null && List.of(old.quotas.quotas()).equals(plan.quotas())
                    ? old.quotas : new QuotaWindows(plan.quotas());
            BucketLimits perUser = plan.perUser().isEmpty() ? null
                    : bucketLimits(plan.perUser(), old == null ? null : old.perUser, previous != null);
            byName.put(plan.name(), planLimits(plan.limits(), old, previous != null, globalMaxCost,
                    plan.shadow() || plans.shadow(), plan.publish(), quotas, perUser));
        }
        // tenants.overrides: a tenant's own limits and/or quotas, with its plan's shadow/publish flags
        Map<String, PlanLimits> overrides = new HashMap<>();
        Map<String, List<CalendarQuota>> ownQuotas = plans.tenants().overrideQuotas();
        Set<String> own = new HashSet<>(plans.tenants().overrides().keySet());
        own.addAll(ownQuotas.keySet());
        for (String tenant : own) {
            PlanLimits old = previous == null ? null : previous.overrides.get(tenant);
            PlanLimits plan = byName.get(plans.tenants().assignments().get(tenant));
            if (plan == null) continue; // Plans refuses an unassigned tenant with own limits
            QuotaWindows quotas = ownQuotas.containsKey(tenant)
                    ? windows(ownQuotas.get(tenant), old == null ? null : old.quotas) : plan.quotas;
            List<Bandwidth> bandwidths = plans.tenants().overrides().get(tenant);
            overrides.put(tenant, bandwidths != null
                    ? planLimits(bandwidths, old, previous != null, globalMaxCost, plan.shadow, plan.publish, quotas,
                    plan.perUser)
                    : new PlanLimits(plan.limits, Math.min(plan.limits.smallestCapacity(),
                    userBound(plan.perUser, quotaBound(quotas, globalMaxCost))), plan.shadow, plan.publish, quotas,
                    plan.perUser));
        }
        // the application directory's contracts: own limits built on first sight, with their plan's flags
        Map<String, PlanLimits> plansByName = Map.copyOf(byName);
        boolean reload = previous != null;
        ContractLimits contracts = new ContractLimits(plans, previous == null ? null : previous.contracts,
                (contract, before) -> {
                    PlanLimits plan = plansByName.get(contract.plan());
                    BucketLimits limits = !contract.hasOwnLimits() && plan != null ? plan.limits
                            : reload || before != null ? BucketLimits.next(before, contract.limits())
                            : BucketLimits.of(contract.limits());
                    QuotaWindows quotas = contract.hasOwnQuotas() ? windows(contract.quotas(), null)
                            : plan == null ? null : plan.quotas;
                    BucketLimits perUser = plan == null ? null : plan.perUser;
                    return new PlanLimits(limits, Math.min(limits.smallestCapacity(),
                            userBound(perUser, quotaBound(quotas, globalMaxCost))), plan != null && plan.shadow, plan != null && plan.publish, quotas,
                            plan == null ? null : plan.perUser);
                });
        Map<String, RouteLimits> routes = new HashMap<>();
        for (io.quotagate.plans.RouteRule rule : plans.routes()) {
            if (rule.limits().isEmpty()) continue;
            RouteLimits old = previous == null ? null : previous.routes.get(rule.name());
            BucketLimits[] byScope = new BucketLimits[3];
            for (io.quotagate.plans.ScopedLimit limit : rule.limits()) {
                int i = limit.per().ordinal();
                BucketLimits before = old == null ? null : i == 0 ? old.tenant : i == 1 ? old.user : old.address;
                byScope[i] = bucketLimits(limit.limits(), before, previous != null);
            }
            routes.put(rule.name(), new RouteLimits(byScope[0], byScope[1], byScope[2]));
        }
        return new Limits(plansByName, Map.copyOf(overrides), contracts, global.bucket(), global.limits(),
                globalMaxCost, guests.bucket(), guests.limits(), guests.maxCost(), Map.copyOf(routes));
    }

    /** A bucket every tenant (global quota) or every guest (guest pool) shares; all null for no limits. */
    private record SharedBucket(QuotaBucket bucket, BucketLimits limits, long maxCost) {
    }

    /** The shared bucket under {@code key}, moved by the store to {@code limits} (keeping its tokens) on a reload. */
    private SharedBucket shared(String key, List<Bandwidth> limits, BucketLimits previous, boolean reload) {
        if (limits.isEmpty()) return new SharedBucket(null, null, Long.MAX_VALUE);
        BucketLimits bucketLimits = bucketLimits(limits, previous, reload);
        return new SharedBucket(store.bucket(BucketKind.GLOBAL, key, bucketLimits), bucketLimits,
                bucketLimits.smallestCapacity());
    }

    /**
     * Decides whether a request of {@code cost} units may run, and if so takes them from its tenant's bucket
     * ({@code kind} {@link BucketKind#TENANT} for an assigned tenant, whose {@code tenants.overrides} limits
     * replace its plan's; {@link BucketKind#GUEST} for an unknown tenant or anonymous client), the shared ones
     * and {@code scoped} (null for none), all in one store operation, all or none; writes what it charged
     * into the request's own {@code ticket}, so an admitted request allocates nothing beside it.
     *
     * @param cost units, &gt; 0; at most {@link #maxCost} (a larger cost would never fit)
     * @return null if admitted ({@code ticket} holds the charge), else the refusal (nothing taken); the
     *         longest wait among the refusing buckets
     */
    Rejection charge(Policy policy, BucketKind kind, String key, String plan, long cost, ScopedCharge scoped,
                             Ticket ticket) {
        return charge(policy, kind, key, plan, cost, scoped, ticket, 0);
    }

    /**
     * As {@link #charge(Policy, BucketKind, String, String, long, ScopedCharge, Ticket)}, accepting a wait of
     * up to {@code maxDelayNanos} for the units ({@code throttle:}): if they arrive within it they are
     * reserved now, the buckets going into debt ({@link QuotaBucket#reserve}), and {@code ticket} says how
     * long the request must wait before it runs ({@link Ticket#delayNanos()}); a longer wait is refused as
     * without it. Shadow mode delays nothing (it refuses nothing either).
     *
     * @param maxDelayNanos the longest delay accepted, 0 for none
     */
    Rejection charge(Policy policy, BucketKind kind, String key, String plan, long cost, ScopedCharge scoped,
                             Ticket ticket, long maxDelayNanos) {
        if (cost <= 0) throw new IllegalArgumentException("cost must be > 0, was " + cost);
        if (kind == BucketKind.GLOBAL) throw new IllegalArgumentException("kind must be TENANT or GUEST");
        Limits l = policy.limits;
        PlanLimits pl = limitsOf(l, kind, key, plan);
        long maxCost = kind == BucketKind.GUEST ? Math.min(pl.maxCost, l.guestsMaxCost) : pl.maxCost;
        if (cost > maxCost) {
            throw new IllegalArgumentException("cost " + cost + " exceeds " + maxCost
                    + ", the most this tenant's buckets hold: it could never be admitted (check maxCost first)");
        }
        QuotaBucket tenantBucket = tenantBucket(kind, key, pl);
        QuotaBucket guests = kind == BucketKind.GUEST ? l.guests : null;
        QuotaBucket global = l.global;
        // calendar quotas count assigned tenants only: an id anyone can make up cannot hold a month's budget
        QuotaWindows quotas = kind == BucketKind.TENANT ? pl.quotas : null;
        long nowNanos = quotas == null ? 0 : QuotaWindows.nanos(wall.instant());
        // shadow mode lets every request through at once: delaying one would enforce the limit after all
        long maxDelay = pl.shadow ? 0 : maxDelayNanos;
        long delay = 0;
        Rejection refusal = null;
        // a plan that publishes its limits reads each bucket's remainder from the same operation (the probe)
        boolean publish = pl.publish;
        ticket.remaining(null);
        if (guests == null && global == null && scoped == null && quotas == null && !publish) {
            // the common case: one store operation, nothing allocated (the wait comes with a refusal)
            long wait = maxDelay == 0 ? tenantBucket.take(cost) : tenantBucket.reserve(cost, maxDelay);
            if (wait > maxDelay) refusal = new Rejection(Reason.TENANT_RATE, wait);
            else delay = wait;
        } else {
            // one store operation for all of the request's buckets (on Redis one round trip), all or none.
            // The guest pool goes first: a guest the pool refuses writes no bucket of its own (with Redis,
            // no key per made-up id of a flood)
            int size = 3 + (scoped == null ? 0 : scoped.size()) + (quotas == null ? 0 : quotas.size());
            QuotaBucket[] buckets = new QuotaBucket[size];
            int n = 0;
            if (guests != null) buckets[n++] = guests;
            int own = n;
            buckets[n++] = tenantBucket;
            int shared = n;
            if (global != null) buckets[n++] = global;
            int further = n;
            if (scoped != null) n = scoped.addTo(buckets, n);
            // the calendar quotas' counters last: counted only if every bucket takes the units
            int counted = n;
            if (quotas != null) n = quotas.addTo(buckets, n, counters, key, nowNanos);
            Probe probe = maxDelay == 0 ? store.takeAll(buckets, n, cost, publish)
                    : store.reserveAll(buckets, n, cost, maxDelay, publish);
            long[] waits = probe.waits();
            if (publish) {
                ticket.remaining(remainder(probe, own, pl.limits));
                if (scoped != null) scoped.noted(probe.remaining(), further);
            }
            if (!probe.taken()) {
                // the client must find every bucket able to take it when it comes back: the longest wait
                // wins, on a tie the tenant's own bucket, then the guest pool, then the global quota, then
                // the user's and the route's own
                refusal = new Rejection(Reason.TENANT_RATE, waits[own]);
                if (guests != null && waits[0] > refusal.nanosToWait()) {
                    refusal = new Rejection(Reason.GUEST_RATE, waits[0]);
                }
                if (global != null && waits[shared] > refusal.nanosToWait()) {
                    refusal = new Rejection(Reason.GLOBAL_RATE, waits[shared]);
                }
                if (scoped != null) refusal = scoped.longest(refusal, waits, further);
                if (quotas != null) refusal = quotas.longest(refusal, waits, counted);
            } else {
                if (scoped != null) scoped.charged(cost);
                // the request runs when every bucket has its units: after the longest wait
                if (maxDelay > 0) delay = probe.longestWait();
            }
        }
        if (refusal == null) {
            ticket.charged(kind, key, plan, cost, global != null, guests != null, quotas == null ? 0 : nowNanos, null);
            ticket.delayNanos = delay;
            return null;
        }
        if (!pl.shadow) return refusal;
        // shadow mode: exactly what enforcing would do to the buckets (nothing taken), but let it run
        shadowed[refusal.reason().ordinal()].increment();
        ticket.charged(kind, key, plan, 0, false, false, 0, refusal);
        return null;
    }

    /**
     * The buckets of a request beside its tenant's, or null if it has none (then nothing is allocated):
     * its plan's bucket of the user ({@code per-user}, assigned tenants only) and its route's own. The
     * user id and the client address are read only if a bucket is keyed by them.
     *
     * @param facts reads the user id (null for none: requests without a user share one bucket) and, only for
     *              a limit per client address, the client's address
     * @return null if the request has no such bucket; {@link ScopedCharge#INVALID_USER} if its user id is
     *         not valid (checked as tenant ids are)
     */
    <R> ScopedCharge scoped(Policy policy, Caller caller, String routeName, R request,
                            RequestFacts<? super R> facts) {
        Limits l = policy.limits;
        RouteLimits rl = l.routes.isEmpty() ? null : l.routes.get(routeName);
        PlanLimits pl = limitsOf(l, caller.kind(), caller.key(), caller.plan());
        BucketLimits perUser = caller.kind() == BucketKind.TENANT ? pl.perUser : null;
        if (rl == null && perUser == null) return null;
        ScopedCharge charge = new ScopedCharge();
        String userKey = null;
        if (perUser != null || (rl != null && rl.user != null)) {
            String id = facts.user(request);
            if (id != null && !io.quotagate.plans.TenantId.isValid(id)) return ScopedCharge.INVALID_USER;
            userKey = caller.key() + '/' + (id == null ? "" : id);
        }
        // published as pk: what the request itself names (its tenant, its user), never a client address
        String userPartition = caller.anonymous() ? null : userKey;
        if (perUser != null) {
            charge.add(store.bucket(BucketKind.USER, userKey, perUser), perUser, Reason.USER_RATE, "per-user",
                    PER_USER_POLICY, userPartition);
        }
        if (rl != null) {
            // an id any client can make up (a guest's, an address) never evicts an assigned tenant's
            BucketKind kind = caller.kind() == BucketKind.TENANT ? BucketKind.ROUTE : BucketKind.ROUTE_GUEST;
            if (rl.tenant != null) {
                charge.add(store.bucket(kind, routeName + '/' + caller.key(), rl.tenant), rl.tenant, Reason.ROUTE_RATE,
                        routeName + " per tenant", routeName + ".tenant", caller.tenant());
            }
            if (rl.user != null) {
                charge.add(store.bucket(kind, routeName + '/' + userKey, rl.user), rl.user, Reason.ROUTE_USER_RATE,
                        routeName + " per user", routeName + ".user", userPartition);
            }
            if (rl.address != null) {
                String key = caller.anonymous() ? caller.key() : Gate.anonymousKey(facts.clientAddress(request));
                charge.add(store.bucket(BucketKind.ROUTE_GUEST, routeName + '/' + key, rl.address), rl.address,
                        Reason.ROUTE_ADDRESS_RATE, routeName + " per client-address", routeName + ".client-address",
                        null);
            }
        }
        return charge;
    }

    /**
     * Takes {@code cost} from the request's {@code charge}; null if taken. In shadow mode nothing is
     * refused: the refusal is counted, nothing is held, and the request runs.
     */
    Rejection takeScoped(Policy policy, Caller caller, ScopedCharge charge, long cost) {
        Rejection refused = charge.take(store, cost, publishes(policy, caller.plan()));
        if (refused == null) return null;
        if (!limitsOf(policy.limits, caller.kind(), caller.key(), caller.plan()).shadow) return refused;
        shadowed[refused.reason().ordinal()].increment();
        return null;
    }

    /**
     * {@code refusal}, or the refusal a request of {@code cost} from {@code caller} would get now if
     * that makes it wait longer, in its plan's buckets and in {@code scoped}'s (per user, the route's
     * own; null for none); nothing is taken.
     */
    Rejection longerOf(Policy policy, Caller caller, Rejection refusal, long cost,
                               ScopedCharge scoped) {
        Limits l = policy.limits;
        PlanLimits pl = limitsOf(l, caller.kind(), caller.key(), caller.plan());
        QuotaBucket guests = caller.kind() == BucketKind.GUEST ? l.guests : null;
        QuotaWindows quotas = caller.kind() == BucketKind.TENANT ? pl.quotas : null;
        // every bucket's wait in one store operation (on Redis one round trip), nothing taken
        QuotaBucket[] buckets = new QuotaBucket[3 + (quotas == null ? 0 : quotas.size())];
        int n = 0;
        buckets[n++] = tenantBucket(caller.kind(), caller.key(), pl);
        if (guests != null) buckets[n++] = guests;
        int shared = n;
        if (l.global != null) buckets[n++] = l.global;
        int counted = n;
        if (quotas != null) n = quotas.addTo(buckets, n, counters, caller.key(), QuotaWindows.nanos(wall.instant()));
        long[] waits = store.waits(buckets, n, cost, false).waits();
        if (waits[0] > refusal.nanosToWait()) refusal = new Rejection(Reason.TENANT_RATE, waits[0]);
        if (guests != null && waits[1] > refusal.nanosToWait()) refusal = new Rejection(Reason.GUEST_RATE, waits[1]);
        if (l.global != null && waits[shared] > refusal.nanosToWait()) {
            refusal = new Rejection(Reason.GLOBAL_RATE, waits[shared]);
        }
        if (quotas != null) refusal = quotas.longest(refusal, waits, counted);
        // the buckets beside the plan's: no cost above their smallest capacity is ever admitted on this route
        return scoped == null ? refusal : scoped.longerOf(store, refusal, Math.min(cost, scoped.smallestCapacity()),
                publishes(policy, caller.plan()));
    }

    /**
     * Charges {@code cost} units to the caller's own bucket even if that puts it into debt (nothing in
     * shadow mode): the price of a concurrency slot held by a request refused for its units whose body
     * then did not arrive in time or was not valid input (see {@link Ticket#keepCharge()}).
     */
    void forceCharge(Policy policy, Caller caller, long cost) {
        PlanLimits pl = limitsOf(policy.limits, caller.kind(), caller.key(), caller.plan());
        if (pl.shadow) return;
        store.bucketToSettle(caller.kind(), caller.key(), pl.limits).forceTake(cost);
        store.changed(caller.kind(), caller.key()); // a bucket in debt needs longer to be full
    }

    /**
     * Settles a request's actual cost once it has ended: gives back {@code charged − actual} units to
     * every bucket that was charged, or charges the excess (the buckets may go into debt, so the
     * tenant waits longer next time). The excess charged is capped at {@link #maxCost} of the plan, so
     * one wild report cannot lock a tenant out for longer than about two full refills.
     *
     * @param policy     the policy that admitted the request
     * @param ticket     who was charged and where
     * @param charged    the units it took (read by the caller, which may already have marked the ticket unpaid)
     * @param actualCost the units the request really used, &gt;= 0
     * @return the units settled: negative for a refund, positive for an extra charge, 0 for none
     * @throws IllegalArgumentException if {@code actualCost} is negative
     */
    long reconcile(Policy policy, Ticket ticket, long charged, long actualCost) {
        if (actualCost < 0) throw new IllegalArgumentException("actual cost must be >= 0, was " + actualCost);
        if (charged == 0 || actualCost == charged) return 0;
        Limits l = policy.limits;
        BucketKind kind = ticket.kind();
        String key = ticket.key();
        PlanLimits pl = limitsOf(l, kind, key, ticket.plan());
        QuotaBucket global = ticket.globalCharged() ? l.global : null;
        QuotaBucket guests = ticket.guestsCharged() ? l.guests : null;
        if (actualCost < charged) {
            long refund = charged - actualCost;
            // a refund caps at capacity: it can never push a bucket above full
            store.bucketToSettle(kind, key, pl.limits).refund(refund); // not moved back to old limits
            ticket.refunded(refund, pl.limits);
            if (guests != null) guests.refund(refund);
            if (global != null) global.refund(refund);
            settleQuotas(pl, key, ticket.quotaNanos(), -refund);
            return -refund;
        }
        long excess = Math.min(actualCost - charged, pl.maxCost);
        settleQuotas(pl, key, ticket.quotaNanos(), excess);
        store.bucketToSettle(kind, key, pl.limits).forceTake(excess);
        // read it once more so the store sees the debt (a bucket in debt needs longer to be full)
        store.changed(kind, key);
        if (guests != null) guests.forceTake(excess);
        if (global != null) global.forceTake(excess);
        return excess;
    }

    /**
     * {@link Ticket#reprice}: the one place a ticket's charge is replaced. Gives back what it reserved (the
     * route's minimum, nothing if unpaid), then charges {@code cost} as a new admission: its tenant's
     * buckets, then those beside them; all or none. A refusal states the wait for {@code cost}, in all of
     * them, from their own probes.
     *
     * @return null if the request may run at that cost; otherwise the refusal (nothing charged)
     */
    Outcome.Refused reprice(Ticket ticket, long cost) {
        Policy policy = ticket.policy;
        Caller caller = ticket.caller();
        long reserved = ticket.unpay(); // from here on nothing is reserved, whatever the store does
        if (reserved > 0) reconcile(policy, ticket, reserved, 0);
        ticket.refundScoped(Long.MAX_VALUE);
        ScopedCharge scoped = ticket.scopedCharge();
        Rejection refused;
        try {
            refused = charge(policy, caller.kind(), caller.key(), caller.plan(), cost, null, ticket);
            // the buckets beside the tenant's were not asked: the refusal waits for them too
            if (refused != null && scoped != null) refused = longerOf(policy, caller, refused, cost, scoped);
        } catch (StoreUnavailableException unavailable) {
            return Outcome.Refused.unavailable(unavailable, caller);
        }
        if (refused != null) return tooMany(policy, refused, caller, ticket.remaining(), scoped);
        return chargeScoped(ticket, caller, scoped);
    }

    /**
     * Takes what {@code ticket} was charged from the buckets beside its tenant's ({@code scoped}, null for
     * none), its tenant's buckets having taken it already (an estimated route's minimum, or a repriced cost).
     * Null if taken, or nothing to take; otherwise the tenant's units go back (a tenant is never charged for a
     * refused request), the ticket holds nothing, and the answer is the refusal (a 503 if the store is
     * unavailable). On any other failure the units go back too before it is thrown.
     */
    Outcome.Refused chargeScoped(Ticket ticket, Caller caller, ScopedCharge scoped) {
        long charged = ticket.charged();
        if (scoped == null || charged == 0) return null;
        Policy policy = ticket.policy;
        Rejection over;
        try {
            over = takeScoped(policy, caller, scoped, charged);
        } catch (StoreUnavailableException unavailable) {
            reconcile(policy, ticket, ticket.unpay(), 0);
            return Outcome.Refused.unavailable(unavailable, caller);
        } catch (RuntimeException | Error failure) {
            reconcile(policy, ticket, ticket.unpay(), 0);
            throw failure;
        }
        if (over == null) return null;
        reconcile(policy, ticket, ticket.unpay(), 0); // the tenant pays nothing for a refused request
        return tooMany(policy, over, caller, ticket.remaining(), scoped);
    }

    /**
     * {@link Ticket#settle}: the request's actual cost against what it was charged, by the policy that admitted
     * it; the buckets beside the tenant's get back what it did not use of the cost they took (an excess is
     * charged to the plan's buckets only).
     */
    long settle(Ticket ticket, long actualCost) {
        if (ticket.unpaid()) return 0;
        long charged = ticket.charged();
        if (actualCost < charged) ticket.refundScoped(charged - actualCost);
        return reconcile(ticket.policy, ticket, charged, actualCost);
    }

    /**
     * What {@link Ticket#close()} does with the units of a request that does not run: gives them back; or,
     * if it {@link Ticket#keepCharge() keeps its charge}, keeps them, and an unpaid ticket is charged the
     * route's minimum cost, even into debt (holding a slot is never free). A store failure is logged: the
     * request is refused either way, and the units come back as the bucket refills.
     */
    void release(Ticket ticket) {
        boolean keep = ticket.keepsCharge();
        if (ticket.unpaid() && keep && ticket.key() != null) {
            Caller caller = ticket.caller(); // no charge: placed when it was made unpaid or repriced
            try {
                forceCharge(ticket.policy, caller, ticket.route().cost());
            } catch (RuntimeException storeFailure) {
                TICKET_LOG.log(System.Logger.Level.WARNING, "slot held by tenant " + caller.key()
                        + " not charged: " + storeFailure);
            }
        }
        if (!ticket.unpaid() && !keep) {
            try {
                reconcile(ticket.policy, ticket, ticket.charged(), 0);
                ticket.refundScoped(Long.MAX_VALUE);
            } catch (RuntimeException storeFailure) {
                TICKET_LOG.log(System.Logger.Level.WARNING, "units reserved for tenant " + ticket.key()
                        + " not given back: " + storeFailure);
            }
        }
    }

    /**
     * Settles {@code units} in the quota periods the request was counted in (the policy that admitted it);
     * {@code quotaNanos}: when it was counted, 0 if it was not.
     */
    private void settleQuotas(PlanLimits pl, String key, long quotaNanos, long units) {
        if (quotaNanos == 0 || pl.quotas == null) return;
        pl.quotas.settle(counters, key, units, quotaNanos, QuotaWindows.nanos(wall.instant()));
    }

    /**
     * The largest cost a request of this plan can ever be admitted with: the smallest capacity of
     * the plan's and the global quota's bandwidths.
     *
     * @throws IllegalArgumentException for an unknown plan
     */
    public long maxCost(Policy policy, String plan) {
        return planOf(policy.limits, plan).maxCost;
    }

    /**
     * As {@link #maxCost(Policy, String)}, for one tenant's bucket: its {@code tenants.overrides} limits, if
     * it has them, bound the cost instead of its plan's.
     */
    public long maxCost(Policy policy, BucketKind kind, String key, String plan) {
        Limits l = policy.limits;
        long max = limitsOf(l, kind, key, plan).maxCost;
        return kind == BucketKind.GUEST ? Math.min(max, l.guestsMaxCost) : max;
    }

    /** True if this plan publishes its limits (per-plan {@code publish: true}). */
    public boolean publishes(Policy policy, String plan) {
        PlanLimits pl = policy.limits.plans.get(plan);
        return pl != null && pl.publish;
    }

    /**
     * The state of each bandwidth of a tenant's bucket, in plan order, for publishing. The global
     * quota is never included: it stays hidden.
     */
    public List<BandwidthStatus> status(Policy policy, String tenant, String plan) {
        return status(policy, BucketKind.TENANT, tenant, plan);
    }

    /** As {@link #status(Policy, String, String)}, for the bucket in the {@code kind} table. */
    public List<BandwidthStatus> status(Policy policy, BucketKind kind, String tenant, String plan) {
        PlanLimits pl = limitsOf(policy.limits, kind, tenant, plan);
        List<BandwidthStatus> out = new ArrayList<>(pl.limits.bandwidths().size());
        statuses(tenantBucket(kind, tenant, pl).availablePerBandwidth(), pl.limits, null, null, out);
        return out;
    }

    /**
     * The published state of a request's buckets, for the fields of its response, from what its own
     * decision's store operation said ({@link Probe#remaining()}: on Redis, no round trip more; no bucket is
     * looked up again): its tenant's bucket ({@code remaining}), its calendar quotas, then its buckets beside
     * it ({@code scoped}, null for none); null if its plan keeps its limits hidden.
     */
    List<BandwidthStatus> published(Policy policy, BucketKind kind, String tenant, String plan, long[] remaining,
                                ScopedCharge scoped) {
        if (plan == null || !publishes(policy, plan)) return null;
        PlanLimits pl = limitsOf(policy.limits, kind, tenant, plan);
        List<BandwidthStatus> all = new ArrayList<>(pl.limits.bandwidths().size()
                + (pl.quotas == null ? 0 : pl.quotas.size()) + (scoped == null ? 0 : 2 * scoped.size()));
        // a response's fields name the tenant as pk; an anonymous client's key is its address, never sent back
        statuses(remaining, pl.limits, null, Gate.isAnonymousKey(tenant) ? null : tenant, all);
        if (kind == BucketKind.TENANT && pl.quotas != null) {
            String pk = tenant; // an assigned tenant's: never an anonymous client's address
            // each calendar quota is a policy too: q = its limit, w = its period, r = what is left, and a unit
            // spent now comes back only at the reset, which is t
            long now = QuotaWindows.nanos(wall.instant());
            CalendarQuota[] quotas = pl.quotas.quotas();
            for (int i = 0; i < quotas.length; i++) {
                QuotaWindows.Period p = pl.quotas.period(i, now);
                long used = counters.notedUsed(QuotaWindows.key(quotas[i], tenant, p.label()));
                long toReset = p.endNanos() - now;
                all.add(new BandwidthStatus(quotas[i].name(), quotas[i].limit(),
                        RetryAfter.seconds(p.endNanos() - p.startNanos()), Math.max(0, quotas[i].limit() - used),
                        used <= 0 ? 0 : toReset, toReset, pk));
            }
        }
        if (scoped != null) scoped.published(all);
        return all;
    }

    /**
     * The 429 of {@code rejected}: for a plan that publishes, it carries the state of the request's buckets
     * as the refusing operation left them ({@code remaining}: its tenant's; {@code scoped}: those beside it,
     * null for none), so that the refusal's fields name the one that refused it as exhausted.
     */
    Outcome.Refused tooMany(Policy policy, Rejection rejected, Caller caller, long[] remaining,
                            ScopedCharge scoped) {
        List<BandwidthStatus> published =
                published(policy, caller.kind(), caller.key(), caller.plan(), remaining, scoped);
        return published == null ? Outcome.Refused.tooMany(rejected, caller)
                : Outcome.Refused.tooMany(rejected, caller, published);
    }

    /**
     * The remainder of the bucket at {@code index} of a probe, if it has the shape of {@code limits}; else null
     * (a shared bucket another instance keeps at other limits during a change: nothing is published for it).
     */
    static long[] remainder(Probe probe, int index, BucketLimits limits) {
        long[][] remaining = probe.remaining();
        long[] tokens = remaining == null ? null : remaining[index];
        return tokens != null && tokens.length == limits.bandwidths().size() ? tokens : null;
    }

    /**
     * Adds the state of each bandwidth of a bucket at {@code limits} holding {@code tokens} to {@code out},
     * named {@code prefix.name} (or by its name alone for a null {@code prefix}), with the partition key
     * {@code pk} (null for none); nothing for null {@code tokens} or tokens of other limits.
     */
    static void statuses(long[] tokens, BucketLimits limits, String prefix, String pk, List<BandwidthStatus> out) {
        List<Bandwidth> bandwidths = limits.bandwidths();
        if (tokens == null || tokens.length != bandwidths.size()) return;
        for (int i = 0; i < bandwidths.size(); i++) {
            Bandwidth b = bandwidths.get(i);
            long window = RetryAfter.seconds(nanosToRefill(b, b.capacity()));
            long missing = b.capacity() - tokens[i];
            // the next whole unit: one more than now, or (in debt) the first one above 0; a full
            // bandwidth gives back a unit spent now after one unit's refill time
            long nextUnit = nanosToRefill(b, Math.max(1, 1 - tokens[i]));
            out.add(new BandwidthStatus(prefix == null ? b.name() : prefix + '.' + b.name(), b.capacity(), window,
                    Math.max(0, tokens[i]), missing <= 0 ? 0 : nanosToRefill(b, missing), nextUnit, pk));
        }
    }

    /**
     * The use of each calendar quota of a tenant in the current period, in plan order; empty if its
     * plan has none, or for a {@link BucketKind#GUEST} (quotas count assigned tenants only). Reads the
     * counters, creates none.
     */
    public List<QuotaUsage> quotaUsage(Policy policy, BucketKind kind, String tenant, String plan) {
        PlanLimits pl = limitsOf(policy.limits, kind, tenant, plan);
        if (kind != BucketKind.TENANT || pl.quotas == null) return List.of();
        long now = QuotaWindows.nanos(wall.instant());
        CalendarQuota[] quotas = pl.quotas.quotas();
        List<QuotaUsage> out = new ArrayList<>(quotas.length);
        for (int i = 0; i < quotas.length; i++) {
            QuotaWindows.Period p = pl.quotas.period(i, now);
            long used = counters.used(QuotaWindows.key(quotas[i], tenant, p.label()));
            out.add(new QuotaUsage(quotas[i].name(), quotas[i].per(), quotas[i].limit(), used,
                    Math.max(0, quotas[i].limit() - used), QuotaWindows.instant(p.endNanos())));
        }
        return out;
    }

    /** True if a global quota is in force. */
    public boolean hasGlobalQuota(Policy policy) {
        return policy.limits.global != null;
    }

    /** Units available now in the global quota (the smallest over its bandwidths), or 0 if there is none. */
    public long globalAvailableTokens(Policy policy) {
        QuotaBucket global = policy.limits.global;
        return global == null ? 0 : global.available();
    }

    /** The global quota's capacity (its smallest bandwidth), or 0 if there is none. */
    public long globalCapacity(Policy policy) {
        Limits l = policy.limits;
        return l.global == null ? 0 : l.globalMaxCost;
    }

    /** Requests that shadow mode let through although the limits would have refused them for {@code reason}. */
    public long shadowRejections(Reason reason) {
        return shadowed[reason.ordinal()].sum();
    }

    /**
     * The limits of a tenant's bucket: its {@code tenants.overrides} entry (the plans file, or a
     * runtime change) if it has one, else the own limits of its contract in the application's
     * directory, else its plan's.
     */
    private static PlanLimits limitsOf(Limits l, BucketKind kind, String key, String plan) {
        if (kind == BucketKind.TENANT) {
            if (!l.overrides.isEmpty()) {
                PlanLimits own = l.overrides.get(key);
                if (own != null) return own;
            }
            if (!l.contracts.isEmpty()) {
                PlanLimits own = l.contracts.get(key);
                if (own != null) return own;
            }
        }
        return planOf(l, plan);
    }

    /** The limits of a plan of the policy. */
    private static PlanLimits planOf(Limits l, String plan) {
        PlanLimits pl = l.plans.get(plan);
        if (pl == null) throw new IllegalArgumentException("unknown plan " + plan);
        return pl;
    }

    /** The tenant's bucket, moved by the store to the plan's current limits if they changed since its last use. */
    private QuotaBucket tenantBucket(BucketKind kind, String tenant, PlanLimits pl) {
        return store.bucket(kind, tenant, pl.limits);
    }

    /**
     * A plan's limits from its bandwidths (see {@link #bucketLimits}) and the cost bound (never above
     * the global quota's).
     */
    private static PlanLimits planLimits(List<Bandwidth> bandwidths, PlanLimits old, boolean reload, long globalMaxCost,
                                         boolean shadow, boolean publish, QuotaWindows quotas, BucketLimits perUser) {
        BucketLimits limits = bucketLimits(bandwidths, old == null ? null : old.limits, reload);
        return new PlanLimits(limits, Math.min(limits.smallestCapacity(),
                userBound(perUser, quotaBound(quotas, globalMaxCost))), shadow, publish, quotas, perUser);
    }

    /** The windows of {@code quotas} (null for none), {@code old}'s if they count the same quotas. */
    private QuotaWindows windows(List<CalendarQuota> quotas, QuotaWindows old) {
        if (quotas.isEmpty()) return null;
        if (counters == null) {
            throw new IllegalArgumentException("the bucket store keeps no quota counters; calendar quotas need "
                    + "the local or the Redis store");
        }
        return old != null && List.of(old.quotas()).equals(quotas) ? old : new QuotaWindows(quotas);
    }

    /** {@code bound}, or the smallest capacity of the per-user limits if below: no request may cost more. */
    private static long userBound(BucketLimits perUser, long bound) {
        return perUser == null ? bound : Math.min(bound, perUser.smallestCapacity());
    }

    /** {@code bound}, or the smallest limit of the quotas if below: no request may cost more. */
    private static long quotaBound(QuotaWindows quotas, long bound) {
        if (quotas == null) return bound;
        for (CalendarQuota q : quotas.quotas()) bound = Math.min(bound, q.limit());
        return bound;
    }

    /**
     * The limits for {@code bandwidths}: at start, the initial ones; on a reload, {@code previous}'s
     * configuration if equal, so the buckets that carry it stay untouched (see {@link BucketLimits#next}).
     */
    private static BucketLimits bucketLimits(List<Bandwidth> bandwidths, BucketLimits previous, boolean reload) {
        return reload ? BucketLimits.next(previous, bandwidths) : BucketLimits.of(bandwidths);
    }

    /**
     * Nanoseconds for the bandwidth to refill {@code units}: multiplied before divided, so a refill that
     * does not divide the period (45 per second) gives the exact figure, not one nanosecond more.
     */
    private static long nanosToRefill(Bandwidth b, long units) {
        double nanos = (double) units * b.period().toNanos() / b.refill();
        return nanos >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) Math.ceil(nanos);
    }
}

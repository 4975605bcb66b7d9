package io.quotagate.filter.internal.admission;

import io.quotagate.filter.internal.admission.Limits.PlanLimits;
import io.quotagate.filter.internal.admission.Limits.RouteLimits;
import io.quotagate.filter.internal.route.Route;
import io.quotagate.filter.status.Reason;
import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.store.BucketLimits;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.store.Probe;
import io.quotagate.filter.store.QuotaBucket;
import io.quotagate.filter.store.QuotaCounters;
import io.quotagate.filter.store.StoreUnavailableException;
import io.quotagate.plans.Plans;
import io.quotagate.tenant.TenantDirectory;

import java.time.Clock;
import java.util.Objects;
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
 * bucket lazily on its next use, both with {@link BucketLimits} (the store moves a bucket when handed
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
    /** Builds each policy's limits, moving the shared buckets on a reload. */
    private final LimitsCompiler compiler;
    /** How many closed periods the quota counters are kept for. */
    private final int keptPeriods;

    /** @param store where the buckets live; calendar quotas on the system's UTC clock */
    public Admission(BucketStore store) {
        this(store, Clock.systemUTC());
    }

    /**
     * @param store where the buckets (and the calendar quotas' counters) live
     * @param wall  the wall clock that tells which day, week and month it is for calendar quotas
     */
    Admission(BucketStore store, Clock wall) {
        this(store, wall, QuotaWindows.DEFAULT_KEPT_PERIODS);
    }

    /**
     * @param store       where the buckets (and the calendar quotas' counters) live
     * @param wall        the wall clock that tells which day, week and month it is for calendar quotas
     * @param keptPeriods how many closed periods the quota counters are kept for (the usage export reads them)
     */
    Admission(BucketStore store, Clock wall, int keptPeriods) {
        this.store = Objects.requireNonNull(store, "store");
        this.counters = store.quotaCounters().orElse(null);
        // a shared store's clock: every instance tells the same day on it, whatever its own clock says
        this.wall = store.clock(Objects.requireNonNull(wall, "wall"));
        for (int i = 0; i < shadowed.length; i++) shadowed[i] = new LongAdder();
        this.compiler = new LimitsCompiler(store, counters, keptPeriods);
        this.keptPeriods = keptPeriods;
    }

    /** The policy of these plans, tenants placed by their {@code tenants.assignments}, as at start. */
    public Policy policy(Plans plans) {
        return policy(plans, TenantDirectory.of(plans.tenants().assignments()), null);
    }

    /**
     * The policy of these plans, placing tenants with {@code directory}. With a {@code previous}
     * policy, every bucket keeps its state (see {@link BucketLimits}): the shared buckets move to the
     * new limits now, each tenant's bucket on its next request; a plan whose limits did not change
     * keeps its buckets untouched. Callers that put policies in force one after another must build
     * them one at a time (a shared bucket is moved here).
     */
    public Policy policy(Plans plans, TenantDirectory directory, Policy previous) {
        Objects.requireNonNull(plans, "plans");
        Limits limits = compiler.compile(plans, previous == null ? null : previous.limits);
        return new Policy(plans, directory, limits, new LimitsReadout(limits, store, counters, wall));
    }

    /**
     * Decides whether a request of {@code cost} units may run, and if so takes them from its tenant's bucket
     * ({@code kind} {@link BucketKind#TENANT} for an assigned tenant, whose {@code tenants.overrides} limits
     * replace its plan's; {@link BucketKind#GUEST} for an unknown tenant or anonymous client), the shared ones
     * and {@code scoped} (null for none), all in one store operation, all or none, and folds the store's reply
     * into one value: the request's ticket (the one object an admitted request allocates) or the refusal.
     *
     * <p>Accepts a wait of up to {@code maxDelayNanos} for the units ({@code throttle:}): if they arrive within
     * it they are reserved now, the buckets going into debt ({@link QuotaBucket#reserve}), and the ticket says
     * how long the request must wait before it runs ({@link Ticket#delayNanos()}); a longer wait is refused as
     * without it. Shadow mode delays nothing (it refuses nothing either).
     *
     * @param route         the request's route (the ticket's)
     * @param permit        the concurrency slot the ticket holds, or null
     * @param held          the buckets beside the tenant's the ticket holds (charged here if {@code scoped}, else
     *                      later: an estimated route's), or null
     * @param cost          units, &gt; 0; at most {@link LimitsReadout#maxCost} (a larger cost would never fit)
     * @param maxDelayNanos the longest delay accepted, 0 for none
     * @return the ticket if admitted, else the refusal (nothing taken): the longest wait among the refusing
     *         buckets
     */
    Charged charge(Policy policy, Route route, Permit permit, ScopedCharge held, BucketKind kind, String key,
                   String plan, long cost, ScopedCharge scoped, long maxDelayNanos) {
        if (cost <= 0 || kind == BucketKind.GLOBAL) throw badArgument(kind, cost);
        Limits l = policy.limits;
        PlanLimits pl = l.limitsOf(kind, key, plan);
        long maxCost = kind == BucketKind.GUEST ? Math.min(pl.maxCost(), l.guestsMaxCost()) : pl.maxCost();
        if (cost > maxCost) throw tooCostly(cost, maxCost);
        QuotaBucket guests = kind == BucketKind.GUEST ? l.guests() : null;
        QuotaBucket global = l.global();
        // calendar quotas count assigned tenants only: an id anyone can make up cannot hold a month's budget
        QuotaWindows quotas = kind == BucketKind.TENANT ? pl.quotas() : null;
        long nowNanos = quotas == null ? 0 : QuotaWindows.nanos(wall.instant());
        // shadow mode lets every request through at once: delaying one would enforce the limit after all
        long maxDelay = pl.shadow() ? 0 : maxDelayNanos;
        long[] remaining = null;
        long delay;
        Rejection refusal = null;
        if (guests == null && global == null && scoped == null && quotas == null && !pl.publish()) {
            // the common case: one store operation, nothing allocated (the wait comes with a refusal)
            delay = maxDelay == 0 ? store.take(kind, key, pl.limits(), cost)
                    : tenantBucket(kind, key, pl).reserve(cost, maxDelay);
            if (delay > maxDelay) refusal = new Rejection(Reason.TENANT_RATE, delay);
        } else {
            Probe probe = takeTogether(pl, key, cost, maxDelay, tenantBucket(kind, key, pl), guests, global, scoped,
                    quotas, nowNanos);
            int own = guests == null ? 0 : 1;
            if (pl.publish()) {
                int quotasAt = own + 1 + (global == null ? 0 : 1) + (scoped == null ? 0 : scoped.size());
                remaining = LimitsReadout.remainder(probe, own, pl.limits(), quotas, quotasAt);
            }
            // the request runs when every bucket has its units: after the longest wait
            delay = maxDelay > 0 ? probe.longestWait() : 0;
            if (probe.taken()) {
                if (scoped != null) scoped.charged(cost);
            } else {
                refusal = longest(probe.waits(), own, global != null, scoped, quotas).publishing(remaining);
            }
        }
        if (refusal == null) {
            return Ticket.admitted(policy, route, permit, held, kind, key, plan, cost, global != null, guests != null,
                    quotas == null ? 0 : nowNanos, null, remaining, delay);
        }
        if (!pl.shadow()) return refusal;
        // shadow mode: exactly what enforcing would do to the buckets (nothing taken), but the request runs
        shadowed[refusal.reason().ordinal()].increment();
        return Ticket.admitted(policy, route, permit, held, kind, key, plan, 0, false, false, 0, refusal, remaining,
                0);
    }

    // the failures out of line: the request path's method stays small enough for the JIT to inline
    private static IllegalArgumentException badArgument(BucketKind kind, long cost) {
        return new IllegalArgumentException(cost <= 0 ? "cost must be > 0, was " + cost
                : "kind must be TENANT or GUEST, was " + kind);
    }

    /** A cost no bucket of the tenant's could ever hold (a caller checks {@code maxCost} first). */
    private static IllegalArgumentException tooCostly(long cost, long maxCost) {
        return new IllegalArgumentException("cost " + cost + " exceeds " + maxCost
                + ", the most this tenant's buckets hold: it could never be admitted (check maxCost first)");
    }

    /**
     * The request's buckets beside its tenant's (guest pool, global quota, {@code scoped}, calendar quotas),
     * or a plan that publishes its remainders: one store operation for all of them (on Redis one round
     * trip), all or none. The guest pool goes first: a guest the pool refuses writes no bucket of its own
     * (with Redis, no key per made-up id of a flood). The buckets are laid out by {@link #layout}.
     *
     * @return the store's reply: taken or not, each bucket's wait and (if the plan publishes) remainder
     */
    private Probe takeTogether(PlanLimits pl, String key, long cost, long maxDelay, QuotaBucket tenantBucket,
                               QuotaBucket guests, QuotaBucket global, ScopedCharge scoped,
                               QuotaWindows quotas, long nowNanos) {
        boolean publish = pl.publish();
        QuotaBucket[] buckets = new QuotaBucket[3 + (scoped == null ? 0 : scoped.size())
                + (quotas == null ? 0 : quotas.size())];
        int n = layout(buckets, guests, tenantBucket, global, scoped, quotas, key, nowNanos);
        int further = (guests == null ? 1 : 2) + (global == null ? 0 : 1);
        // a plan that publishes its limits reads each bucket's remainder from the same operation (the probe)
        Probe probe = maxDelay == 0 ? store.takeAll(buckets, n, cost, publish)
                : store.reserveAll(buckets, n, cost, maxDelay, publish);
        if (publish && scoped != null) scoped.noted(probe.remaining(), further);
        return probe;
    }

    /**
     * Lays a request's buckets out at {@code into[0..]} in the one order its store operations use and
     * {@link #longest} reads: the guest pool (if any) first, so a guest the pool refuses writes no bucket of
     * its own (with Redis, no key per made-up id of a flood); the tenant's; the global quota (if any);
     * {@code scoped}'s (if any); the calendar quotas' counters last (counted only if every bucket takes the
     * units). Returns how many.
     */
    private int layout(QuotaBucket[] into, QuotaBucket guests, QuotaBucket tenantBucket, QuotaBucket global,
                       ScopedCharge scoped, QuotaWindows quotas, String key, long nowNanos) {
        int n = 0;
        if (guests != null) into[n++] = guests;
        into[n++] = tenantBucket;
        if (global != null) into[n++] = global;
        if (scoped != null) n = scoped.addTo(into, n);
        if (quotas != null) n = quotas.addTo(into, n, counters, key, nowNanos);
        return n;
    }

    /**
     * The one place a request's refusal is found: the longest wait of its buckets laid out by {@link #layout} (the
     * guest pool if {@code own} is 1, the tenant's at {@code own}, the global quota if {@code global}, then
     * {@code scoped}'s, then the calendar quotas), from the {@code waits} of the store operation that took or
     * asked them. The client must find every bucket able to take it when it
     * comes back: the longest wait wins, on a tie the tenant's own bucket, then the guest pool, then the global
     * quota, then the user's and the route's own, then the quotas.
     */
    private static Rejection longest(long[] waits, int own, boolean global, ScopedCharge scoped, QuotaWindows quotas) {
        Rejection refusal = new Rejection(Reason.TENANT_RATE, waits[own]);
        if (own == 1 && waits[0] > refusal.nanosToWait()) refusal = new Rejection(Reason.GUEST_RATE, waits[0]);
        int further = own + 1;
        if (global) {
            if (waits[further] > refusal.nanosToWait()) refusal = new Rejection(Reason.GLOBAL_RATE, waits[further]);
            further++;
        }
        if (scoped != null) refusal = scoped.longest(refusal, waits, further);
        if (quotas != null) refusal = quotas.longest(refusal, waits, further + (scoped == null ? 0 : scoped.size()));
        return refusal;
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
        RouteLimits rl = l.routes().isEmpty() ? null : l.routes().get(routeName);
        PlanLimits pl = l.limitsOf(caller.kind(), caller.key(), caller.plan());
        BucketLimits perUser = caller.kind() == BucketKind.TENANT ? pl.perUser() : null;
        if (rl == null && perUser == null) return null;
        ScopedCharge charge = new ScopedCharge();
        String userKey = null;
        if (perUser != null || (rl != null && rl.user() != null)) {
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
            if (rl.tenant() != null) {
                charge.add(store.bucket(kind, routeName + '/' + caller.key(), rl.tenant()), rl.tenant(),
                        Reason.ROUTE_RATE, routeName + " per tenant", routeName + ".tenant", caller.tenant());
            }
            if (rl.user() != null) {
                charge.add(store.bucket(kind, routeName + '/' + userKey, rl.user()), rl.user(), Reason.ROUTE_USER_RATE,
                        routeName + " per user", routeName + ".user", userPartition);
            }
            if (rl.address() != null) {
                String key = caller.anonymous() ? caller.key() : Gate.anonymousKey(facts.clientAddress(request));
                charge.add(store.bucket(BucketKind.ROUTE_GUEST, routeName + '/' + key, rl.address()), rl.address(),
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
        Rejection refused = charge.take(store, cost, policy.readout().publishes(caller.plan()));
        if (refused == null) return null;
        if (!policy.limits.limitsOf(caller.kind(), caller.key(), caller.plan()).shadow()) return refused;
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
        PlanLimits pl = l.limitsOf(caller.kind(), caller.key(), caller.plan());
        QuotaBucket guests = caller.kind() == BucketKind.GUEST ? l.guests() : null;
        QuotaWindows quotas = caller.kind() == BucketKind.TENANT ? pl.quotas() : null;
        // every bucket's wait in one store operation (on Redis one round trip), nothing taken
        QuotaBucket[] buckets = new QuotaBucket[3 + (quotas == null ? 0 : quotas.size())];
        int n = layout(buckets, guests, tenantBucket(caller.kind(), caller.key(), pl), l.global(), null, quotas,
                caller.key(), quotas == null ? 0 : QuotaWindows.nanos(wall.instant()));
        Rejection plan = longest(store.waits(buckets, n, cost, false).waits(), guests == null ? 0 : 1,
                l.global() != null, null, quotas);
        if (plan.nanosToWait() > refusal.nanosToWait()) refusal = plan; // on a tie, the refusal it had
        // the buckets beside the plan's: no cost above their smallest capacity is ever admitted on this route
        return scoped == null ? refusal : scoped.longerOf(store, refusal, Math.min(cost, scoped.smallestCapacity()),
                policy.readout().publishes(caller.plan()));
    }

    /**
     * Charges {@code cost} units to the caller's own bucket even if that puts it into debt (nothing in
     * shadow mode): the price of a concurrency slot held by a request refused for its units whose body
     * then did not arrive in time or was not valid input (see {@link Ticket#keepCharge()}).
     */
    void forceCharge(Policy policy, Caller caller, long cost) {
        PlanLimits pl = policy.limits.limitsOf(caller.kind(), caller.key(), caller.plan());
        if (pl.shadow()) return;
        store.bucketToSettle(caller.kind(), caller.key(), pl.limits()).forceTake(cost);
        store.changed(caller.kind(), caller.key()); // a bucket in debt needs longer to be full
    }

    /**
     * Settles a request's actual cost once it has ended: gives back {@code charged − actual} units to
     * every bucket that was charged, or charges the excess (the buckets may go into debt, so the
     * tenant waits longer next time). The excess charged is capped at {@link LimitsReadout#maxCost} of the plan, so
     * one wild report cannot lock a tenant out for longer than about two full refills. The shared buckets
     * (the global quota, the guest pool) are charged at most {@code charged} of it, the reservation again:
     * a debt there makes every tenant wait, so one request takes at most twice what they admitted it for,
     * and the requests in flight can put them into debt by at most the units they reserved.
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
        PlanLimits pl = l.limitsOf(kind, key, ticket.plan());
        QuotaBucket global = ticket.globalCharged() ? l.global() : null;
        QuotaBucket guests = ticket.guestsCharged() ? l.guests() : null;
        if (actualCost < charged) {
            long refund = charged - actualCost;
            // a refund caps at capacity: it can never push a bucket above full
            store.bucketToSettle(kind, key, pl.limits()).refund(refund); // not moved back to old limits
            ticket.refunded(refund, pl);
            if (guests != null) guests.refund(refund);
            if (global != null) global.refund(refund);
            settleQuotas(pl, key, ticket.quotaNanos(), -refund);
            return -refund;
        }
        long excess = Math.min(actualCost - charged, pl.maxCost());
        settleQuotas(pl, key, ticket.quotaNanos(), excess);
        store.bucketToSettle(kind, key, pl.limits()).forceTake(excess);
        // read it once more so the store sees the debt (a bucket in debt needs longer to be full)
        store.changed(kind, key);
        // the tenant's own buckets pay the whole excess; the shared ones at most the reservation again, so a
        // request estimated at 1 and reported at Long.MAX_VALUE cannot push everyone's quota into debt
        long shared = Math.min(excess, charged);
        if (guests != null) guests.forceTake(shared);
        if (global != null) global.forceTake(shared);
        return excess;
    }

    /**
     * {@link Gate#reprice}: the one place a ticket's charge is replaced. Gives back what it reserved (the
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
        Charged repriced;
        try {
            repriced = charge(policy, ticket.route(), ticket.permit(), null, caller.kind(), caller.key(), caller.plan(),
                    cost, null, 0);
            // the buckets beside the tenant's were not asked: the refusal waits for them too
            if (repriced instanceof Rejection refused && scoped != null) {
                repriced = longerOf(policy, caller, refused, cost, scoped).publishing(refused.remaining());
            }
        } catch (StoreUnavailableException unavailable) {
            return Outcome.Refused.unavailable(unavailable, caller);
        }
        if (repriced instanceof Rejection refused) {
            return policy.readout().tooMany(refused, caller, refused.remaining(), scoped);
        }
        ticket.recharge((Ticket) repriced);
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
        return policy.readout().tooMany(over, caller, ticket.remaining(), scoped);
    }

    /**
     * {@link Gate#settle}: the request's actual cost against what it was charged, by the policy that admitted
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
     * What {@link Gate#release} does with the units of a request that does not run: gives them back; or,
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
        if (quotaNanos == 0 || pl.quotas() == null) return;
        pl.quotas().settle(counters, key, units, quotaNanos, QuotaWindows.nanos(wall.instant()));
    }

    /** Requests that shadow mode let through although the limits would have refused them for {@code reason}. */
    public long shadowRejections(Reason reason) {
        return shadowed[reason.ordinal()].sum();
    }

    /** The tenant's bucket, moved by the store to the plan's current limits if they changed since its last use. */
    private QuotaBucket tenantBucket(BucketKind kind, String tenant, PlanLimits pl) {
        return store.bucket(kind, tenant, pl.limits());
    }
}

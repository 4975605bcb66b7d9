package io.quotagate.filter.internal.admission;

import io.quotagate.filter.internal.route.Route;
import io.quotagate.filter.status.BandwidthStatus;
import io.quotagate.filter.status.QuotaUsage;
import io.quotagate.filter.status.Reason;
import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.store.StoreUnavailableException;
import io.quotagate.plans.Plans;
import io.quotagate.plans.TenantId;
import io.quotagate.plans.TenantSettings;
import io.quotagate.plans.Throttle;
import io.quotagate.tenant.TenantDirectory;
import io.quotagate.tenant.TenantRejectedException;

import java.time.Clock;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The servlet-free decision: given a request's route and who sent it, under one {@link Policy},
 * {@link #decide} places the caller on its plan, takes a concurrency slot if the route is capped, then
 * the route's cost from the caller's buckets (and the guest pool and global quota it shares), then
 * from its buckets beside them (per-user, the route's own: {@link ScopedCharge}), and answers a
 * {@link Ticket} that holds them, or a {@link Outcome.Refused} with nothing held. The
 * order is the contract of docs/design.md §2: concurrency first, so a request never holds tokens while it
 * waits for a slot; a tenant is never charged for a request that does not run.
 *
 * <p>Thread-safe; one instance serves every request, under whichever policy each request read.
 */
public final class Gate {
    static final Outcome.Refused INVALID_TENANT = new Outcome.Refused(400, "invalid_tenant",
            "The tenant id must be 1-" + TenantId.MAX_LENGTH + " characters of A-Z a-z 0-9 . _ : -", null, 0);
    static final Outcome.Refused INVALID_USER = new Outcome.Refused(400, "invalid_user",
            "The user id must be 1-" + TenantId.MAX_LENGTH + " characters of A-Z a-z 0-9 . _ : -", null, 0);
    static final Outcome.Refused MISSING_TENANT = new Outcome.Refused(401, "missing_tenant",
            "No tenant could be identified for this request.", null, 0);

    /** The {@code Retry-After} of a 503 {@code directory_unavailable}, in seconds. */
    public static final long DIRECTORY_RETRY_AFTER_SECONDS = 5;

    private final Admission admission;
    private final ConcurrencyLimits concurrency;
    private final FailureLog directoryFailures;

    /**
     * @param store             where the buckets live
     * @param concurrency       the concurrency groups' slots (sized by the plans at start)
     * @param directoryFailures where failures of the tenant directory are logged, rate-limited
     */
    public Gate(BucketStore store, ConcurrencyLimits concurrency, FailureLog directoryFailures) {
        this(store, concurrency, directoryFailures, Clock.systemUTC());
    }

    /**
     * As {@link #Gate(BucketStore, ConcurrencyLimits, FailureLog)}, with the wall clock that tells
     * calendar quotas which day, week and month it is (tests move it by hand).
     */
    public Gate(BucketStore store, ConcurrencyLimits concurrency, FailureLog directoryFailures, Clock wall) {
        this(store, concurrency, directoryFailures, wall, QuotaWindows.DEFAULT_KEPT_PERIODS);
    }

    /**
     * As {@link #Gate(BucketStore, ConcurrencyLimits, FailureLog, Clock)}, keeping the calendar quotas' counters
     * {@code keptPeriods} closed periods after their own (the usage export reads them).
     */
    public Gate(BucketStore store, ConcurrencyLimits concurrency, FailureLog directoryFailures, Clock wall,
                int keptPeriods) {
        this.admission = new Admission(store, wall, keptPeriods);
        this.concurrency = Objects.requireNonNull(concurrency, "concurrency");
        this.directoryFailures = Objects.requireNonNull(directoryFailures, "directoryFailures");
    }

    /**
     * The policy of {@code plans}, placing tenants with {@code directory}; with the {@code previous}
     * policy, every bucket keeps its tokens across the change (see
     * {@link io.quotagate.filter.store.BucketLimits}).
     */
    public Policy policy(Plans plans, TenantDirectory directory, Policy previous) {
        return admission.policy(plans, directory, previous);
    }

    /** The capacity of the policy's global quota (its smallest bandwidth), or 0 if it has none. */
    public long globalCapacity(Policy policy) {
        return policy.readout().globalCapacity();
    }

    /** Units available now in the policy's global quota (smallest over its bandwidths), or 0 if it has none. */
    public long globalAvailable(Policy policy) {
        return policy.readout().globalAvailableTokens();
    }

    /** Requests that shadow mode let through although the limits would have refused them for {@code reason}. */
    public long shadowRejections(Reason reason) {
        return admission.shadowRejections(reason);
    }

    /**
     * Decides one request whose client's address is given, with no user and a route cost that is not
     * estimated (tests and benchmarks; the filter reads its requests through {@link RequestFacts}).
     *
     * @param clientAddress the client's address, keying an anonymous client
     * @see #decide(Policy, Route, String, Object, RequestFacts)
     */
    public Outcome decide(Policy policy, Route route, String tenant, String clientAddress) {
        return decide(policy, route, tenant, clientAddress, RequestFacts.address(false));
    }

    /**
     * Decides one request, reading what {@code facts} can tell of it only if it is needed: the client's
     * address for an anonymous client (its key) and for a guest on a group the guests' cap limits (no client
     * address holds more than its fair share of it, see {@link ConcurrencyLimits}); the user where a limit
     * is kept per user.
     *
     * <p>The buckets beside the tenant's take the cost in the same store operation (on Redis, the same round
     * trip): the user's under the plan's {@code per-user} limits ({@code <tenant>/<user>}; requests without a
     * user share {@code <tenant>/}) and the route's own ({@code routes[].limits}, per tenant, user or client
     * address). All of them take it or none does (a tenant is never charged for a refused request), and the
     * refusal is the longest wait among all the request's buckets ({@link Reason#USER_RATE},
     * {@link Reason#ROUTE_RATE}...), naming the limit. An invalid user id is refused with 400, uncharged.
     *
     * <p>On a route whose cost is {@linkplain RequestFacts#estimated estimated} from its body, a request its
     * buckets refuse at the route's minimum cost while it holds the route's concurrency slot gets a
     * {@link Ticket} all the same, one that holds the slot and nothing else ({@link Ticket#unpaid()}): the
     * caller reads the body within its limits, estimates the cost and {@link #reprice reprices} it, so
     * the refusal states the wait for the request's own cost. A refused request of an estimated route without
     * a concurrency group is not read (nothing would bound how many of its bodies are read at once): it is
     * refused with the wait for the largest cost its buckets can admit, an upper bound.
     *
     * <p>A tenant the directory cannot place (it throws: an outage, a lookup past its timeout, a row that cannot
     * be used) is placed as {@code tenants.directory.unavailable} says: on the default plan in the guest table,
     * or refused with 503 {@code directory_unavailable}; the failure is logged once per interval, never a 500.
     *
     * @param policy the policy the request read
     * @param route  its route, limited
     * @param tenant the tenant id the resolvers found (not yet validated), or null for none
     * @return a {@link Ticket} to {@link #release} (in a {@code finally}) or hand over to run, an {@link Outcome.Delayed}
     *         (a throttled request's ticket and its wait), or the refusal
     * @throws RuntimeException a store failure other than the fail-closed {@link StoreUnavailableException}
     *                          (nothing is held then)
     */
    public <R> Outcome decide(Policy policy, Route route, String tenant, R request, RequestFacts<? super R> facts) {
        // who is charged, as plain values: the common request never needs them as one Caller (a refusal,
        // a reprice and the buckets beside the tenant's make one)
        String key;
        TenantPlans.Placement placement;
        if (tenant != null) {
            if (!TenantId.isValid(tenant)) return INVALID_TENANT;
            try {
                // may ask the application's directory (a database...), within its lookup timeout
                placement = policy.placement().place(tenant).orElse(null);
            } catch (RuntimeException directoryFailure) {
                // an operator's outage (or a row that cannot be used) is never the client's 500: the tenant
                // gets the answer tenants.directory.unavailable names, and the log a line per interval
                directoryFailures.failed(" for tenant " + tenant, directoryFailure);
                if (policy.plans().tenants().directoryFailure() == TenantSettings.DirectoryFailure.REFUSE) {
                    return new Outcome.Refused(503, "directory_unavailable", "The plan of tenant " + tenant
                            + " cannot be looked up now; retry after " + DIRECTORY_RETRY_AFTER_SECONDS + " s.",
                            unplaced(tenant), DIRECTORY_RETRY_AFTER_SECONDS);
                }
                placement = policy.placement().unavailable();
            }
            if (placement == null) {
                return new Outcome.Refused(403, "unknown_tenant", "Tenant " + tenant + " is not known.",
                        unplaced(tenant), 0);
            }
            key = tenant;
        } else if (policy.plans().tenants().unresolved() == TenantSettings.Unresolved.ANONYMOUS) {
            key = anonymousKey(facts.clientAddress(request));
            placement = policy.placement().anonymous();
        } else {
            return MISSING_TENANT;
        }
        BucketKind kind = placement.kind();
        String plan = placement.plan();
        // concurrency before tokens: a request never holds tokens while it waits for a slot
        Permit permit = null;
        if (route.group().isPresent()) {
            String group = route.group().get();
            String address = kind == BucketKind.GUEST && policy.caps.guestCap(group) != null
                    ? (tenant == null ? key.substring(1) : facts.clientAddress(request)) : null;
            Acquisition acquired = concurrency.acquire(policy, kind, key, plan, group, address);
            if (acquired instanceof Acquisition.Refused refused) {
                return Outcome.Refused.tooMany(new Rejection(Reason.CONCURRENCY, refused.nanosToWait()),
                        new Caller(tenant, key, kind, plan));
            }
            permit = ((Acquisition.Granted) acquired).permit();
        }
        return take(policy, route, tenant, key, placement, permit, request, facts);
    }

    /**
     * The second half of {@link #decide}: the route's cost from every bucket of the request (holding
     * {@code permit}, if its route is capped), in one store operation, into a ticket, a delay or a refusal.
     * The one place the slot goes back when the request will not run: whatever ends the decision (a refusal,
     * a failure of the store), unless the outcome holds the slot (a ticket, a delay).
     */
    private <R> Outcome take(Policy policy, Route route, String tenant, String key, TenantPlans.Placement placement,
                             Permit permit, R request, RequestFacts<? super R> facts) {
        Outcome outcome = null;
        try {
            outcome = charge(policy, route, tenant, key, placement, permit, request, facts);
            return outcome;
        } finally {
            if (permit != null && !(outcome instanceof Ticket || outcome instanceof Outcome.Delayed)) permit.cancel();
        }
    }

    /** {@link #take}'s decision; the slot it may hold is {@link #take}'s to give back. */
    private <R> Outcome charge(Policy policy, Route route, String tenant, String key, TenantPlans.Placement placement,
                               Permit permit, R request, RequestFacts<? super R> facts) {
        BucketKind kind = placement.kind();
        String plan = placement.plan();
        boolean estimated = facts.estimated(route);
        // the plan's bucket of the user and the route's own ride in the same store operation as the tenant's:
        // a policy without them (no route limits, no per-user limits) does not even look
        Caller caller = policy.scopedBuckets ? new Caller(tenant, key, kind, plan) : null;
        ScopedCharge scoped;
        Throttle throttle;
        Charged charged;
        try {
            try {
                scoped = caller == null ? null : admission.scoped(policy, caller, route.name(), request, facts);
            } catch (TenantRejectedException unreadable) {
                // the user is named twice, or as a list: which one a gateway meant is not guessed, and the
                // request does not fall into the bucket of requests without a user either
                return new Outcome.Refused(400, INVALID_USER.reason(), unreadable.getMessage(), null, 0);
            }
            if (scoped == ScopedCharge.INVALID_USER) return INVALID_USER;
            // an estimated route is not delayed: its charge is settled once the body is read, after the decision
            throttle = estimated ? null : policy.throttle(route.name(), plan);
            // the ticket is the record of the charge: an admitted request allocates nothing beside it
            charged = admission.charge(policy, route, permit, scoped, kind, key, plan, route.cost(),
                    estimated ? null : scoped, throttle == null ? 0 : throttle.maxDelayNanos());
        } catch (StoreUnavailableException unavailable) {
            return Outcome.Refused.unavailable(unavailable, placed(caller, tenant, key, kind, plan));
        }
        if (charged instanceof Rejection rejected) {
            return refused(policy, route, placed(caller, tenant, key, kind, plan), permit, scoped, rejected, estimated);
        }
        Ticket ticket = (Ticket) charged;
        if (estimated && scoped != null) {
            // an estimated route's minimum is charged to its tenant first, then to its buckets beside it
            Outcome.Refused over = admission.chargeScoped(ticket, caller, scoped);
            if (over != null) return over;
        }
        // a throttled request short of units: reserved, it runs once they have arrived. A capped route's
        // slot stays held meanwhile: given back and taken again after the wait, it could refuse a request
        // that was made to wait for nothing
        if (ticket.delayNanos() > 0) {
            if (permit != null) permit.delayedBy(ticket.delayNanos());
            return new Outcome.Delayed(ticket, ticket.delayNanos(), throttle);
        }
        return ticket;
    }

    /**
     * Frees what a request that does not run holds ({@code ticket}'s slot, cancelled, and its units given
     * back), unless it was handed over to run ({@link Ticket#run()}) or released already: call it on every
     * exit between the decision and the chain (a {@code finally}). A ticket that
     * {@linkplain Ticket#keepCharge() keeps its charge} keeps its units; an unpaid one is charged the route's
     * minimum then, even into debt (holding a slot is never free).
     */
    public void release(Ticket ticket) {
        if (!ticket.close()) return;
        try {
            if (ticket.permit() != null) ticket.permit().cancel();
        } finally {
            admission.release(ticket);
        }
    }

    /**
     * Charges {@code ticket} {@code cost} units in place of what was reserved (the route's minimum, held while
     * the body arrived; nothing for an {@linkplain Ticket#unpaid() unpaid} ticket): the reservation goes back,
     * then {@code cost} is taken as a new admission, under the policy that admitted it. A refusal states the
     * wait for {@code cost}.
     *
     * @return null if the request may run at that cost; otherwise the refusal (nothing is charged then, and
     *         {@link #release} frees the slot)
     */
    public Outcome.Refused reprice(Ticket ticket, long cost) {
        return admission.reprice(ticket, cost);
    }

    /**
     * Settles a request's actual cost against what {@code ticket} was charged, by the policy that admitted it:
     * gives back what it did not use, or charges the excess (capped; see docs/design.md).
     *
     * @return the units settled: negative for a refund, positive for an extra charge
     */
    public long settle(Ticket ticket, long actualCost) {
        return admission.settle(ticket, actualCost);
    }

    /** {@code caller} if the decision made one already, else the caller of these values. */
    private static Caller placed(Caller caller, String tenant, String key, BucketKind kind, String plan) {
        return caller != null ? caller : new Caller(tenant, key, kind, plan);
    }

    /** A request its buckets refused: the refusal from the refusing operation's own probe, its slot freed. */
    private Outcome refused(Policy policy, Route route, Caller caller, Permit permit, ScopedCharge scoped,
                            Rejection rejected, boolean estimated) {
        if (estimated) {
            // the slot bounds the bodies read for refusals, as the minimum bounds the others
            if (permit != null) {
                // the scoped buckets are taken at the request's own cost once it is repriced
                return scoped == null ? new Ticket(policy, caller, route, permit)
                        : new Ticket.Scoped(policy, caller, route, permit, scoped);
            }
            rejected = admission.longerOf(policy, caller, rejected,
                    policy.readout().maxCost(caller.kind(), caller.key(), caller.plan()), scoped)
                    .publishing(rejected.remaining());
        }
        // the refusal already waits for the longest of all the request's buckets (one store operation); the
        // request does not run: take gives its slot back at once.
        // Retry-After and the published fields from the refusing operation's own probe: nothing read again
        return policy.readout().tooMany(rejected, caller, rejected.remaining(), scoped);
    }

    /**
     * The state of each bandwidth of a tenant's bucket as its next request would find it, in plan
     * order; empty if it is unknown and unknown tenants are refused.
     *
     * @throws IllegalArgumentException if {@code tenant} is not a valid tenant id
     */
    public List<BandwidthStatus> tenantLimits(Policy policy, String tenant) {
        if (!TenantId.isValid(tenant)) throw new IllegalArgumentException("not a valid tenant id: " + tenant);
        Optional<TenantPlans.Placement> placed = policy.placement().place(tenant);
        if (placed.isEmpty()) return List.of();
        return policy.readout().status(placed.get().kind(), tenant, placed.get().plan());
    }

    /**
     * The use of each calendar quota of a tenant in the current period, in plan order; empty if its plan
     * has none or no assignment or directory knows it.
     *
     * @throws IllegalArgumentException if {@code tenant} is not a valid tenant id
     */
    public List<QuotaUsage> tenantQuotas(Policy policy, String tenant) {
        if (!TenantId.isValid(tenant)) throw new IllegalArgumentException("not a valid tenant id: " + tenant);
        Optional<TenantPlans.Placement> placed = policy.placement().place(tenant);
        if (placed.isEmpty()) return List.of();
        return policy.readout().quotaUsage(placed.get().kind(), tenant, placed.get().plan());
    }

    /**
     * Where a valid tenant id is placed under {@code policy}, as its request would be (no bucket is touched);
     * empty if it is unknown and unknown tenants are refused.
     */
    public Optional<Placed> place(Policy policy, String tenant) {
        return policy.placement().place(tenant).map(p -> new Placed(p.kind(), p.plan()));
    }

    /**
     * Where a tenant is placed ({@link #place}).
     *
     * @param kind {@link BucketKind#TENANT} for a tenant an assignment or directory knows, else {@link BucketKind#GUEST}
     * @param plan its plan
     */
    public record Placed(BucketKind kind, String plan) {
    }

    /** True if {@code plan} publishes its limits under {@code policy} (per-plan {@code publish: true}). */
    public boolean publishes(Policy policy, String plan) {
        return policy.readout().publishes(plan);
    }

    /**
     * One page of the usage export under {@code policy}: the tenants whose quota counters the store holds, each
     * once over the pages, with their use of the current period and the closed periods kept.
     *
     * @param cursor null for the first page, else the previous page's {@code next}
     * @param size   about how many tenants a page holds at most
     * @throws IllegalArgumentException for a cursor no export gave, or {@code size < 1}
     */
    public io.quotagate.filter.status.UsagePage usage(Policy policy, String cursor, int size) {
        return policy.readout().usage(policy.placement(), cursor, size);
    }

    /**
     * A tenant's calendar quotas in their current periods as this instance last saw them (see
     * {@link QuotaPeriod}), in plan order; empty if its plan has none or it is not placed.
     *
     * @throws IllegalArgumentException if {@code tenant} is not a valid tenant id
     */
    public List<QuotaPeriod> tenantQuotaPeriods(Policy policy, String tenant) {
        if (!TenantId.isValid(tenant)) throw new IllegalArgumentException("not a valid tenant id: " + tenant);
        Optional<TenantPlans.Placement> placed = policy.placement().place(tenant);
        if (placed.isEmpty()) return List.of();
        return policy.readout().quotaPeriods(placed.get().kind(), tenant, placed.get().plan());
    }

    /** A valid tenant id refused before it was placed on a plan. */
    private static Caller unplaced(String tenant) {
        return new Caller(tenant, tenant, null, null);
    }

    /** True for the key of an anonymous client ({@link #anonymousKey}), false for a tenant id. */
    static boolean isAnonymousKey(String key) {
        return !key.isEmpty() && key.charAt(0) == '@';
    }

    /**
     * Anonymous clients are keyed by address with a leading {@code @}: a character no tenant id may
     * contain, so a client cannot name another's bucket through the tenant header.
     */
    static String anonymousKey(String remoteAddr) {
        StringBuilder b = new StringBuilder(remoteAddr.length() + 1).append('@');
        for (int i = 0; i < remoteAddr.length() && b.length() <= TenantId.MAX_LENGTH; i++) {
            char c = remoteAddr.charAt(i);
            if (c == '%') break; // IPv6 scope id
            if (c != '[' && c != ']') b.append(c);
        }
        return b.toString();
    }
}

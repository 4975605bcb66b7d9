package io.quotagate.filter.admission;

import io.quotagate.filter.route.Route;
import io.quotagate.filter.store.StoreUnavailableException;

import java.util.List;
import java.util.Objects;

/**
 * An admitted request's hold on its units and its concurrency slot, from the decision until the
 * request runs. Release is structural: {@link #close()} gives back the slot (cancelled, not counted
 * as a completed request) and every unit reserved, unless the request was handed over to run
 * ({@link #run()}), after which the slot is released when the request really ends and the units are
 * settled with {@link #settle}. Use it in try-with-resources, so every exit between the decision and
 * the chain frees what the decision took.
 *
 * <p>A ticket of an estimated route may hold the slot alone ({@link #unpaid()}): its buckets refused
 * the route's minimum cost, and the body is read only to state the wait for the request's own cost.
 *
 * <p>Confined to the thread that decides; {@link #settle} may be called later from any thread.
 */
public sealed class Ticket implements Outcome, AutoCloseable permits Ticket.Scoped {
    private static final System.Logger LOG = System.getLogger(Ticket.class.getName());

    /** Where reprices, refunds and settlements go, by {@link #policy}: the one that decided. */
    final Admission admission;
    final Policy policy;
    /**
     * Who is charged, kept only while the ticket has no decision to read it from (made unpaid, or a
     * reprice under way or refused): a paid ticket reads it off its decision, so the common case keeps
     * no {@link Caller} per request.
     */
    private Caller placed;
    private final Route route;
    private final Permit permit;
    private Decision.Admitted decision;
    private boolean running;
    private boolean keepCharge;

    /**
     * Everything the ticket needs from the decision on, handed over when it is made: it never asks the
     * {@link Gate} again.
     */
    Ticket(Admission admission, Policy policy, Route route, Permit permit, Decision.Admitted decision) {
        this.admission = admission;
        this.policy = policy;
        this.route = route;
        this.permit = permit;
        this.decision = Objects.requireNonNull(decision, "decision");
    }

    /** An {@link #unpaid()} ticket of {@code caller}: it holds the slot and nothing else. */
    Ticket(Admission admission, Policy policy, Caller caller, Route route, Permit permit) {
        this.admission = admission;
        this.policy = policy;
        this.placed = Objects.requireNonNull(caller, "caller");
        this.route = route;
        this.permit = permit;
    }

    /** Who the request is charged to. */
    public Caller caller() {
        Caller c = placed;
        return c != null ? c : Caller.of(decision);
    }

    /** The request's route. */
    public Route route() {
        return route;
    }

    /**
     * True if nothing is charged: the buckets refused the route's minimum cost and the ticket holds
     * only the concurrency slot, so the body can be read and {@link #reprice priced}; the request runs
     * only if its buckets can take that cost by then.
     */
    public boolean unpaid() {
        return decision == null;
    }

    /**
     * What was charged for the request (the units, and whether shadow mode let it through); null
     * while {@link #unpaid()}.
     */
    public Decision.Admitted decision() {
        return decision;
    }

    /** The largest cost this caller's buckets can ever admit at once. */
    public long maxCost() {
        Caller caller = caller();
        return admission.maxCost(policy, caller.kind(), caller.key(), caller.plan());
    }

    /**
     * Charges {@code cost} units in place of what was reserved (the route's minimum, held while the
     * body arrived; nothing for an {@link #unpaid()} ticket): the reservation goes back, then
     * {@code cost} is taken as a new admission. A refusal states the wait for {@code cost}.
     *
     * @return null if the request may run at that cost; otherwise the refusal (nothing is charged
     *         then, and {@link #close()} frees the slot)
     */
    public Outcome.Refused reprice(long cost) {
        Caller caller = caller();
        placed = caller; // read off the decision until now; from here on there may be none
        Decision.Admitted reserved = decision;
        decision = null; // from here on nothing is reserved, whatever the store does
        if (reserved != null) admission.reconcile(policy, reserved, 0);
        refundScoped(Long.MAX_VALUE);
        Decision next;
        try {
            next = admission.admit(policy, caller.kind(), caller.key(), caller.plan(), cost);
        } catch (StoreUnavailableException unavailable) {
            return Outcome.Refused.unavailable(unavailable, caller);
        }
        if (next instanceof Decision.Rejected rejected) return Outcome.Refused.tooMany(rejected, caller);
        Decision.Admitted admitted = (Decision.Admitted) next;
        Outcome.Refused scopedRefusal;
        try {
            scopedRefusal = takeScoped(admitted);
        } catch (StoreUnavailableException unavailable) {
            scopedRefusal = Outcome.Refused.unavailable(unavailable, caller);
        } catch (RuntimeException | Error failure) {
            admission.reconcile(policy, admitted, 0);
            throw failure;
        }
        if (scopedRefusal != null) {
            admission.reconcile(policy, admitted, 0); // the tenant pays nothing for a refused request
            return scopedRefusal;
        }
        decision = admitted;
        return null;
    }

    /**
     * Keeps what was charged when the ticket closes without running: the request made the server
     * read and parse its body before it was refused as bad input, or held its slot with a body that
     * never came, and that is paid for. An {@link #unpaid()} ticket is charged the route's minimum
     * cost then, even into debt: holding a slot is never free.
     */
    public void keepCharge() {
        keepCharge = true;
    }

    /**
     * The state of each bandwidth of the caller's bucket, for publishing, or null if its plan keeps
     * its limits hidden.
     */
    public List<LimitStatus> published() {
        Caller caller = caller();
        return admission.publishes(policy, caller.plan())
                ? admission.published(policy, caller.kind(), caller.key(), caller.plan()) : null;
    }

    /**
     * Hands the request over to run: from now on {@link #close()} frees nothing; the caller owns the
     * returned slot and releases it when the request really ends, and settles the units with
     * {@link #settle}.
     *
     * @return the concurrency slot to release at the request's end, or null if the route has none
     */
    public Permit run() {
        if (decision == null) throw new IllegalStateException("an unpaid ticket must be repriced before it runs");
        running = true;
        return permit;
    }

    /**
     * Settles the request's actual cost against what was charged (see
     * {@link Admission#reconcile}), by the policy that admitted it.
     *
     * @return the units settled: negative for a refund, positive for an extra charge
     */
    public long settle(long actualCost) {
        Decision.Admitted charged = decision;
        if (charged == null) return 0;
        // the scoped buckets get back what the request did not use of the cost they took at the
        // decision (a reprice leaves them); an excess is charged to the plan's buckets only
        if (actualCost < charged.charged()) refundScoped(charged.charged() - actualCost);
        return admission.reconcile(policy, charged, actualCost);
    }

    /** Frees the slot and gives back the units, unless the request runs (see the class comment). */
    @Override
    public void close() {
        if (running) return;
        running = true; // closed: a second close frees nothing
        try {
            if (permit != null) permit.cancel();
        } finally {
            Decision.Admitted charged = decision;
            if (charged == null && keepCharge) {
                Caller caller = placed; // no decision: kept since it was made unpaid or repriced
                try {
                    admission.forceCharge(policy, caller, route.cost());
                } catch (RuntimeException storeFailure) {
                    LOG.log(System.Logger.Level.WARNING, "slot held by tenant " + caller.key()
                            + " not charged: " + storeFailure);
                }
            }
            if (charged != null && !keepCharge) {
                try {
                    admission.reconcile(policy, charged, 0);
                    refundScoped(Long.MAX_VALUE);
                } catch (RuntimeException storeFailure) {
                    // the request is refused either way; the units come back as the bucket refills
                    LOG.log(System.Logger.Level.WARNING, "units reserved for tenant " + charged.tenant()
                            + " not given back: " + storeFailure);
                }
            }
        }
    }

    /** Gives up to {@code units} back to the buckets beside the tenant's; a plain ticket has none. */
    void refundScoped(long units) {
    }

    /** Takes what {@code admitted} charged from the buckets beside the tenant's: null if taken (or none). */
    Outcome.Refused takeScoped(Decision.Admitted admitted) {
        return null;
    }

    /**
     * A ticket that also holds units in buckets beside the tenant's (per-user, the route's own). A
     * subclass rather than a field, so a ticket without them stays as small as before (the
     * common case allocates nothing more per request).
     */
    static final class Scoped extends Ticket {
        private final ScopedCharge scoped;

        Scoped(Admission admission, Policy policy, Route route, Permit permit, Decision.Admitted decision,
               ScopedCharge scoped) {
            super(admission, policy, route, permit, decision);
            this.scoped = scoped;
        }

        /** An unpaid ticket ({@link Ticket#Ticket(Admission, Policy, Caller, Route, Permit)}). */
        Scoped(Admission admission, Policy policy, Caller caller, Route route, Permit permit, ScopedCharge scoped) {
            super(admission, policy, caller, route, permit);
            this.scoped = scoped;
        }

        @Override
        void refundScoped(long units) {
            scoped.refund(units);
        }

        @Override
        Outcome.Refused takeScoped(Decision.Admitted admitted) {
            if (admitted.charged() == 0) return null;
            Caller caller = caller();
            Decision.Rejected over = admission.takeScoped(policy, caller, scoped, admitted.charged());
            return over == null ? null : Outcome.Refused.tooMany(over, caller);
        }
    }
}

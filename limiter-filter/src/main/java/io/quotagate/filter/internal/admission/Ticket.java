package io.quotagate.filter.internal.admission;

import io.quotagate.filter.internal.route.Route;
import io.quotagate.filter.status.BandwidthStatus;
import io.quotagate.filter.store.BucketKind;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.Objects;

/**
 * An admitted request's receipt: the record of what was charged to whom and the concurrency slot it
 * holds, from the decision until the request really ends (an admitted request makes this one object,
 * not a decision beside it). It acts on nothing: the {@link Gate} does, taking the receipt.
 *
 * <p>{@link Gate#release} gives back the slot (cancelled, not counted as a completed request) and every
 * unit reserved, unless the request was handed over to run ({@link #run()}), after which {@link #end()}
 * marks its end once, whichever thread sees it first: its caller then releases the {@link #permit()} and
 * settles the units with {@link Gate#settle}. Release it in a {@code finally}, so every exit between the
 * decision and the chain frees what the decision took.
 *
 * <p>A ticket of an estimated route may hold the slot alone ({@link #unpaid()}): its buckets refused
 * the route's minimum cost, and the body is read only to state the wait for the request's own cost.
 *
 * <p>Confined to the thread that decides until it runs; {@link #end()} and {@link Gate#settle} may be called
 * later from any thread. A delayed ticket ({@link Outcome.Delayed}) is handed from the deciding thread to
 * the one that resumes or drops it through the scheduler (a happens-before edge), and only one of them
 * uses it.
 */
public sealed class Ticket implements Outcome, Charged permits Ticket.Scoped {
    private static final BucketKind[] KINDS = BucketKind.values();

    /** {@link #flags}: the units are taken (a paid ticket; shadow mode's 0 units included). */
    private static final byte PAID = 1;
    /** {@link #flags}: the same units were also taken from the global quota. */
    private static final byte GLOBAL = 2;
    /** {@link #flags}: the same units were also taken from the guest pool. */
    private static final byte GUESTS = 4;
    /** {@link #flags}: {@link #keepCharge()}. */
    private static final byte KEEP_CHARGE = 8;

    /** {@link #state}: decided; {@link Gate#release} frees what it holds. */
    private static final byte DECIDED = 0;
    /** {@link #state}: closed without running; nothing is freed again. */
    private static final byte CLOSED = 1;
    /** {@link #state}: handed over to run; nothing listens for its end yet. */
    private static final byte RUNNING = 2;
    /** {@link #state}: running, and a listener ends it ({@link #listening()}). */
    private static final byte LISTENING = 3;
    /** {@link #state}: ended; nothing is done again. */
    private static final byte ENDED = 4;
    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(Ticket.class, "state", byte.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The policy that decided: reprices, refunds and settlements are made by its limits. */
    final Policy policy;
    private final Route route;
    private final Permit permit;
    // who is charged, and what: kept as fields so an admitted request
    // allocates this one object
    private String key;
    private String plan;
    /** The rare parts of a charge (shadow mode, published limits), null for the common request. */
    private Notes notes;
    private long charged;
    private long quotaNanos;
    /** How long the request waits before it runs (its units reserved into debt, {@code throttle:}); 0 for none. */
    private final long delayNanos;
    private byte kind;
    private byte flags;
    /** {@link #DECIDED} ... {@link #ENDED}; read and written through {@link #STATE}. */
    private byte state;

    /**
     * The ticket of an admitted request, made from the reply of the store operation that decided it (see
     * {@link Admission#charge}): {@code charged} units from the bucket of {@code key} in the {@code kind} table
     * (sized by {@code plan}), and the same from the global quota and the guest pool if flagged; counted in the
     * calendar quotas at {@code quotaNanos} (0: not counted); in shadow mode 0 units and the {@code escaped}
     * refusal; the tenant's bucket's {@code remaining} units for a plan that publishes (else null); the
     * {@code delayNanos} it waits before it runs.
     */
    private Ticket(Policy policy, Route route, Permit permit, BucketKind kind, String key, String plan, long charged,
                   byte flags, long quotaNanos, Rejection escaped, long[] remaining, long delayNanos) {
        this.policy = policy;
        this.route = route;
        this.permit = permit;
        this.delayNanos = delayNanos;
        placed(kind, key, plan);
        this.charged = charged;
        this.quotaNanos = quotaNanos;
        this.flags = flags;
        if (escaped != null || remaining != null) {
            notes = new Notes();
            notes.escaped = escaped;
            notes.remaining = remaining;
        }
    }

    /**
     * An admitted request's ticket (see the constructor): a {@link Scoped} one if {@code held} (the buckets beside
     * the tenant's it holds, or will be charged in once its tenant's are) is not null.
     */
    static Ticket admitted(Policy policy, Route route, Permit permit, ScopedCharge held, BucketKind kind, String key,
                           String plan, long charged, boolean globalCharged, boolean guestsCharged, long quotaNanos,
                           Rejection escaped, long[] remaining, long delayNanos) {
        byte flags = (byte) (PAID | (globalCharged ? GLOBAL : 0) | (guestsCharged ? GUESTS : 0));
        return held == null
                ? new Ticket(policy, route, permit, kind, key, plan, charged, flags, quotaNanos, escaped, remaining,
                delayNanos)
                : new Scoped(policy, route, permit, kind, key, plan, charged, flags, quotaNanos, escaped, remaining,
                delayNanos, held);
    }

    /** An {@link #unpaid()} ticket of {@code caller}: it holds the slot and nothing else. */
    Ticket(Policy policy, Caller caller, Route route, Permit permit) {
        this.policy = policy;
        this.route = route;
        this.permit = permit;
        this.delayNanos = 0;
        placed(caller.kind(), caller.key(), caller.plan());
    }

    /** Who is charged, nothing yet. */
    private void placed(BucketKind kind, String key, String plan) {
        this.kind = (byte) kind.ordinal();
        this.key = Objects.requireNonNull(key, "key");
        this.plan = Objects.requireNonNull(plan, "plan");
    }

    /**
     * {@link Admission#reprice}: the one place a ticket's charge is replaced, by the charge of {@code repriced}
     * (the decision at the request's own cost); what the caller asked of this ticket ({@link #keepCharge()}) stays.
     */
    void recharge(Ticket repriced) {
        placed(repriced.kind(), repriced.key, repriced.plan);
        this.charged = repriced.charged;
        this.quotaNanos = repriced.quotaNanos;
        this.notes = repriced.notes;
        this.flags = (byte) ((flags & KEEP_CHARGE) | repriced.flags);
    }

    /**
     * How long the request must wait before it runs, its units already reserved (a plan's or route's
     * {@code throttle:}); 0 if it may run now. Running it sooner would let it through ahead of its units.
     */
    public long delayNanos() {
        return delayNanos;
    }

    /** Who the request is charged to. */
    public Caller caller() {
        return new Caller(anonymous() ? null : key, key, kind(), plan);
    }

    /** The tenant id charged, or null for an anonymous client. */
    public String tenant() {
        return anonymous() ? null : key;
    }

    /** The tenant id, or an anonymous client's key ({@code @address}). */
    public String key() {
        return key;
    }

    /** The plan that sized the charged bucket. */
    public String plan() {
        return plan;
    }

    /** True if the caller is a client without a tenant, keyed by its address. */
    public boolean anonymous() {
        return Gate.isAnonymousKey(key);
    }

    /** True if the caller is an assigned tenant (not a guest). */
    public boolean known() {
        return kind() == BucketKind.TENANT;
    }

    /** The bucket table of the caller: {@code TENANT} or {@code GUEST}. */
    BucketKind kind() {
        return KINDS[kind];
    }

    /** The request's route. */
    public Route route() {
        return route;
    }

    /** The concurrency slot to release when the request really ends, or null if the route has none. */
    public Permit permit() {
        return permit;
    }

    /**
     * True if nothing is charged: the buckets refused the route's minimum cost and the ticket holds
     * only the concurrency slot, so the body can be read and {@link Gate#reprice priced}; the request runs
     * only if its buckets can take that cost by then.
     */
    public boolean unpaid() {
        return (flags & PAID) == 0;
    }

    /** Units taken for the request (0 in shadow mode, or while {@link #unpaid()}). */
    public long charged() {
        return unpaid() ? 0 : charged;
    }

    /**
     * In shadow mode, the 429 the request escaped (nothing was charged: the limits would have refused it, shadow
     * mode let it through); null when the limits admitted it.
     */
    public Outcome.Refused shadowRejection() {
        Rejection r = rejection();
        return r == null ? null : Outcome.Refused.tooMany(r, caller());
    }

    /** The refusal shadow mode let through, or null. */
    Rejection rejection() {
        return unpaid() || notes == null ? null : notes.escaped;
    }

    /**
     * For a plan that publishes its limits: each bandwidth of the tenant's bucket as the request's own latest
     * store operation left it ({@link io.quotagate.filter.store.Probe#remaining()}), plus only its own
     * give-backs since ({@link #refunded}); null otherwise. Its response's fields come from this, never from
     * the bucket read again.
     */
    long[] remaining() {
        return notes == null ? null : notes.remaining;
    }

    /**
     * What only some tickets need, apart so that the common one stays one small object: the refusal shadow
     * mode let through, and the remainders of a plan that publishes its limits.
     */
    private static final class Notes {
        Rejection escaped;
        long[] remaining;
    }

    /** True if the units were also taken from the global quota. */
    boolean globalCharged() {
        return (flags & GLOBAL) != 0;
    }

    /** True if the units were also taken from the guest pool. */
    boolean guestsCharged() {
        return (flags & GUESTS) != 0;
    }

    /** The wall time (epoch nanoseconds) at which the units were counted in the calendar quotas; 0 if not. */
    long quotaNanos() {
        return quotaNanos;
    }

    /**
     * Notes {@code units} given back to the tenant's bucket at {@code pl}'s limits (each bandwidth capped at its
     * capacity) and, if they were counted there, to its calendar quotas (each capped at its limit).
     */
    void refunded(long units, Limits.PlanLimits pl) {
        long[] before = remaining();
        int bandwidths = pl.limits().bandwidths().size();
        int quotas = pl.quotas() == null ? 0 : pl.quotas().size();
        if (before == null || (before.length != bandwidths && before.length != bandwidths + quotas)) return;
        long[] after = new long[before.length]; // the probe's array may be the store's note of the bucket: not changed
        for (int i = 0; i < bandwidths; i++) {
            after[i] = Math.min(pl.limits().bandwidths().get(i).capacity(), before[i] + units);
        }
        for (int i = bandwidths; i < after.length; i++) {
            long limit = pl.quotas().quotas()[i - bandwidths].limit();
            after[i] = quotaNanos == 0 ? before[i] : Math.min(limit, before[i] + units);
        }
        notes.remaining = after;
    }

    /** The largest cost this caller's buckets can ever admit at once. */
    public long maxCost() {
        return policy.readout().maxCost(kind(), key, plan);
    }

    /**
     * Keeps what was charged when the ticket closes without running: the request made the server
     * read and parse its body before it was refused as bad input, or held its slot with a body that
     * never came, and that is paid for. An {@link #unpaid()} ticket is charged the route's minimum
     * cost then, even into debt: holding a slot is never free.
     */
    public void keepCharge() {
        flags |= KEEP_CHARGE;
    }

    /**
     * The state of each bandwidth of the caller's bucket, then of the request's buckets beside it (per user,
     * the route's own: those its decision held), for publishing; null if its plan keeps its limits hidden.
     */
    public List<BandwidthStatus> published() {
        return policy.readout().published(kind(), key, plan, remaining(), scopedCharge());
    }

    /**
     * Hands the request over to run: from now on {@link Gate#release} frees nothing; {@link #end()} marks the
     * request's end, once, then the caller releases the {@link #permit()} and settles the units with
     * {@link Gate#settle}.
     */
    public void run() {
        if (unpaid()) throw new IllegalStateException("an unpaid ticket must be repriced before it runs");
        STATE.set(this, RUNNING); // still confined to the deciding thread: other threads see it once published
    }

    /** True while the request runs and nothing listens for its end (not yet {@link #listening()}, not ended). */
    public boolean runningUnheard() {
        return (byte) STATE.getAcquire(this) == RUNNING;
    }

    /** A listener now ends the request (its async context's {@code onComplete}), unless it has ended already. */
    public void listening() {
        STATE.compareAndSet(this, RUNNING, LISTENING);
    }

    /**
     * Marks the end of a running request: true for the one call that ends it, from whichever thread
     * comes first (the dispatch returning, an async listener); false for every later one.
     */
    public boolean end() {
        byte was;
        do {
            was = (byte) STATE.getAcquire(this);
            if (was != RUNNING && was != LISTENING) return false;
        } while (!STATE.compareAndSet(this, was, ENDED)); // RUNNING may become LISTENING meanwhile
        return true;
    }

    /**
     * True once the request has ended ({@link #end()}): whichever path ended it releases the slot and settles
     * the cost, reading the reported cost right after, so a cost reported from now on may come too late.
     */
    public boolean ended() {
        return (byte) STATE.getAcquire(this) == ENDED;
    }

    /**
     * As {@link #end()}, for the thread that ran a synchronous request nothing listens to: no other thread
     * can end it, so it ends with a release store rather than a compare-and-set (the common request's end).
     */
    public boolean endAlone() {
        if ((byte) STATE.getAcquire(this) != RUNNING) return end();
        STATE.setRelease(this, ENDED);
        return true;
    }

    /**
     * Marks a ticket whose request does not run as closed ({@link Gate#release}): true for the one call that
     * closes it, while it is decided; false once it runs, or for a second call (a second release frees nothing).
     */
    boolean close() {
        if ((byte) STATE.get(this) != DECIDED) return false;
        STATE.set(this, CLOSED);
        return true;
    }

    /** True if {@link #keepCharge()} was called. */
    boolean keepsCharge() {
        return (flags & KEEP_CHARGE) != 0;
    }

    /** From here on nothing is reserved, whatever the store does next; returns the units that were. */
    long unpay() {
        long was = charged();
        flags &= ~PAID;
        return was;
    }

    /** The buckets beside the tenant's (per user, the route's own); null for a plain ticket. */
    ScopedCharge scopedCharge() {
        return null;
    }

    /** Gives up to {@code units} back to the buckets beside the tenant's; a plain ticket has none. */
    void refundScoped(long units) {
    }

    /**
     * A ticket that also holds units in buckets beside the tenant's (per-user, the route's own). A
     * subclass rather than a field, so a ticket without them stays as small as before (the
     * common case allocates nothing more per request).
     */
    static final class Scoped extends Ticket {
        private final ScopedCharge scoped;

        Scoped(Policy policy, Route route, Permit permit, BucketKind kind, String key, String plan, long charged,
               byte flags, long quotaNanos, Rejection escaped, long[] remaining, long delayNanos, ScopedCharge scoped) {
            super(policy, route, permit, kind, key, plan, charged, flags, quotaNanos, escaped, remaining, delayNanos);
            this.scoped = scoped;
        }

        /** An unpaid ticket ({@link Ticket#Ticket(Policy, Caller, Route, Permit)}). */
        Scoped(Policy policy, Caller caller, Route route, Permit permit, ScopedCharge scoped) {
            super(policy, caller, route, permit);
            this.scoped = scoped;
        }

        @Override
        ScopedCharge scopedCharge() {
            return scoped;
        }

        @Override
        void refundScoped(long units) {
            scoped.refund(units);
        }

    }
}

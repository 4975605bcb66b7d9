package io.quotagate.filter.store;

import io.quotagate.plans.InvalidPlansException;
import io.quotagate.plans.StoreSpec;

import java.util.Optional;

/**
 * Where buckets live: in this JVM ({@link #local}) or shared by several instances. The admission core
 * sees only this seam, so every store gives the same behaviour (the store contract test checks it).
 */
public interface BucketStore {

    /**
     * The bucket of this kind and id at {@code limits}: created full on first use; if it exists at
     * other limits, first moved to these keeping its tokens ({@link BucketLimits}).
     * Implementations tell "already at these limits" by the identity of {@code limits} (see
     * {@link BucketLimits}), so a lookup with unchanged limits costs no more than the lookup.
     * Implementations must not hand out a fresh bucket for a {@link BucketKind#TENANT} or
     * {@link BucketKind#GLOBAL} id whose old one still had less than its full capacity (that would
     * reset a tenant's limit). {@link BucketKind#GUEST} buckets are bounded separately and may be
     * evicted under a flood of made-up ids; that never touches the other kinds.
     */
    QuotaBucket bucket(BucketKind kind, String id, BucketLimits limits);

    /**
     * Takes {@code units} from the bucket of this kind and id at {@code limits}, as
     * {@code bucket(kind, id, limits).take(units)}: the request path's common case (one bucket, no wait
     * accepted) in one call, so that a store may order its work as suits it. The local store reads its
     * clock before its lookup. The default is that very expression.
     *
     * @return as {@link QuotaBucket#take}: 0 if taken, else the wait for the units
     */
    default long take(BucketKind kind, String id, BucketLimits limits, long units) {
        return bucket(kind, id, limits).take(units);
    }

    /**
     * The bucket as it is now, to settle a request that has ended (a refund, an excess charge): the one
     * {@link #bucket} handed out last for this id, at whatever limits it is, never moved; {@code limits}
     * (those that admitted the request) only create it if there is none. A request admitted before a
     * reconfiguration must not move its tenant's bucket back to the old limits, which would cap its
     * tokens at the old capacity. The default is {@link #bucket}.
     */
    default QuotaBucket bucketToSettle(BucketKind kind, String id, BucketLimits limits) {
        return bucket(kind, id, limits);
    }

    /**
     * Takes {@code units} from each of {@code buckets[0..count)}, all or none: the charge of one request
     * in its tenant's bucket and the shared ones (guest pool, global quota) or a route's own. The
     * {@link Probe} says whether they took them and, from the same operation, each bucket's wait for the
     * units when refused (0 for one that could take them, see {@link QuotaBucket#take}) and, if asked
     * for, each one's units left: so no refusal (and no published field) asks the store again.
     *
     * <p>The default takes them one after the other and gives back what was taken when one refuses, then
     * reads what each bucket holds (under its own lock, no lookup); a store that can decide them together
     * overrides it (Redis: one script call covering every key, one round trip, whose reply carries the
     * tokens; on a cluster, one call per key, all sent at once). On a failure of the store, every unit
     * already taken is given back before the exception is thrown.
     *
     * @param buckets   buckets of this store
     * @param remaining true to have {@link Probe#remaining()}: only for a request whose limits are published
     */
    default Probe takeAll(QuotaBucket[] buckets, int count, long units, boolean remaining) {
        long[] waits = new long[count];
        int taken = 0;
        try {
            for (; taken < count; taken++) {
                long wait = buckets[taken].take(units);
                if (wait == 0) continue;
                waits[taken] = wait;
                // the rest only read, for the longest wait
                for (int i = taken + 1; i < count; i++) waits[i] = buckets[i].nanosToWait(units);
                break;
            }
        } catch (RuntimeException | Error storeFailure) {
            giveBack(buckets, taken, units, storeFailure);
            throw storeFailure;
        }
        boolean all = taken == count;
        if (!all) giveBack(buckets, taken, units, null);
        return new Probe(all, waits, remaining ? remaining(buckets, count) : null);
    }

    /**
     * As {@link #takeAll}, accepting a wait of up to {@code maxWaitNanos}: each bucket takes the units now
     * or into debt if they arrive within it ({@link QuotaBucket#reserve}), all or none. When taken,
     * {@link Probe#waits()} holds each bucket's wait (0 for one that had the units), the request's delay being
     * the longest; when refused, as {@link #takeAll}. With {@code maxWaitNanos} 0 it is {@link #takeAll}.
     *
     * <p>The default reserves bucket by bucket and gives back what was taken when one refuses; a store that
     * can decide them together overrides it.
     */
    default Probe reserveAll(QuotaBucket[] buckets, int count, long units, long maxWaitNanos, boolean remaining) {
        if (maxWaitNanos <= 0) return takeAll(buckets, count, units, remaining);
        long[] waits = new long[count];
        int taken = 0;
        try {
            for (; taken < count; taken++) {
                long wait = buckets[taken].reserve(units, maxWaitNanos);
                waits[taken] = wait;
                if (wait <= maxWaitNanos) continue;
                for (int i = 0; i < taken; i++) waits[i] = 0; // given back below: they could take the units
                for (int i = taken + 1; i < count; i++) waits[i] = buckets[i].nanosToWait(units);
                break;
            }
        } catch (RuntimeException | Error storeFailure) {
            giveBack(buckets, taken, units, storeFailure);
            throw storeFailure;
        }
        boolean all = taken == count;
        if (!all) giveBack(buckets, taken, units, null);
        return new Probe(all, waits, remaining ? remaining(buckets, count) : null);
    }

    /**
     * Each bucket's wait for {@code units} (as {@link QuotaBucket#nanosToWait}) and, if asked for, what each
     * holds: {@link Probe#taken()} says whether every bucket could take them now. Takes nothing, creates
     * nothing. A store that can read them together overrides it (Redis: one script call).
     */
    default Probe waits(QuotaBucket[] buckets, int count, long units, boolean remaining) {
        long[] waits = new long[count];
        boolean all = true;
        for (int i = 0; i < count; i++) {
            waits[i] = buckets[i].nanosToWait(units);
            all &= waits[i] == 0;
        }
        return new Probe(all, waits, remaining ? remaining(buckets, count) : null);
    }

    /**
     * What each of {@code buckets[0..count)} holds per bandwidth as the operation just done left it, from the
     * buckets held (no lookup; a bucket kept elsewhere answers from its reply: no round trip more).
     */
    private static long[][] remaining(QuotaBucket[] buckets, int count) {
        long[][] remaining = new long[count][];
        for (int i = 0; i < count; i++) remaining[i] = buckets[i].notedPerBandwidth();
        return remaining;
    }

    /** Gives {@code units} back to {@code buckets[0..taken)}; a failure there is added to {@code failure}. */
    private static void giveBack(QuotaBucket[] buckets, int taken, long units, Throwable failure) {
        for (int i = 0; i < taken; i++) {
            try {
                buckets[i].refund(units);
            } catch (RuntimeException alsoFailed) {
                if (failure == null) throw alsoFailed;
                failure.addSuppressed(alsoFailed);
            }
        }
    }

    /**
     * Tells the store that a bucket's state changed in a way a take cannot cause (it went into debt),
     * so a store that drops idle buckets re-times this one.
     */
    default void changed(BucketKind kind, String id) {
        // a shared store keeps no idle-time bookkeeping of its own
    }

    /**
     * Where this store keeps the counters of calendar quotas; empty if it keeps none (plans with
     * {@code quotas:} then cannot be put in force on it). The local store keeps them in a table of its
     * own, apart from the buckets; a shared store keeps them where every instance counts.
     */
    default Optional<QuotaCounters> quotaCounters() {
        return Optional.empty();
    }

    /**
     * How many instances share the quotas of this store: 1 for a local store; for a shared store, the
     * instances seen alive lately (the last known number while the backend is unreachable).
     */
    default int instanceCount() {
        return 1;
    }

    /**
     * Where the instances sharing this store keep the limits they all enforce (one versioned record and a
     * change channel); empty for a store only this instance uses.
     */
    default Optional<LimitsChannel> limitsChannel() {
        return Optional.empty();
    }

    /**
     * The wall clock calendar quotas are told on with this store (which day, week and month it is, a
     * period's reset and its counter's expiry), given this instance's own {@code wall}: that very clock for a
     * store only this instance uses; for a shared store, the clock its instances agree on, so that instances
     * whose clocks differ count in one period (Redis: {@code wall} corrected by this instance's offset to
     * Redis's clock). The default is {@code wall}.
     */
    default java.time.Clock clock(java.time.Clock wall) {
        return wall;
    }

    /** The health of a store shared by several instances (for metrics); empty for a local store. */
    default Optional<StoreHealth> health() {
        return Optional.empty();
    }

    /**
     * This instance's share of a limit that every instance enforces on its own (such as a concurrency
     * cap, or a quota while the shared store is unreachable): {@code limit / instanceCount} rounded
     * down, but at least 1 so that a small limit never blocks an instance completely. The shares add
     * up to at most {@code limit}, except when {@code limit < instanceCount}.
     */
    static long perInstanceShare(long limit, int instanceCount) {
        if (limit <= 0) throw new IllegalArgumentException("limit must be > 0, was " + limit);
        if (instanceCount <= 0) throw new IllegalArgumentException("instanceCount must be > 0, was " + instanceCount);
        return Math.max(1, limit / instanceCount);
    }

    /**
     * An in-memory store: two Caffeine caches, one for assigned tenants and one for guests (unknown
     * tenants and anonymous clients), each holding at most {@code maxTracked} buckets, where a bucket
     * idle long enough to have refilled completely is dropped (a new one would be identical, so expiry
     * loses nothing).
     *
     * @param maxTracked the most buckets kept at once in each of the two tables
     * @param clock      time source of the buckets and of their expiry
     */
    static BucketStore local(int maxTracked, QuotaClock clock) {
        return new LocalBucketStore(maxTracked, clock);
    }

    /**
     * Restores the calendar-quota counters of a {@link #local} store from {@code file} (if it exists) and
     * writes them back to it every {@code interval}; running the returned stop ends the periodic writes and
     * writes the last counts. The filter's own ({@code QuotaFilter.Builder.quotaSnapshot}): a store
     * implementation neither needs nor overrides it.
     *
     * @param wall the wall clock of the quotas (what has expired)
     * @throws IllegalArgumentException naming the setting, the file and the reason if the store is not
     *                                  local, the interval is not positive, the file's directory does not
     *                                  exist or cannot be written, or the file is there but cannot be read
     *                                  or is not a snapshot
     */
    static Runnable quotaSnapshot(BucketStore store, java.nio.file.Path file, java.time.Duration interval,
                                       java.time.Clock wall) {
        QuotaSnapshot snapshot = QuotaSnapshot.start(store, file, interval, wall);
        return snapshot::close;
    }

    /**
     * The store {@code spec} describes: a {@link #local} one, or the one opened by the
     * {@link BucketStoreProvider} of its type found on limiter-filter's class path, its options
     * {@link #check checked} first.
     *
     * @param clock time of the store's local buckets
     * @throws InvalidPlansException naming file, line and field of an option the type refuses
     * @throws IllegalStateException naming the missing artifact if no provider of that type is there
     */
    static BucketStore open(StoreSpec spec, int maxTracked, QuotaClock clock) {
        BucketStoreProvider provider = StoreProviders.checked(spec);
        return provider == null ? local(maxTracked, clock) : provider.open(spec, maxTracked, clock);
    }

    /**
     * Refuses a {@code store:} its type cannot open, connecting nowhere: an option the type does not take
     * (a local store takes none), a bad value ({@link BucketStoreProvider#check}), or a type whose module is
     * not on the class path. A filter checks its plans' store at start and on every reload.
     *
     * @throws InvalidPlansException naming file, line and field
     * @throws IllegalStateException naming the missing artifact if no provider of that type is there
     */
    static void check(StoreSpec spec) {
        StoreProviders.checked(spec);
    }
}

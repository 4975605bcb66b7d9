package io.quotagate.filter.internal.admission;

import io.quotagate.filter.internal.admission.Limits.PlanLimits;
import io.quotagate.filter.status.BandwidthStatus;
import io.quotagate.filter.status.QuotaUsage;
import io.quotagate.filter.status.RetryAfter;
import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.store.BucketLimits;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.store.Probe;
import io.quotagate.filter.store.QuotaBucket;
import io.quotagate.filter.store.QuotaCounters;
import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.CalendarQuota;

import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * The limits of one {@link Policy} as callers and responses see them, read without charging anything: the
 * largest cost a caller can be admitted with, whether its plan publishes its limits, the state of its buckets
 * and calendar quotas, and the global quota's. One per policy ({@link Policy#readout()}).
 */
final class LimitsReadout {
    private final Limits limits;
    private final BucketStore store;
    /** Where calendar quotas count; null if the store keeps no counters (then no plan has quotas). */
    private final QuotaCounters counters;
    /** The calendar of the quotas: which day, week and month it is. */
    private final Clock wall;

    LimitsReadout(Limits limits, BucketStore store, QuotaCounters counters, Clock wall) {
        this.limits = Objects.requireNonNull(limits, "limits");
        this.store = Objects.requireNonNull(store, "store");
        this.counters = counters;
        this.wall = Objects.requireNonNull(wall, "wall");
    }

    /**
     * The largest cost a request of this plan can ever be admitted with: the smallest capacity of
     * the plan's and the global quota's bandwidths.
     *
     * @throws IllegalArgumentException for an unknown plan
     */
    long maxCost(String plan) {
        return limits.planOf(plan).maxCost();
    }

    /**
     * As {@link #maxCost(String)}, for one tenant's bucket: its {@code tenants.overrides} limits, if
     * it has them, bound the cost instead of its plan's.
     */
    long maxCost(BucketKind kind, String key, String plan) {
        long max = limits.limitsOf(kind, key, plan).maxCost();
        return kind == BucketKind.GUEST ? Math.min(max, limits.guestsMaxCost()) : max;
    }

    /** True if this plan publishes its limits (per-plan {@code publish: true}). */
    boolean publishes(String plan) {
        PlanLimits pl = limits.plans().get(plan);
        return pl != null && pl.publish();
    }

    /**
     * The state of each bandwidth of a tenant's bucket, in plan order, for publishing. The global
     * quota is never included: it stays hidden.
     */
    List<BandwidthStatus> status(String tenant, String plan) {
        return status(BucketKind.TENANT, tenant, plan);
    }

    /** As {@link #status(String, String)}, for the bucket in the {@code kind} table. */
    List<BandwidthStatus> status(BucketKind kind, String tenant, String plan) {
        PlanLimits pl = limits.limitsOf(kind, tenant, plan);
        List<BandwidthStatus> out = new ArrayList<>(pl.limits().bandwidths().size());
        // looked up as a request would: the store moves the bucket to the plan's current limits if they changed
        statuses(store.bucket(kind, tenant, pl.limits()).availablePerBandwidth(), pl.limits(), null, null, out);
        return out;
    }

    /**
     * The published state of a request's buckets, for the fields of its response, from what its own
     * decision's store operation said ({@link Probe#remaining()}: on Redis, no round trip more; no bucket is
     * looked up again): its tenant's bucket ({@code remaining}), its calendar quotas, then its buckets beside
     * it ({@code scoped}, null for none); null if its plan keeps its limits hidden.
     */
    List<BandwidthStatus> published(BucketKind kind, String tenant, String plan, long[] remaining,
                                    ScopedCharge scoped) {
        if (plan == null || !publishes(plan)) return null;
        PlanLimits pl = limits.limitsOf(kind, tenant, plan);
        List<BandwidthStatus> all = new ArrayList<>(pl.limits().bandwidths().size()
                + (pl.quotas() == null ? 0 : pl.quotas().size()) + (scoped == null ? 0 : 2 * scoped.size()));
        // a response's fields name the tenant as pk; an anonymous client's key is its address, never sent back
        long[] tokens = remaining == null || remaining.length == pl.limits().bandwidths().size() ? remaining
                : Arrays.copyOf(remaining, pl.limits().bandwidths().size()); // its quotas' figures follow
        statuses(tokens, pl.limits(), null, Gate.isAnonymousKey(tenant) ? null : tenant, all);
        CalendarQuota[] quotas = kind == BucketKind.TENANT && pl.quotas() != null ? pl.quotas().quotas() : null;
        int bandwidths = pl.limits().bandwidths().size();
        // what is left of each quota as the request's own store operation replied, after the bucket's
        // bandwidths; a reply without them (a bucket at other limits during a change) publishes none, as it
        // publishes no bandwidth then
        if (quotas != null && remaining != null && remaining.length == bandwidths + quotas.length) {
            String pk = tenant; // an assigned tenant's: never an anonymous client's address
            // each calendar quota is a policy too: q = its limit, w = its period, r = what is left, and a unit
            // spent now comes back only at the reset, which is t
            long now = QuotaWindows.nanos(wall.instant());
            for (int i = 0; i < quotas.length; i++) {
                QuotaWindows.Period p = pl.quotas().period(i, now);
                long used = quotas[i].limit() - remaining[bandwidths + i];
                long toReset = p.endNanos() - now;
                all.add(new BandwidthStatus(quotas[i].name(), quotas[i].limit(),
                        RetryAfter.seconds(p.endNanos() - p.startNanos()), Math.max(0, quotas[i].limit() - used),
                        used <= 0 ? 0 : toReset, toReset, pk, null));
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
    Outcome.Refused tooMany(Rejection rejected, Caller caller, long[] remaining, ScopedCharge scoped) {
        List<BandwidthStatus> published = published(caller.kind(), caller.key(), caller.plan(), remaining, scoped);
        return published == null ? Outcome.Refused.tooMany(rejected, caller)
                : Outcome.Refused.tooMany(rejected, caller, published);
    }

    /**
     * The remainder of the bucket at {@code index} of a probe, if it has the shape of {@code limits}; else null
     * (a shared bucket another instance keeps at other limits during a change: nothing is published for it).
     * With {@code quotas} (null for none), what the probe says is left of each of them ({@code quotasAt} on)
     * follows the bucket's bandwidths in the same array: the published figures of the quotas come from the
     * store's reply too.
     */
    static long[] remainder(Probe probe, int index, BucketLimits limits, QuotaWindows quotas, int quotasAt) {
        long[][] remaining = probe.remaining();
        long[] tokens = remaining == null ? null : remaining[index];
        int bandwidths = limits.bandwidths().size();
        if (tokens == null || tokens.length != bandwidths) return null;
        if (quotas == null) return tokens;
        long[] all = Arrays.copyOf(tokens, bandwidths + quotas.size());
        for (int i = 0; i < quotas.size(); i++) {
            long[] left = remaining[quotasAt + i];
            if (left == null || left.length != 1) return tokens; // no figure: no quota is published
            all[bandwidths + i] = left[0];
        }
        return all;
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
            // bandwidth gives back a unit spent now after one unit's refill time (a sliding window: its units
            // are back within a period and a sub-window, the bound its tokens alone can tell)
            long nextUnit = limits.nanosToReturn(i, Math.max(1, 1 - tokens[i]));
            out.add(new BandwidthStatus(prefix == null ? b.name() : prefix + '.' + b.name(), b.capacity(), window,
                    Math.max(0, tokens[i]), missing <= 0 ? 0 : limits.nanosToReturn(i, missing), nextUnit, pk, b.algorithm()));
        }
    }

    /**
     * The use of each calendar quota of a tenant in the current period, in plan order; empty if its
     * plan has none, or for a {@link BucketKind#GUEST} (quotas count assigned tenants only). Reads the
     * counters, creates none.
     */
    List<QuotaUsage> quotaUsage(BucketKind kind, String tenant, String plan) {
        PlanLimits pl = limits.limitsOf(kind, tenant, plan);
        if (kind != BucketKind.TENANT || pl.quotas() == null) return List.of();
        long now = QuotaWindows.nanos(wall.instant());
        CalendarQuota[] quotas = pl.quotas().quotas();
        List<QuotaUsage> out = new ArrayList<>(quotas.length);
        for (int i = 0; i < quotas.length; i++) {
            QuotaWindows.Period p = pl.quotas().period(i, now);
            long used = counters.used(QuotaWindows.key(quotas[i], tenant, p.label()));
            out.add(new QuotaUsage(quotas[i].name(), quotas[i].per(), quotas[i].limit(), used,
                    Math.max(0, quotas[i].limit() - used), QuotaWindows.instant(p.endNanos())));
        }
        return out;
    }

    /**
     * One page of the usage export: every tenant the store holds quota counters of, placed by
     * {@code placement}, with its use of the current and the kept closed periods ({@link UsageExport}).
     *
     * @throws IllegalArgumentException for a cursor no export gave, or {@code size < 1}
     */
    io.quotagate.filter.status.UsagePage usage(TenantPlans placement, String cursor, int size) {
        return new UsageExport(limits, counters, wall).page(placement, cursor, size);
    }

    /**
     * The tenant's calendar quotas in their current periods, for the quota events: the units used as this
     * instance last saw them ({@link QuotaCounters#notedUsed}: on Redis, the reply of its own latest count,
     * no round trip; read only for a counter it has not seen), and each period's bounds and counter key.
     */
    List<QuotaPeriod> quotaPeriods(BucketKind kind, String tenant, String plan) {
        PlanLimits pl = limits.limitsOf(kind, tenant, plan);
        if (kind != BucketKind.TENANT || pl.quotas() == null) return List.of();
        long now = QuotaWindows.nanos(wall.instant());
        CalendarQuota[] quotas = pl.quotas().quotas();
        List<QuotaPeriod> out = new ArrayList<>(quotas.length);
        for (int i = 0; i < quotas.length; i++) {
            QuotaWindows.Period p = pl.quotas().period(i, now);
            String key = QuotaWindows.key(quotas[i], tenant, p.label());
            out.add(new QuotaPeriod(quotas[i].name(), quotas[i].limit(), counters.notedUsed(key),
                    QuotaWindows.instant(p.startNanos()), QuotaWindows.instant(p.endNanos()), key,
                    // an event's claim goes an hour after its period, not with the counter kept for the export
                    p.endNanos() / 1_000_000L + QuotaWindows.GRACE_MILLIS));
        }
        return out;
    }

    /** True if a global quota is in force. */
    boolean hasGlobalQuota() {
        return limits.global() != null;
    }

    /** Units available now in the global quota (the smallest over its bandwidths), or 0 if there is none. */
    long globalAvailableTokens() {
        QuotaBucket global = limits.global();
        return global == null ? 0 : global.available();
    }

    /** The global quota's capacity (its smallest bandwidth), or 0 if there is none. */
    long globalCapacity() {
        return limits.global() == null ? 0 : limits.globalMaxCost();
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

package io.quotagate.filter.internal.admission;

import io.quotagate.filter.internal.admission.Limits.PlanLimits;
import io.quotagate.filter.internal.admission.Limits.RouteLimits;
import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.store.BucketLimits;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.store.QuotaBucket;
import io.quotagate.filter.store.QuotaCounters;
import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.CalendarQuota;
import io.quotagate.plans.GlobalQuota;
import io.quotagate.plans.Plan;
import io.quotagate.plans.Plans;
import io.quotagate.plans.RouteRule;
import io.quotagate.plans.ScopedLimit;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Builds the {@link Limits} of a policy from its {@link Plans}: the bucket limits of every plan, tenant and
 * route, the largest cost each can admit, and the shared buckets (global quota, guest pool). On a reload it
 * keeps the previous limits' instances wherever the bandwidths are equal, so their buckets stay untouched,
 * and has the store move the shared buckets to their new limits at once.
 */
final class LimitsCompiler {
    /** Key of the single global bucket. */
    static final String GLOBAL_KEY = "global";
    /** Key of the guest pool, in the same table as the global bucket. */
    static final String GUESTS_KEY = "guests";

    private final BucketStore store;
    /** Where calendar quotas count; null if the store keeps no counters (plans with quotas are refused). */
    private final QuotaCounters counters;
    /** How many closed periods a quota counter is kept for. */
    private final int keptPeriods;

    /**
     * @param store    where the shared buckets live
     * @param counters the store's quota counters, null if it keeps none
     */
    LimitsCompiler(BucketStore store, QuotaCounters counters) {
        this(store, counters, QuotaWindows.DEFAULT_KEPT_PERIODS);
    }

    /**
     * @param store       where the shared buckets live
     * @param counters    the store's quota counters, null if it keeps none
     * @param keptPeriods how many closed periods the quota counters are kept for (the usage export reads them)
     */
    LimitsCompiler(BucketStore store, QuotaCounters counters, int keptPeriods) {
        this.store = Objects.requireNonNull(store, "store");
        this.counters = counters;
        if (keptPeriods < 0) throw new IllegalArgumentException("kept periods must be >= 0, was " + keptPeriods);
        this.keptPeriods = keptPeriods;
    }

    /**
     * The limits of {@code plans}: at start ({@code previous} null) the initial ones; on a reload, those of
     * {@code previous} wherever they did not change (see {@link BucketLimits}).
     *
     * @throws IllegalArgumentException if a plan or tenant has calendar quotas and the store keeps no counters
     */
    Limits compile(Plans plans, Limits previous) {
        SharedBucket global = shared(GLOBAL_KEY, plans.global().map(GlobalQuota::limits).orElse(List.of()),
                previous == null ? null : previous.globalLimits(), previous != null);
        SharedBucket guests = shared(GUESTS_KEY, plans.tenants().guests().limits(),
                previous == null ? null : previous.guestsLimits(), previous != null);
        long globalMaxCost = global.maxCost();
        Map<String, PlanLimits> byName = byPlan(plans, previous, globalMaxCost);
        Map<String, PlanLimits> overrides = overrides(plans, previous, byName, globalMaxCost);
        Map<String, PlanLimits> plansByName = Map.copyOf(byName);
        ContractLimits contracts = contracts(plans, previous, plansByName, globalMaxCost);
        return new Limits(plansByName, overrides, contracts, global.bucket(), global.limits(),
                globalMaxCost, guests.bucket(), guests.limits(), guests.maxCost(), routes(plans, previous));
    }

    /** Each plan's limits, by plan name. */
    private Map<String, PlanLimits> byPlan(Plans plans, Limits previous, long globalMaxCost) {
        Map<String, PlanLimits> byName = new HashMap<>();
        for (Plan plan : plans.plans().values()) {
            PlanLimits old = previous == null ? null : previous.plans().get(plan.name());
            if (!plan.quotas().isEmpty() && counters == null) {
                throw new IllegalArgumentException("plans." + plan.name() + ".quotas: the bucket store keeps no "
                        + "quota counters; calendar quotas need the local or the Redis store");
            }
            QuotaWindows quotas = plan.quotas().isEmpty() ? null
                    : old != null && old.quotas() != null && List.of(old.quotas().quotas()).equals(plan.quotas())
                    ? old.quotas() : new QuotaWindows(plan.quotas(), keptPeriods);
            BucketLimits perUser = plan.perUser().isEmpty() ? null
                    : bucketLimits(plan.perUser(), old == null ? null : old.perUser(), previous != null);
            byName.put(plan.name(), planLimits(plan.limits(), old, previous != null, globalMaxCost,
                    plan.shadow() || plans.shadow(), plan.publish(), quotas, perUser));
        }
        return byName;
    }

    /** {@code tenants.overrides}: a tenant's own limits and/or quotas, with its plan's shadow/publish flags. */
    private Map<String, PlanLimits> overrides(Plans plans, Limits previous, Map<String, PlanLimits> byName,
                                              long globalMaxCost) {
        Map<String, PlanLimits> overrides = new HashMap<>();
        Map<String, List<CalendarQuota>> ownQuotas = plans.tenants().overrideQuotas();
        Set<String> own = new HashSet<>(plans.tenants().overrides().keySet());
        own.addAll(ownQuotas.keySet());
        for (String tenant : own) {
            PlanLimits old = previous == null ? null : previous.overrides().get(tenant);
            PlanLimits plan = byName.get(plans.tenants().assignments().get(tenant));
            if (plan == null) continue; // Plans refuses an unassigned tenant with own limits
            QuotaWindows quotas = ownQuotas.containsKey(tenant)
                    ? windows(ownQuotas.get(tenant), old == null ? null : old.quotas()) : plan.quotas();
            List<Bandwidth> bandwidths = plans.tenants().overrides().get(tenant);
            overrides.put(tenant, bandwidths != null
                    ? planLimits(bandwidths, old, previous != null, globalMaxCost, plan.shadow(), plan.publish(),
                    quotas, plan.perUser())
                    : new PlanLimits(plan.limits(), Math.min(plan.limits().smallestCapacity(),
                    userBound(plan.perUser(), quotaBound(quotas, globalMaxCost))), plan.shadow(), plan.publish(),
                    quotas, plan.perUser()));
        }
        return Map.copyOf(overrides);
    }

    /** The application directory's contracts: own limits built on first sight, with their plan's flags. */
    private ContractLimits contracts(Plans plans, Limits previous, Map<String, PlanLimits> plansByName,
                                     long globalMaxCost) {
        boolean reload = previous != null;
        return new ContractLimits(plans, previous == null ? null : previous.contracts(),
                (contract, before) -> {
                    PlanLimits plan = plansByName.get(contract.plan());
                    BucketLimits limits = !contract.hasOwnLimits() && plan != null ? plan.limits()
                            : reload || before != null ? BucketLimits.next(before, contract.limits())
                            : BucketLimits.of(contract.limits());
                    // a tenant's zone: its plan's quotas counted in that zone, in windows of its own
                    QuotaWindows quotas = contract.hasOwnQuotas() ? windows(contract.quotas(), null)
                            : plan == null || plan.quotas() == null ? null
                            : contract.zone() == null ? plan.quotas()
                            : windows(contract.quotasOver(List.of(plan.quotas().quotas())), null);
                    BucketLimits perUser = plan == null ? null : plan.perUser();
                    return new PlanLimits(limits, Math.min(limits.smallestCapacity(),
                            userBound(perUser, quotaBound(quotas, globalMaxCost))), plan != null && plan.shadow(),
                            plan != null && plan.publish(), quotas, plan == null ? null : plan.perUser());
                });
    }

    /** Each route's own limits ({@code routes[].limits}), by route name; routes without any are left out. */
    private static Map<String, RouteLimits> routes(Plans plans, Limits previous) {
        Map<String, RouteLimits> routes = new HashMap<>();
        for (RouteRule rule : plans.routes()) {
            if (rule.limits().isEmpty()) continue;
            RouteLimits old = previous == null ? null : previous.routes().get(rule.name());
            BucketLimits[] byScope = new BucketLimits[3];
            for (ScopedLimit limit : rule.limits()) {
                int i = limit.per().ordinal();
                BucketLimits before = old == null ? null : i == 0 ? old.tenant() : i == 1 ? old.user() : old.address();
                byScope[i] = bucketLimits(limit.limits(), before, previous != null);
            }
            routes.put(rule.name(), new RouteLimits(byScope[0], byScope[1], byScope[2]));
        }
        return Map.copyOf(routes);
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
     * A plan's limits from its bandwidths (see {@link #bucketLimits}) and the cost bound (never above
     * the global quota's).
     */
    private static PlanLimits planLimits(List<Bandwidth> bandwidths, PlanLimits old, boolean reload, long globalMaxCost,
                                         boolean shadow, boolean publish, QuotaWindows quotas, BucketLimits perUser) {
        BucketLimits limits = bucketLimits(bandwidths, old == null ? null : old.limits(), reload);
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
        return old != null && List.of(old.quotas()).equals(quotas) ? old : new QuotaWindows(quotas, keptPeriods);
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
}

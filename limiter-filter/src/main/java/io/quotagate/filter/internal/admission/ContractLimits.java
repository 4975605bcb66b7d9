package io.quotagate.filter.internal.admission;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.quotagate.filter.store.BucketLimits;
import io.quotagate.plans.Plans;
import io.quotagate.tenant.TenantContract;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;

/**
 * The own limits of tenants whose contract comes from the application's directory (a billing
 * database) rather than the plans file: tenant → the bucket limits built from its contract, for one
 * {@link Policy}. The directory is asked on every request ({@link TenantPlans#place}, behind its
 * cache); this table turns a contract into {@link BucketLimits} once per contract instance, so the
 * store sees the same limits instance, and moves the tenant's bucket only when the contract's
 * bandwidths really change (or a new policy changes what bounds them).
 *
 * <p>Bounded like the directory's cache ({@code tenants.max-tracked}); an entry dropped is rebuilt on
 * the tenant's next request. Limits that a route's cost exceeds are refused: the tenant keeps its
 * plan's limits and the refusal is logged once per tenant (at most 100 tenants logged).
 */
final class ContractLimits {
    private static final System.Logger LOG = System.getLogger(ContractLimits.class.getName());
    private static final int MAX_LOGGED = 100;

    /** A tenant's contract and the limits built from it. */
    private record Entry(TenantContract contract, Limits.PlanLimits limits) {
    }

    private final Cache<String, Entry> table;
    private final Plans plans;
    /** The previous policy's table only (not its own previous), so policies do not chain up in memory. */
    private final Cache<String, Entry> previous;
    private final BiFunction<TenantContract, BucketLimits, Limits.PlanLimits> build;
    private final Set<String> logged = ConcurrentHashMap.newKeySet();

    /**
     * @param plans    the plans of the policy (routes whose costs the limits must fit)
     * @param previous the table of the policy before, whose limits instances are kept when equal
     * @param build    the plan limits of a contract, given the bucket limits it had before (kept if equal)
     */
    ContractLimits(Plans plans, ContractLimits previous,
                   BiFunction<TenantContract, BucketLimits, Limits.PlanLimits> build) {
        this.table = Caffeine.newBuilder().maximumSize(plans.tenants().maxTracked()).executor(Runnable::run).build();
        this.plans = plans;
        this.previous = previous == null ? null : previous.table;
        this.build = build;
    }

    /** Records the contract the directory just answered for {@code tenant} (one with own limits). */
    void note(String tenant, TenantContract contract) {
        Entry e = table.getIfPresent(tenant);
        if (e != null && e.contract == contract) return; // the hot path: the directory's cached instance
        if (e != null && e.contract.equals(contract)) {
            table.put(tenant, new Entry(contract, e.limits));
            return;
        }
        var refusal = plans.limitsRefusal("tenant " + tenant, contract.plan(), contract.limits());
        if (refusal.isEmpty() && contract.hasOwnQuotas()) refusal = plans.quotasRefusal("tenant " + tenant, contract.quotas());
        if (refusal.isPresent()) {
            table.invalidate(tenant);
            if (logged.size() < MAX_LOGGED && logged.add(tenant)) {
                LOG.log(System.Logger.Level.WARNING, "tenant directory: the own limits of tenant " + tenant
                        + " are ignored, the tenant gets its plan's: " + refusal.get());
            }
            return;
        }
        BucketLimits before = e != null ? e.limits.limits() : previousLimits(tenant);
        table.put(tenant, new Entry(contract, build.apply(contract, before)));
    }

    /** Forgets a tenant whose contract no longer has own limits. */
    void forget(String tenant) {
        table.invalidate(tenant);
    }

    /** The tenant's own limits, or null if it has none (or they were refused). */
    Limits.PlanLimits get(String tenant) {
        Entry e = table.getIfPresent(tenant);
        return e == null ? null : e.limits;
    }

    /** True while no tenant of this policy has own limits from the directory (skips the lookup). */
    boolean isEmpty() {
        return table.estimatedSize() == 0;
    }

    /** The bucket limits the previous policy used for this tenant, to keep them if the bandwidths are equal. */
    private BucketLimits previousLimits(String tenant) {
        if (previous == null) return null;
        Entry e = previous.getIfPresent(tenant);
        return e == null ? null : e.limits.limits();
    }
}

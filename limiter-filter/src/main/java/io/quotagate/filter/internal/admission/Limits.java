package io.quotagate.filter.internal.admission;

import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.store.BucketLimits;
import io.quotagate.filter.store.QuotaBucket;

import java.util.Map;

/**
 * The bucket limits of a {@link Policy}: what it sizes and which shared buckets it charges. Built by
 * {@link LimitsCompiler}; immutable but for the contracts' table, which fills as the directory answers.
 */
record Limits(Map<String, PlanLimits> plans, Map<String, PlanLimits> overrides, ContractLimits contracts,
              QuotaBucket global, BucketLimits globalLimits, long globalMaxCost, QuotaBucket guests,
              BucketLimits guestsLimits, long guestsMaxCost, Map<String, RouteLimits> routes) {

    /**
     * One plan's buckets: their configuration and what else admission needs to know per request; its
     * calendar quotas, or null for none (then a request reads no wall clock and allocates nothing more).
     */
    record PlanLimits(BucketLimits limits, long maxCost, boolean shadow, boolean publish, QuotaWindows quotas,
                      BucketLimits perUser) {
    }

    /** A route's own buckets ({@code routes[].limits}): per tenant, per user, per client address; null for none. */
    record RouteLimits(BucketLimits tenant, BucketLimits user, BucketLimits address) {
    }

    /**
     * The limits of a tenant's bucket: its {@code tenants.overrides} entry (the plans file, or a
     * runtime change) if it has one, else the own limits of its contract in the application's
     * directory, else its plan's.
     */
    PlanLimits limitsOf(BucketKind kind, String key, String plan) {
        if (kind == BucketKind.TENANT) {
            if (!overrides.isEmpty()) {
                PlanLimits own = overrides.get(key);
                if (own != null) return own;
            }
            if (!contracts.isEmpty()) {
                PlanLimits own = contracts.get(key);
                if (own != null) return own;
            }
        }
        return planOf(plan);
    }

    /** The limits of a plan of the policy. */
    PlanLimits planOf(String plan) {
        PlanLimits pl = plans.get(plan);
        if (pl == null) throw new IllegalArgumentException("unknown plan " + plan);
        return pl;
    }
}

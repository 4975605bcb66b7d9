package io.quotagate.filter.servlet;

import io.quotagate.filter.admission.LimitStatus;
import io.quotagate.filter.metrics.QuotaSource;
import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.InvalidPlansException;
import io.quotagate.plans.Plans;

import java.util.List;

/**
 * A running {@link QuotaFilter}'s controls ({@link QuotaFilter#control()}): what is in force, and
 * how to change it while requests flow. Every change builds a new policy and swaps it in as one
 * reference; every bucket keeps its tokens ({@link io.quotagate.filter.store.BucketLimits#INHERITANCE}).
 * Changes are serialised; reads never block.
 *
 * <p>Also the filter's monitoring view ({@link QuotaSource}): {@code new QuotaMeterBinder(filter.control())}.
 */
public interface QuotaControl extends QuotaSource {

    /** The plans in force (the last loaded, applied or changed). */
    Plans plans();

    /**
     * Re-reads the plans file the filter was built from and puts it in force. Routes, tenant
     * assignments, plans, concurrency caps and the global quota change with it; concurrency groups
     * and the store are fixed at start.
     *
     * @throws InvalidPlansException if the file is invalid or too large; the plans in force stay
     * @throws IllegalArgumentException if the running filter cannot take the file (see {@link #apply});
     *                                  the plans in force stay
     * @throws IllegalStateException if the filter was built from {@link Plans}, not a file
     */
    void reload();

    /**
     * Puts these plans in force (see {@link #reload()}).
     *
     * @throws IllegalArgumentException if they add a concurrency group (groups take effect at restart), or
     *                                  lack a limited route of a name the builder registered a
     *                                  {@code costEstimator} for; the plans in force stay
     */
    void apply(Plans plans);

    /**
     * Replaces the global quota (the hidden quota shared by all tenants); its bucket keeps its tokens,
     * capped at the new capacity. An empty list removes it. A later {@link #reload()} replaces this.
     *
     * @throws IllegalArgumentException if a route's cost exceeds a new capacity
     */
    void setGlobalQuota(List<Bandwidth> limits);

    /**
     * Replaces one plan's limits; each of its tenants' buckets moves to them, keeping its tokens, on
     * its next request. A later {@link #reload()} replaces this.
     *
     * @throws IllegalArgumentException if the plan is unknown or a route's cost exceeds a new capacity
     */
    void setPlanLimits(String plan, List<Bandwidth> limits);

    /**
     * The state of each bandwidth of a tenant's bucket, as its next request would find it (placed on
     * its plan, or in the guest table if no assignment or directory knows it), in plan order; empty
     * if it is unknown and unknown tenants are refused.
     *
     * @throws IllegalArgumentException if {@code tenant} is not a valid tenant id
     */
    List<LimitStatus> tenantLimits(String tenant);
}

package io.quotagate.filter;

import io.quotagate.filter.metrics.QuotaSource;
import io.quotagate.filter.status.BandwidthStatus;
import io.quotagate.filter.status.QuotaUsage;
import io.quotagate.filter.status.UsagePage;
import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.CalendarQuota;
import io.quotagate.plans.InvalidPlansException;
import io.quotagate.plans.Plans;

import io.quotagate.filter.status.LimitOverrides;
import io.quotagate.tenant.TenantContract;

import java.util.List;
import java.util.Optional;

/**
 * A running {@link QuotaFilter}'s controls ({@link QuotaFilter#control()}): what is in force, and
 * how to change it while requests flow. Every change builds a new policy and swaps it in as one
 * reference; every bucket keeps its tokens ({@link io.quotagate.filter.store.BucketLimits}).
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
     * capped at the new capacity. An empty list removes it. A later change of the plans file replaces
     * this. With a shared store, every instance enforces and reports it (within about a second).
     *
     * @throws IllegalArgumentException if a route's cost exceeds a new capacity (nothing changed)
     * @throws IllegalStateException    if the shared store cannot be reached (nothing changed anywhere)
     */
    void setGlobalQuota(List<Bandwidth> limits);

    /**
     * Replaces one plan's limits; each of its tenants' buckets moves to them, keeping its tokens, on
     * its next request. A later change of the plans file replaces this. Shared as {@link #setGlobalQuota}.
     *
     * @throws IllegalArgumentException if the plan is unknown or a route's cost exceeds a new capacity
     * @throws IllegalStateException    if the shared store cannot be reached (nothing changed anywhere)
     */
    void setPlanLimits(String plan, List<Bandwidth> limits);

    /**
     * Replaces one plan's calendar quotas (an empty list removes them). The counters are kept: a quota
     * of the same name counts on from the units its tenants used this period. A later change of the
     * plans file replaces this. Shared as {@link #setGlobalQuota}.
     *
     * @throws IllegalArgumentException if the plan is unknown, two quotas share a name, or a route's cost
     *                                  exceeds a quota's limit
     * @throws IllegalStateException    if the shared store cannot be reached (nothing changed anywhere)
     */
    void setPlanQuotas(String plan, List<CalendarQuota> quotas);

    /**
     * The contract in force for a tenant: from a runtime change or the plans file (its assignment and
     * overrides), else from the application's directory; empty if none knows it (it is then a guest,
     * or refused under {@code unknown: reject}).
     *
     * @throws IllegalArgumentException if {@code tenant} is not a valid tenant id
     */
    Optional<TenantContract> tenant(String tenant);

    /**
     * Places a tenant on a plan, with limits of its own if the contract has them, replacing what the
     * plans file or the directory says; its bucket moves to them keeping its tokens. Kept across changes
     * of the plans file (as long as the plan exists). Shared as {@link #setGlobalQuota}.
     *
     * @throws IllegalArgumentException if the plan is unknown, a route's cost exceeds an own capacity, or
     *                                  10,000 other tenants have runtime entries (contracts in bulk belong in a
     *                                  {@link io.quotagate.tenant.TenantDirectory})
     * @throws IllegalStateException    if the shared store cannot be reached (nothing changed anywhere)
     */
    void setTenant(String tenant, TenantContract contract);

    /**
     * Removes a tenant's runtime entry ({@link #setTenant}): the plans file or the directory places it
     * again.
     *
     * @return false if the tenant had no runtime entry (nothing changed)
     * @throws IllegalStateException if the shared store cannot be reached (nothing changed anywhere)
     */
    boolean clearTenant(String tenant);

    /** The runtime changes in force (global quota, plan limits, tenant entries), made through any instance. */
    LimitOverrides overrides();

    /**
     * Drops every runtime change: the plans file's limits (the one published last, with a shared store)
     * apply again, everywhere.
     *
     * @throws IllegalStateException if the shared store cannot be reached (nothing changed anywhere)
     */
    void clearOverrides();

    /**
     * Drops the cached directory answer of one tenant, on every instance sharing the store, so its next
     * request asks the application's directory again (its contract changed in the application's data).
     *
     * @throws IllegalStateException if the shared store cannot be reached (dropped on this instance only)
     */
    void invalidate(String tenant);

    /**
     * The state of each bandwidth of a tenant's bucket, as its next request would find it (placed on
     * its plan, or in the guest table if no assignment or directory knows it), in plan order; empty
     * if it is unknown and unknown tenants are refused.
     *
     * @throws IllegalArgumentException if {@code tenant} is not a valid tenant id
     */
    List<BandwidthStatus> tenantLimits(String tenant);

    /**
     * The use of each calendar quota of a tenant in the current period (used, remaining, when it resets),
     * in plan order; empty if its plan has no quotas, or if no assignment or directory knows it (quotas
     * count assigned tenants only). Reads the counters, creates none.
     *
     * @throws IllegalArgumentException if {@code tenant} is not a valid tenant id
     */
    List<QuotaUsage> tenantQuotas(String tenant);

    /**
     * One page of the usage export, for invoicing: every tenant whose quota counters the store holds (tenants
     * with a unit counted in the periods exported), each exactly once over the pages, with its use of each quota
     * of its plan in the current period and in the closed periods the store keeps
     * ({@link QuotaFilter.Builder#closedPeriodsKept}, default 3), newest first. Read from the store, not from
     * this instance's memory: with a shared store every instance answers the same figures. Holds about
     * {@code size} tenants in memory at a time; {@link UsagePage#csv} and {@link UsagePage#json} write a page.
     *
     * @param cursor null for the first page, else the {@link UsagePage#next()} of the previous one (it carries
     *               the export's time: every page reads the same periods)
     * @param size   about how many tenants a page holds at most, 1 to 10,000
     * @throws IllegalArgumentException for a cursor no export gave, or a size out of range
     * @throws io.quotagate.filter.store.StoreUnavailableException if the shared store cannot be reached
     */
    UsagePage usage(String cursor, int size);
}

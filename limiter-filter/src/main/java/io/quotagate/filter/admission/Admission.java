package io.quotagate.filter.admission;

import io.github.bucket4j.Bucket;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.EstimationProbe;
import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.Plan;
import io.quotagate.plans.Plans;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The servlet-free admission decision: takes a request's cost from the tenant's bucket (sized by its
 * plan, every bandwidth at once) and then from the global quota, if one is configured.
 *
 * <p>A tenant is never charged for a refused request: when the global quota refuses, the units just
 * taken from the tenant are given back. When a request is refused, the wait reported is the longest
 * of the buckets that would refuse it, so a client that waits that long and retries is admitted
 * (unless someone else used the units meanwhile).
 *
 * <p>Thread-safe; one instance serves every request.
 */
public final class Admission {
    /** Key of the single global bucket. */
    static final String GLOBAL_KEY = "global";

    private final Map<String, BucketConfiguration> planConfigs;
    /** Tenants with {@code tenants.overrides}: their own limits instead of their plan's. */
    private final Map<String, BucketConfiguration> tenantConfigs;
    private final BucketStore store;
    private final Bucket global;
    private final long globalCapacity;

    /**
     * @param plans the plans whose limits size the buckets
     * @param store where the buckets live
     */
    public Admission(Plans plans, BucketStore store) {
        Objects.requireNonNull(plans, "plans");
        this.store = Objects.requireNonNull(store, "store");
        Map<String, BucketConfiguration> configs = new HashMap<>();
        for (Plan plan : plans.plans().values()) configs.put(plan.name(), configuration(plan.limits()));
        this.planConfigs = Map.copyOf(configs);
        Map<String, BucketConfiguration> overrides = new HashMap<>();
        plans.tenants().overrides().forEach((tenant, limits) -> overrides.put(tenant, configuration(limits)));
        this.tenantConfigs = Map.copyOf(overrides);
        this.global = plans.global()
                .map(g -> store.bucket(BucketKind.GLOBAL, GLOBAL_KEY, configuration(g.limits())))
                .orElse(null);
        this.globalCapacity = plans.global()
                .map(g -> g.limits().stream().mapToLong(Bandwidth::capacity).min().orElse(0))
                .orElse(0L);
    }

    /**
     * Decides whether a request of {@code cost} units from {@code tenant} on {@code plan} may run,
     * and if so takes the units.
     *
     * @param tenant a valid tenant id (see {@link io.quotagate.plans.TenantId})
     * @param plan   the name of a plan of the plans this admission was built from
     * @param cost   units, &gt; 0
     */
    public Decision admit(String tenant, String plan, long cost) {
        return admit(BucketKind.TENANT, tenant, plan, cost);
    }

    /**
     * As {@link #admit(String, String, long)}, with the bucket table chosen by {@code kind}:
     * {@link BucketKind#TENANT} for an assigned tenant (its {@code tenants.overrides} limits, if any,
     * replace the plan's), {@link BucketKind#GUEST} for an unknown tenant or anonymous client.
     *
     * @param kind {@link BucketKind#TENANT} or {@link BucketKind#GUEST}
     * @param key  the tenant id, or an anonymous client's key
     */
    public Decision admit(BucketKind kind, String key, String plan, long cost) {
        if (cost <= 0) throw new IllegalArgumentException("cost must be > 0, was " + cost);
        if (kind == BucketKind.GLOBAL) throw new IllegalArgumentException("kind must be TENANT or GUEST");
        BucketConfiguration config = kind == BucketKind.TENANT ? tenantConfigs.get(key) : null;
        if (config == null) config = planConfigs.get(plan);
        if (config == null) throw new IllegalArgumentException("unknown plan " + plan);

        Bucket tenantBucket = store.bucket(kind, key, config);
        // tryConsume allocates nothing; the wait is computed only for the rare refusal
        if (!tenantBucket.tryConsume(cost)) {
            long wait = waitFor(tenantBucket, cost);
            if (global != null) {
                // the client must also find the global quota able to take it when it comes back
                long globalWait = waitFor(global, cost);
                if (globalWait > wait) return new Decision.Rejected(Reason.GLOBAL_RATE, globalWait);
            }
            return new Decision.Rejected(Reason.TENANT_RATE, wait);
        }
        if (global != null && !global.tryConsume(cost)) {
            // the tenant is never charged for a request that does not run
            tenantBucket.addTokens(cost);
            return new Decision.Rejected(Reason.GLOBAL_RATE, waitFor(global, cost));
        }
        return Decision.Admitted.INSTANCE;
    }

    /**
     * Nanoseconds until {@code bucket} can take {@code cost}. Read after a refused take, so it is
     * normally &gt; 0; if tokens arrived in between, 0 (the Retry-After floor of 1 s still applies).
     */
    private static long waitFor(Bucket bucket, long cost) {
        EstimationProbe probe = bucket.estimateAbilityToConsume(cost);
        return probe.canBeConsumed() ? 0 : probe.getNanosToWaitForRefill();
    }

    /** True if a global quota is configured. */
    public boolean hasGlobalQuota() {
        return global != null;
    }

    /** Units available now in the global quota (the smallest over its bandwidths), or 0 if there is none. */
    public long globalAvailableTokens() {
        return global == null ? 0 : global.getAvailableTokens();
    }

    /** The global quota's capacity (its smallest bandwidth), or 0 if there is none. */
    public long globalCapacity() {
        return globalCapacity;
    }

    /** The bucket4j configuration for a list of bandwidths (greedy refill: tokens arrive smoothly). */
    public static BucketConfiguration configuration(List<Bandwidth> limits) {
        var builder = BucketConfiguration.builder();
        for (Bandwidth b : limits) {
            builder.addLimit(l -> l.capacity(b.capacity()).refillGreedy(b.refill(), b.period()).id(b.name()));
        }
        return builder.build();
    }
}

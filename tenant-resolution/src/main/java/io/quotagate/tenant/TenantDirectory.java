package io.quotagate.tenant;

import java.time.Duration;
import io.quotagate.plans.Bandwidth;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * Tells which plan a tenant is on and, for a tenant with a contract of its own, its limits. The plans
 * file's {@code tenants.assignments} and {@code tenants.overrides} are one directory; an application
 * may supply its own (its billing database, or a lambda), wrapped in
 * {@link #cached}.
 *
 * <p>A lambda answers the plan only ({@link #planOf}); a directory that knows tenants' own limits
 * overrides {@link #contractOf} as well.
 *
 * <p>The filter asks only about valid tenant ids ({@link io.quotagate.plans.TenantId}).
 */
@FunctionalInterface
public interface TenantDirectory {

    /** The plan name assigned to this (valid) tenant id, or empty if the directory does not know it. */
    Optional<String> planOf(String tenantId);

    /**
     * The tenant's plan and its own limits, if it has any; empty if the directory does not know it.
     * By default the plan of {@link #planOf} with the plan's limits.
     */
    default Optional<TenantContract> contractOf(String tenantId) {
        return planOf(tenantId).map(TenantContract::onPlan);
    }

    /**
     * Forgets what a cache holds for this tenant, so its next request asks the source again (a
     * contract changed in the application's data). A directory without a cache has nothing to forget.
     */
    default void invalidate(String tenantId) {
        // nothing cached
    }

    /** A fixed directory: tenant → plan, every tenant on its plan's limits. */
    static TenantDirectory of(Map<String, String> assignments) {
        return of(assignments, Map.of());
    }

    /**
     * A fixed directory: tenant → plan, and the tenants whose own limits replace their plan's (as
     * {@code tenants.assignments} and {@code tenants.overrides} say). A tenant with own limits and no
     * assignment is not known.
     */
    static TenantDirectory of(Map<String, String> assignments, Map<String, List<Bandwidth>> ownLimits) {
        // One Optional per tenant, built once: a lookup allocates nothing.
        Map<String, Optional<String>> plans = new HashMap<>(assignments.size() * 2);
        Map<String, Optional<TenantContract>> contracts = new HashMap<>(assignments.size() * 2);
        assignments.forEach((tenant, plan) -> {
            plans.put(tenant, Optional.of(plan));
            contracts.put(tenant, Optional.of(new TenantContract(plan, ownLimits.getOrDefault(tenant, List.of()))));
        });
        Map<String, Optional<String>> planAnswers = Map.copyOf(plans);
        Map<String, Optional<TenantContract>> contractAnswers = Map.copyOf(contracts);
        return new TenantDirectory() {
            @Override
            public Optional<String> planOf(String tenant) {
                return planAnswers.getOrDefault(tenant, Optional.empty());
            }

            @Override
            public Optional<TenantContract> contractOf(String tenant) {
                return contractAnswers.getOrDefault(tenant, Optional.empty());
            }
        };
    }

    /** This directory, then {@code next} for the tenants this one does not know. */
    default TenantDirectory orElse(TenantDirectory next) {
        Objects.requireNonNull(next, "next");
        TenantDirectory first = this;
        return new TenantDirectory() {
            @Override
            public Optional<String> planOf(String tenant) {
                Optional<String> plan = first.planOf(tenant);
                return plan.isPresent() ? plan : next.planOf(tenant);
            }

            @Override
            public Optional<TenantContract> contractOf(String tenant) {
                Optional<TenantContract> contract = first.contractOf(tenant);
                return contract.isPresent() ? contract : next.contractOf(tenant);
            }

            @Override
            public void invalidate(String tenant) {
                first.invalidate(tenant);
                next.invalidate(tenant);
            }
        };
    }

    /**
     * {@code source} behind a bounded Caffeine cache of contracts: a known tenant's answer is kept for
     * {@code expireAfter} and asked again (refreshed) once half of that has passed, on its next
     * request, so a busy tenant never waits for an expired entry; an unknown tenant is kept for
     * {@code negativeExpireAfter} (short, so a tenant created a moment ago is soon found, while a flood
     * of made-up ids costs one lookup per id). A refresh that brings the same answer keeps the cached
     * instance. Exceptions are not cached. {@link #invalidate} forgets one tenant at once.
     *
     * @param maximumSize         most answers kept
     * @param expireAfter         how long an answer is kept (a contract change shows after at most this)
     * @param negativeExpireAfter how long "unknown" is kept
     * @param nanoTicker          time source in nanoseconds ({@code System::nanoTime})
     */
    static TenantDirectory cached(TenantDirectory source, long maximumSize, Duration expireAfter,
                                  Duration negativeExpireAfter, LongSupplier nanoTicker) {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(nanoTicker, "nanoTicker");
        if (maximumSize <= 0) throw new IllegalArgumentException("maximum size must be > 0, was " + maximumSize);
        long positive = Objects.requireNonNull(expireAfter, "expireAfter").toNanos();
        long negative = Objects.requireNonNull(negativeExpireAfter, "negativeExpireAfter").toNanos();
        if (positive <= 0 || negative <= 0) throw new IllegalArgumentException("expiry must be > 0");
        return new CachedDirectory(source, maximumSize, positive, negative, nanoTicker);
    }

    /** {@code source} cached for 5 minutes (unknown tenants for 30 s), at most 100,000 answers. */
    static TenantDirectory cached(TenantDirectory source) {
        return cached(source, 100_000, Duration.ofMinutes(5), Duration.ofSeconds(30), System::nanoTime);
    }
}

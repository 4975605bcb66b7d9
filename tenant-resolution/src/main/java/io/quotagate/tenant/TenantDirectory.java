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
    /** How long a caller of {@link #cached} waits at most for a lookup, unless told otherwise: 250 ms. */
    Duration DEFAULT_LOOKUP_TIMEOUT = Duration.ofMillis(250);
    /** How many lookups {@link #cached} runs at once at most, unless told otherwise. */
    int DEFAULT_MAX_LOOKUPS = 8;

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
     * {@code source} behind a bounded cache of contracts, asked so that it never hangs a caller, with
     * {@link #DEFAULT_LOOKUP_TIMEOUT} and {@link #DEFAULT_MAX_LOOKUPS}: see
     * {@link #cached(TenantDirectory, long, Duration, Duration, Duration, int, LongSupplier)}.
     */
    static TenantDirectory cached(TenantDirectory source, long maximumSize, Duration expireAfter,
                                  Duration negativeExpireAfter, LongSupplier nanoTicker) {
        return cached(source, maximumSize, expireAfter, negativeExpireAfter, DEFAULT_LOOKUP_TIMEOUT,
                DEFAULT_MAX_LOOKUPS, nanoTicker);
    }

    /**
     * {@code source} behind a bounded cache of contracts, asked so that it never hangs a caller.
     *
     * <p>A tenant the cache knows is answered from it at once, never waiting for {@code source}: once half of
     * {@code expireAfter} has passed since its answer was read, its next request starts a read in the
     * background, and the cached answer stands until that read returns, and for as long as {@code source}
     * fails (a failed read is tried again on a request 5 s later at the soonest; failures of these reads are
     * logged at most once per 10 s). A read that brings an equal contract keeps the cached instance. A found
     * answer is kept while requests ask for it at least once per {@code expireAfter}; an unknown tenant is
     * kept for {@code negativeExpireAfter} (short, so a tenant created a moment ago is soon found, while a
     * flood of made-up ids costs one lookup per id).
     *
     * <p>A tenant the cache does not know is looked up on a thread of the cache's own (at most
     * {@code maxLookups} lookups at once, one per tenant), and the caller waits at most {@code lookupTimeout}
     * for it. {@link #contractOf} and {@link #planOf} throw an {@link IllegalStateException} if the lookup
     * fails (the source's exception is its cause), does not answer in time (its answer is cached when it
     * comes), or cannot start because {@code maxLookups} run already; failures are not cached.
     * {@link #invalidate} forgets one tenant at once.
     *
     * @param maximumSize         most answers kept
     * @param expireAfter         a found answer is read again after half of this, and dropped if no request
     *                            asks for it during this long
     * @param negativeExpireAfter how long "unknown" is kept
     * @param lookupTimeout       the longest a caller waits for a lookup
     * @param maxLookups          the most lookups running at once
     * @param nanoTicker          time source in nanoseconds ({@code System::nanoTime})
     */
    static TenantDirectory cached(TenantDirectory source, long maximumSize, Duration expireAfter,
                                  Duration negativeExpireAfter, Duration lookupTimeout, int maxLookups,
                                  LongSupplier nanoTicker) {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(nanoTicker, "nanoTicker");
        if (maximumSize <= 0) throw new IllegalArgumentException("maximum size must be > 0, was " + maximumSize);
        long positive = Objects.requireNonNull(expireAfter, "expireAfter").toNanos();
        long negative = Objects.requireNonNull(negativeExpireAfter, "negativeExpireAfter").toNanos();
        if (positive <= 0 || negative <= 0) throw new IllegalArgumentException("expiry must be > 0");
        long timeout = Objects.requireNonNull(lookupTimeout, "lookupTimeout").toNanos();
        if (timeout <= 0) throw new IllegalArgumentException("lookup timeout must be > 0, was " + lookupTimeout);
        if (maxLookups <= 0) throw new IllegalArgumentException("max lookups must be > 0, was " + maxLookups);
        return new CachedDirectory(source, maximumSize, positive, negative, timeout, maxLookups, nanoTicker);
    }

    /**
     * {@code source} cached for 5 minutes (unknown tenants for 30 s), at most 100,000 answers, lookups
     * bounded by {@link #DEFAULT_LOOKUP_TIMEOUT} and {@link #DEFAULT_MAX_LOOKUPS}.
     */
    static TenantDirectory cached(TenantDirectory source) {
        return cached(source, 100_000, Duration.ofMinutes(5), Duration.ofSeconds(30), System::nanoTime);
    }
}

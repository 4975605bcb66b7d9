package io.quotagate.tenant;

import com.github.benmanes.caffeine.cache.Cache;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * Tells which plan a tenant is on. The plans file's {@code tenants.assignments} is one directory;
 * an application may supply its own (a database lookup), wrapped in {@link #cached}.
 *
 * <p>The filter asks only about valid tenant ids ({@link io.quotagate.plans.TenantId}).
 */
@FunctionalInterface
public interface TenantDirectory {

    /** The plan name assigned to this (valid) tenant id, or empty if the directory does not know it. */
    Optional<String> planOf(String tenantId);

    /** A fixed directory. */
    static TenantDirectory of(Map<String, String> assignments) {
        Map<String, String> copy = Map.copyOf(assignments);
        // One Optional per plan, built once: a lookup allocates nothing.
        Map<String, Optional<String>> plans = new HashMap<>(copy.size() * 2);
        copy.forEach((tenant, plan) -> plans.put(tenant, Optional.of(plan)));
        Map<String, Optional<String>> answers = Map.copyOf(plans);
        return tenant -> answers.getOrDefault(tenant, Optional.empty());
    }

    /** This directory, then {@code next} for the tenants this one does not know. */
    default TenantDirectory orElse(TenantDirectory next) {
        Objects.requireNonNull(next, "next");
        return tenant -> {
            Optional<String> plan = planOf(tenant);
            return plan.isPresent() ? plan : next.planOf(tenant);
        };
    }

    /**
     * {@code source} behind a bounded Caffeine cache: a known tenant's plan is kept for
     * {@code expireAfter}, an unknown tenant for {@code negativeExpireAfter} (short, so a tenant
     * created a moment ago is soon found, while a flood of made-up ids costs one lookup per id).
     * Exceptions are not cached.
     *
     * @param maximumSize         most answers kept
     * @param expireAfter         how long a plan is kept (a plan change shows after at most this)
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
        Cache<String, Optional<String>> cache = LookupCache.build(maximumSize, positive, negative, nanoTicker);
        Function<String, Optional<String>> load = source::planOf;
        return tenant -> {
            Optional<String> plan = cache.get(tenant, load);
            return plan == null ? Optional.empty() : plan;
        };
    }

    /** {@code source} cached for 5 minutes (unknown tenants for 30 s), at most 100,000 answers. */
    static TenantDirectory cached(TenantDirectory source) {
        return cached(source, 100_000, Duration.ofMinutes(5), Duration.ofSeconds(30), System::nanoTime);
    }
}

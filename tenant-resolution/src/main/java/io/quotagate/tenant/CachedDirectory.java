package io.quotagate.tenant;

import com.github.benmanes.caffeine.cache.CacheLoader;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.LoadingCache;

import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * {@link TenantDirectory#cached}: the application's directory behind a bounded cache of contracts.
 * Refreshed after half the positive expiry, on the calling thread (no common-pool wake-up on the
 * request path); a refresh that brings an equal contract keeps the old instance, so the filter, which
 * tells unchanged limits by identity, does not move the tenant's bucket.
 */
final class CachedDirectory implements TenantDirectory {
    private final LoadingCache<String, Optional<TenantContract>> cache;

    CachedDirectory(TenantDirectory source, long maximumSize, long positiveNanos, long negativeNanos,
                    LongSupplier nanoTicker) {
        CacheLoader<String, Optional<TenantContract>> loader = new CacheLoader<>() {
            @Override
            public Optional<TenantContract> load(String tenant) {
                return source.contractOf(tenant);
            }

            @Override
            public Optional<TenantContract> reload(String tenant, Optional<TenantContract> old) {
                Optional<TenantContract> fresh = source.contractOf(tenant);
                return fresh.equals(old) ? old : fresh;
            }
        };
        this.cache = Caffeine.newBuilder().maximumSize(maximumSize).executor(Runnable::run)
                .ticker(nanoTicker::getAsLong)
                .refreshAfterWrite(java.time.Duration.ofNanos(Math.max(1, positiveNanos / 2)))
                .expireAfter(LookupCache.<TenantContract>expiry(positiveNanos, negativeNanos))
                .build(loader);
    }

    @Override
    public Optional<String> planOf(String tenant) {
        Optional<TenantContract> c = contractOf(tenant);
        return c.isPresent() ? Optional.of(c.get().plan()) : Optional.empty();
    }

    @Override
    public Optional<TenantContract> contractOf(String tenant) {
        Optional<TenantContract> c = cache.get(tenant);
        return c == null ? Optional.empty() : c;
    }

    @Override
    public void invalidate(String tenant) {
        cache.invalidate(tenant);
    }
}

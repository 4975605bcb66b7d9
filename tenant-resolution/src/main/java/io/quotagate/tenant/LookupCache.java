package io.quotagate.tenant;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;

import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * The cache in front of an application's lookups (tenant → plan, API key → tenant): bounded, a found
 * answer kept for {@code positiveNanos}, a "not found" for {@code negativeNanos} (short, so a new
 * tenant or key is soon found while a flood of made-up ones costs one lookup each). Reads do not
 * extend an entry's life, so a changed answer shows after at most its expiry.
 */
final class LookupCache {
    private LookupCache() {
    }

    static Cache<String, Optional<String>> build(long maximumSize, long positiveNanos, long negativeNanos,
                                                 LongSupplier nanoTicker) {
        // maintenance on the calling thread: no common-pool wake-up on the request path
        Caffeine<Object, Object> c = Caffeine.newBuilder().maximumSize(maximumSize).executor(Runnable::run);
        if (nanoTicker != null) c.ticker(nanoTicker::getAsLong);
        return c.expireAfter(LookupCache.<String>expiry(positiveNanos, negativeNanos)).build();
    }

    /**
     * A found answer kept for {@code positiveNanos}, "not found" for {@code negativeNanos}; reads do not
     * extend an entry's life.
     */
    static <V> Expiry<String, Optional<V>> expiry(long positiveNanos, long negativeNanos) {
        return new Expiry<>() {
            @Override
            public long expireAfterCreate(String key, Optional<V> v, long now) {
                return v.isPresent() ? positiveNanos : negativeNanos;
            }

            @Override
            public long expireAfterUpdate(String key, Optional<V> v, long now, long remaining) {
                return v.isPresent() ? positiveNanos : negativeNanos;
            }

            @Override
            public long expireAfterRead(String key, Optional<V> v, long now, long remaining) {
                return remaining;
            }
        };
    }
}

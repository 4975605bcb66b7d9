package io.quotagate.tenant;

import com.github.benmanes.caffeine.cache.Cache;
import io.quotagate.plans.ApiKeyHash;
import jakarta.servlet.http.HttpServletRequest;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * Maps an API key to its tenant. The key is read from {@code X-Api-Key} (or another configured header)
 * or from {@code Authorization: ApiKey <key>}; a request with neither is not this resolver's
 * (empty result, the next resolver runs).
 *
 * <p>Keys are never stored or looked up in clear: the resolver hashes the presented key with SHA-256
 * and looks up the lower-case hex digest, first in a fixed table (the plans file's
 * {@code tenants.api-keys}), then through an optional lookup function (a database query by hash).
 * The lookup's answers are cached in a bounded Caffeine cache: found tenants for
 * {@link Builder#expireAfter}, unknown hashes for the shorter {@link Builder#negativeExpireAfter}, so a
 * client cycling unknown keys costs one lookup per key, not one per request.
 *
 * <p>Refusals ({@link TenantRejectedException}): 401 {@code invalid_api_key} for an empty key, a key
 * longer than {@value #MAX_KEY_LENGTH} characters or with characters outside visible ASCII (no
 * lookup is made); 401 {@code unknown_api_key} for a well-formed key nobody knows; 400
 * {@code ambiguous_tenant} for a key header sent twice or holding a comma (two keys folded into one
 * line by a proxy), or two {@code Authorization} headers.
 */
public final class ApiKeyResolver implements TenantResolver {
    /** The header read by default. */
    public static final String DEFAULT_HEADER = "X-Api-Key";
    /** The longest key accepted; longer ones are refused without hashing or lookup. */
    public static final int MAX_KEY_LENGTH = 256;

    private static final String AUTH_SCHEME = "ApiKey ";
    private static final MessageDigest SHA256_PROTOTYPE;

    static {
        try {
            SHA256_PROTOTYPE = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new ExceptionInInitializerError(e); // every Java platform must provide SHA-256
        }
    }

    private final String header;
    private final Map<String, String> fixed;
    private final Function<String, Optional<String>> lookup;
    private final Cache<String, Optional<String>> cache;

    private ApiKeyResolver(Builder b) {
        this.header = b.header;
        this.fixed = Map.copyOf(b.fixed);
        this.lookup = b.lookup;
        if (lookup == null) {
            this.cache = null;
        } else {
            long positive = b.expireAfter.toNanos();
            long negative = b.negativeExpireAfter.toNanos();
            this.cache = LookupCache.build(b.maximumSize, positive, negative, b.ticker);
        }
    }

    /** A builder; give {@link Builder#keys} or {@link Builder#lookup} (or both). */
    public static Builder builder() {
        return new Builder();
    }

    /** Lower-case hex SHA-256 of the key's UTF-8 bytes: the form the plans file and lookups use. */
    public static String sha256Hex(String key) {
        MessageDigest md;
        try {
            md = (MessageDigest) SHA256_PROTOTYPE.clone();
        } catch (CloneNotSupportedException e) {
            throw new IllegalStateException(e);
        }
        return HexFormat.of().formatHex(md.digest(key.getBytes(StandardCharsets.UTF_8)));
    }

    @Override
    public Optional<String> resolve(HttpServletRequest request) {
        String key = SingleHeader.value(request, header, true);
        if (key == null) {
            String auth = SingleHeader.value(request, "Authorization", false);
            if (auth == null || !auth.regionMatches(true, 0, AUTH_SCHEME, 0, AUTH_SCHEME.length())) return Optional.empty();
            key = auth.substring(AUTH_SCHEME.length());
        }
        key = key.strip();
        if (!wellFormed(key)) {
            throw new TenantRejectedException(401, "invalid_api_key",
                    "The API key must be 1-" + MAX_KEY_LENGTH + " visible ASCII characters.");
        }
        String hash = sha256Hex(key);
        String tenant = fixed.get(hash);
        if (tenant == null && cache != null) tenant = cache.get(hash, lookup).orElse(null);
        if (tenant == null) throw new TenantRejectedException(401, "unknown_api_key", "The API key is not known.");
        return Optional.of(tenant);
    }

    /** Entries held by the lookup cache (for tests and metrics); 0 without a lookup. */
    long cachedEntries() {
        if (cache == null) return 0;
        cache.cleanUp();
        return cache.estimatedSize();
    }

    private static boolean wellFormed(String key) {
        int n = key.length();
        if (n == 0 || n > MAX_KEY_LENGTH) return false;
        for (int i = 0; i < n; i++) {
            char c = key.charAt(i);
            if (c < 0x21 || c > 0x7e) return false;
        }
        return true;
    }

    /** Builds an {@link ApiKeyResolver}; every setter validates at once. */
    public static final class Builder {
        private String header = DEFAULT_HEADER;
        private Map<String, String> fixed = Map.of();
        private Function<String, Optional<String>> lookup;
        private long maximumSize = 10_000;
        private Duration expireAfter = Duration.ofMinutes(5);
        private Duration negativeExpireAfter = Duration.ofSeconds(30);
        private LongSupplier ticker;

        private Builder() {
        }

        /** The header holding the key (default {@value #DEFAULT_HEADER}); {@code Authorization: ApiKey} always works. */
        public Builder header(String name) {
            Objects.requireNonNull(name, "name");
            if (name.isBlank()) throw new IllegalArgumentException("header name must not be blank");
            this.header = name;
            return this;
        }

        /** A fixed table: SHA-256 hex of a key (either case) → tenant id. */
        public Builder keys(Map<String, String> hashToTenant) {
            Map<String, String> copy = new java.util.HashMap<>();
            hashToTenant.forEach((h, t) -> {
                if (!ApiKeyHash.isSha256Hex(h)) {
                    throw new IllegalArgumentException("keys are SHA-256 hex digests (64 hex digits), never the key itself");
                }
                copy.put(ApiKeyHash.normalize(h), Objects.requireNonNull(t, "tenant"));
            });
            this.fixed = copy;
            return this;
        }

        /**
         * A lookup by SHA-256 hex of the key (a database query, say), cached. It returns the tenant,
         * or empty for an unknown key; an exception is not cached and fails the request (500).
         */
        public Builder lookup(Function<String, Optional<String>> byHash) {
            this.lookup = Objects.requireNonNull(byHash, "byHash");
            return this;
        }

        /** The most lookup answers cached (default 10,000). */
        public Builder maximumSize(long size) {
            if (size <= 0) throw new IllegalArgumentException("maximum size must be > 0, was " + size);
            this.maximumSize = size;
            return this;
        }

        /** How long a found tenant is cached (default 5 minutes): a revoked key works this much longer. */
        public Builder expireAfter(Duration d) {
            this.expireAfter = positive(d, "expireAfter");
            return this;
        }

        /** How long an unknown key is cached (default 30 s): a new key works after at most this. */
        public Builder negativeExpireAfter(Duration d) {
            this.negativeExpireAfter = positive(d, "negativeExpireAfter");
            return this;
        }

        /** Time source of the cache in nanoseconds (tests); default the system ticker. */
        public Builder ticker(LongSupplier nanos) {
            this.ticker = Objects.requireNonNull(nanos, "nanos");
            return this;
        }

        /**
         * The resolver.
         *
         * @throws IllegalStateException if neither keys nor a lookup were given
         */
        public ApiKeyResolver build() {
            if (fixed.isEmpty() && lookup == null) throw new IllegalStateException("give keys(...) or lookup(...)");
            return new ApiKeyResolver(this);
        }

        private static Duration positive(Duration d, String what) {
            Objects.requireNonNull(d, what);
            if (d.isNegative() || d.isZero()) throw new IllegalArgumentException(what + " must be > 0, was " + d);
            return d;
        }
    }
}

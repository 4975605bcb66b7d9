package io.quotagate.plans;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * How tenants are found and which plan each one gets ({@code tenants:} in the plans file).
 *
 * @param resolvers      resolver specs in order, first match wins; empty means one header resolver
 *                       on {@code X-Tenant-Id}
 * @param defaultPlan    plan of a tenant without an assignment
 * @param unresolved     what to do with a request whose tenant cannot be found
 * @param unknown        what to do with a tenant id that no assignment knows
 * @param maxTracked     the most buckets kept in memory per table: assigned tenants have one table,
 *                       unknown tenants and anonymous clients another, each bounded by this
 * @param assignments    tenant id → plan name (including every tenant of {@code overrides})
 * @param trustedProxies proxies whose {@code X-Forwarded-For} is believed when keying anonymous clients
 * @param apiKeys        lower-case SHA-256 hex of an API key → tenant id
 * @param overrides      tenant id → limits that replace its plan's limits for that tenant only
 * @param guests         the pool every guest (unknown tenant, anonymous client) is charged in as well as
 *                       in its own bucket and slots
 */
public record TenantSettings(List<ResolverSpec> resolvers, String defaultPlan, Unresolved unresolved,
                             Unknown unknown, int maxTracked, Map<String, String> assignments,
                             List<AddressRange> trustedProxies, Map<String, String> apiKeys,
                             Map<String, List<Bandwidth>> overrides, GuestPool guests) {

    /** Default for {@link #maxTracked()}. */
    public static final int DEFAULT_MAX_TRACKED = 100_000;

    public TenantSettings {
        resolvers = List.copyOf(resolvers);
        Objects.requireNonNull(defaultPlan, "defaultPlan");
        Objects.requireNonNull(unresolved, "unresolved");
        Objects.requireNonNull(unknown, "unknown");
        assignments = Map.copyOf(assignments);
        trustedProxies = List.copyOf(trustedProxies);
        apiKeys = Map.copyOf(apiKeys);
        overrides = Map.copyOf(overrides);
        Objects.requireNonNull(guests, "guests");
        overrides.values().forEach(l -> {
            if (l.isEmpty()) throw new IllegalArgumentException("an override needs at least one limit");
        });
        if (maxTracked <= 0) throw new IllegalArgumentException("maxTracked must be > 0, was " + maxTracked);
    }

    /** Settings without a guest pool. */
    public TenantSettings(List<ResolverSpec> resolvers, String defaultPlan, Unresolved unresolved,
                          Unknown unknown, int maxTracked, Map<String, String> assignments,
                          List<AddressRange> trustedProxies, Map<String, String> apiKeys,
                          Map<String, List<Bandwidth>> overrides) {
        this(resolvers, defaultPlan, unresolved, unknown, maxTracked, assignments, trustedProxies, apiKeys, overrides,
                GuestPool.NONE);
    }

    /** Settings without trusted proxies, API keys, overrides or a guest pool. */
    public TenantSettings(List<ResolverSpec> resolvers, String defaultPlan, Unresolved unresolved,
                          Unknown unknown, int maxTracked, Map<String, String> assignments) {
        this(resolvers, defaultPlan, unresolved, unknown, maxTracked, assignments, List.of(), Map.of(), Map.of());
    }

    /** Policy for a request whose tenant cannot be resolved. */
    public enum Unresolved {
        /** Answer 401. */
        REJECT,
        /** Key the request by client address under the default plan. */
        ANONYMOUS
    }

    /** Policy for a resolved tenant id that no assignment knows. */
    public enum Unknown {
        /** Use the default plan. */
        DEFAULT,
        /** Answer 403. */
        REJECT
    }

    /**
     * One entry of {@code tenants.resolvers}.
     *
     * @param type    resolver type ({@code header}, {@code api-key}, {@code jwt-claim}...)
     * @param options the other keys of the entry, as text
     * @param origin  where the entry is written, so that a resolver refusing an option (a missing
     *                environment variable, an unreadable key file) can name file, line and field
     */
    public record ResolverSpec(String type, Map<String, String> options, Origin origin) {
        public ResolverSpec {
            Objects.requireNonNull(type, "type");
            options = Map.copyOf(options);
            Objects.requireNonNull(origin, "origin");
        }

        /** A spec written in code, with no file position. */
        public ResolverSpec(String type, Map<String, String> options) {
            this(type, options, new Origin("<code>", 0, "resolver", Map.of()));
        }

        /** The error for a bad value of {@code option}, naming the file, its line and the field. */
        public InvalidPlansException invalid(String option, String reason) {
            int line = origin.optionLines().getOrDefault(option, origin.line());
            return new InvalidPlansException(origin.file(), line, option.isEmpty() ? origin.field()
                    : origin.field() + "." + option, reason);
        }
    }

    /**
     * Where a resolver entry is written.
     *
     * @param file        the plans file
     * @param line        the entry's line
     * @param field       the entry's path ({@code tenants.resolvers[1]})
     * @param optionLines the line of each option
     */
    public record Origin(String file, int line, String field, Map<String, Integer> optionLines) {
        public Origin {
            Objects.requireNonNull(file, "file");
            Objects.requireNonNull(field, "field");
            optionLines = Map.copyOf(optionLines);
        }
    }
}

package io.quotagate.plans;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * How tenants are found and which plan each one gets ({@code tenants:} in the plans file).
 *
 * @param resolvers   resolver specs in order, first match wins; empty means one header resolver
 *                    on {@code X-Tenant-Id}
 * @param defaultPlan plan of a tenant without an assignment
 * @param unresolved  what to do with a request whose tenant cannot be found
 * @param unknown     what to do with a tenant id that no assignment knows
 * @param maxTracked  the most tenants whose buckets are kept in memory at once
 * @param assignments tenant id → plan name
 */
public record TenantSettings(List<ResolverSpec> resolvers, String defaultPlan, Unresolved unresolved,
                             Unknown unknown, int maxTracked, Map<String, String> assignments) {

    /** Default for {@link #maxTracked()}. */
    public static final int DEFAULT_MAX_TRACKED = 100_000;

    public TenantSettings {
        resolvers = List.copyOf(resolvers);
        Objects.requireNonNull(defaultPlan, "defaultPlan");
        Objects.requireNonNull(unresolved, "unresolved");
        Objects.requireNonNull(unknown, "unknown");
        assignments = Map.copyOf(assignments);
        if (maxTracked <= 0) throw new IllegalArgumentException("maxTracked must be > 0, was " + maxTracked);
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
     * @param type    resolver type ({@code header}, ...)
     * @param options the other keys of the entry, as text
     */
    public record ResolverSpec(String type, Map<String, String> options) {
        public ResolverSpec {
            Objects.requireNonNull(type, "type");
            options = Map.copyOf(options);
        }
    }
}

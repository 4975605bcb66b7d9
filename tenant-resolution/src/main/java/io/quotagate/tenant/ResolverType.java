package io.quotagate.tenant;

import io.quotagate.plans.InvalidPlansException;
import io.quotagate.plans.TenantSettings;
import io.quotagate.plans.TenantSettings.ResolverSpec;

import java.util.Objects;
import java.util.Set;
import java.util.function.UnaryOperator;

/**
 * One kind of entry in {@code tenants.resolvers} ({@code header}, {@code jwt-claim}...): the options it
 * takes, how their values are checked, and how the resolver is built from them. The plans file keeps
 * an entry as written; its type is the one place that knows what the entry means, so a new type needs
 * no change in the plans module. {@link ResolverTypes} lists the types and refuses an unknown type or
 * option before a type sees the entry.
 */
public interface ResolverType {

    /** The name written as {@code type:} in the plans file. */
    String name();

    /** The options an entry of this type may have, besides {@code type}. */
    Set<String> options();

    /**
     * Refuses a bad option value (wrong kind, bad format, a missing or contradictory option) without
     * reading any key material, so a file can be checked where its secrets are not available.
     *
     * @throws InvalidPlansException naming the file, line and field ({@link ResolverSpec#invalid})
     */
    void check(ResolverSpec spec, TenantSettings settings);

    /**
     * The resolver an entry describes, {@link #check checked} before. May read key material (an
     * environment variable, a key file).
     *
     * @throws InvalidPlansException    naming the file, line and field, if key material cannot be had
     * @throws IllegalArgumentException if a value is refused by the resolver itself (named by the caller)
     */
    TenantResolver create(ResolverSpec spec, Context context);

    /**
     * What a resolver may need besides its own entry.
     *
     * @param settings    the tenant settings the entry belongs to ({@code api-keys}...)
     * @param environment reads environment variables ({@code secret-env}); tests pass a map's {@code get}
     */
    record Context(TenantSettings settings, UnaryOperator<String> environment) {
        /** Checks the components. */
        public Context {
            Objects.requireNonNull(settings, "settings");
            Objects.requireNonNull(environment, "environment");
        }
    }
}

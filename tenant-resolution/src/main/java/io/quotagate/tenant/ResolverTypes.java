package io.quotagate.tenant;

import io.quotagate.plans.InvalidPlansException;
import io.quotagate.plans.TenantSettings;
import io.quotagate.plans.TenantSettings.ResolverSpec;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * The resolver types an entry of {@code tenants.resolvers} may name: {@link #standard()} has
 * {@code header}, {@code host}, {@code path}, {@code principal}, {@code attribute}, {@code api-key} and
 * {@code jwt-claim}; {@link #with} adds one of the application's own. Immutable.
 */
public final class ResolverTypes {
    private static final ResolverTypes STANDARD = new ResolverTypes(Map.of())
            .with(BuiltInResolverType.HEADER).with(BuiltInResolverType.HOST).with(BuiltInResolverType.PATH)
            .with(BuiltInResolverType.PRINCIPAL).with(BuiltInResolverType.ATTRIBUTE)
            .with(BuiltInResolverType.API_KEY).with(JwtClaimType.INSTANCE);

    private final Map<String, ResolverType> types;

    private ResolverTypes(Map<String, ResolverType> types) {
        this.types = types;
    }

    /** The built-in types. */
    public static ResolverTypes standard() {
        return STANDARD;
    }

    /**
     * These types and {@code type}.
     *
     * @throws IllegalArgumentException if a type of that name is already listed
     */
    public ResolverTypes with(ResolverType type) {
        if (types.containsKey(type.name())) {
            throw new IllegalArgumentException("a resolver type named '" + type.name() + "' is already listed");
        }
        Map<String, ResolverType> copy = new LinkedHashMap<>(types);
        copy.put(type.name(), type);
        return new ResolverTypes(Map.copyOf(copy));
    }

    /** The type of this name, if listed. */
    public Optional<ResolverType> type(String name) {
        return Optional.ofNullable(types.get(name));
    }

    /** The names of the listed types, sorted. */
    public Set<String> names() {
        return new TreeSet<>(types.keySet());
    }

    /**
     * Refuses an entry of an unknown type, with an option its type does not take, or with a bad value
     * ({@link ResolverType#check}); reads no key material.
     *
     * @return the entry's type
     * @throws InvalidPlansException naming the file, line and field
     */
    public ResolverType check(ResolverSpec spec, TenantSettings settings) {
        ResolverType type = types.get(spec.type());
        if (type == null) {
            throw spec.invalid("type", "unknown resolver type '" + spec.type() + "', expected one of " + names());
        }
        for (String option : spec.optionNames()) {
            if (!type.options().contains(option)) {
                throw spec.invalid(option, "unknown key for a " + type.name() + " resolver, expected one of "
                        + new TreeSet<>(type.options()));
            }
        }
        type.check(spec, settings);
        return type;
    }

    /**
     * The resolver an entry describes, {@linkplain #check checked} first.
     *
     * @throws InvalidPlansException naming the file, line and field of whatever is refused, including a
     *                               value the resolver itself refuses
     */
    public TenantResolver create(ResolverSpec spec, ResolverType.Context context) {
        ResolverType type = check(spec, context.settings());
        try {
            return type.create(spec, context);
        } catch (IllegalArgumentException | IllegalStateException e) {
            throw spec.invalid("", e.getMessage());
        }
    }
}

package io.quotagate.tenant;

import io.quotagate.plans.TenantSettings;
import io.quotagate.plans.TenantSettings.ResolverSpec;

import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * Builds the resolver chain a plans file describes in {@code tenants.resolvers}, each entry by its
 * {@link ResolverType} from {@link ResolverTypes}. An unknown type or option, a bad value, or key
 * material that cannot be had (an unset environment variable, an unreadable or malformed key file, a
 * short secret) fails here, at startup, with an {@link io.quotagate.plans.InvalidPlansException}
 * naming the file, line and field.
 */
public final class TenantResolvers {
    private TenantResolvers() {
    }

    /** The chain for these settings: first match wins; none configured means the {@code X-Tenant-Id} header. */
    public static TenantResolver fromSettings(TenantSettings settings) {
        return fromSettings(settings, System::getenv);
    }

    /**
     * As {@link #fromSettings(TenantSettings)}, reading environment variables ({@code secret-env})
     * through {@code environment} (tests pass a map's {@code get}).
     */
    public static TenantResolver fromSettings(TenantSettings settings, UnaryOperator<String> environment) {
        return fromSettings(settings, environment, ResolverTypes.standard());
    }

    /** As {@link #fromSettings(TenantSettings, UnaryOperator)}, with the types in {@code types}. */
    public static TenantResolver fromSettings(TenantSettings settings, UnaryOperator<String> environment,
                                              ResolverTypes types) {
        if (settings.resolvers().isEmpty()) return TenantResolver.header(TenantResolver.DEFAULT_HEADER);
        ResolverType.Context context = new ResolverType.Context(settings, environment);
        List<TenantResolver> chain = new ArrayList<>();
        for (ResolverSpec spec : settings.resolvers()) chain.add(types.create(spec, context));
        return TenantResolver.firstOf(chain);
    }

    /**
     * The chain naming the user inside a tenant ({@code tenants.users}), built by the same resolver
     * types as the tenant's; null if none is configured. What it finds is a user id, checked like a
     * tenant id by the caller.
     */
    public static TenantResolver usersFromSettings(TenantSettings settings, UnaryOperator<String> environment) {
        if (settings.users().isEmpty()) return null;
        ResolverType.Context context = new ResolverType.Context(settings, environment);
        List<TenantResolver> chain = new ArrayList<>();
        for (ResolverSpec spec : settings.users()) chain.add(ResolverTypes.standard().create(spec, context));
        return TenantResolver.firstOf(chain);
    }

    /**
     * Refuses the settings if a resolver entry has an unknown type or option or a bad value, reading no
     * key material: for plans whose resolvers are not built (the application supplies its own
     * resolver), so that a mistake in the file still fails at startup as it would otherwise.
     *
     * @throws io.quotagate.plans.InvalidPlansException naming the file, line and field
     */
    public static void check(TenantSettings settings) {
        for (ResolverSpec spec : settings.resolvers()) ResolverTypes.standard().check(spec, settings);
        for (ResolverSpec spec : settings.users()) ResolverTypes.standard().check(spec, settings);
    }
}

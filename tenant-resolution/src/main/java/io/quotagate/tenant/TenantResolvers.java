package io.quotagate.tenant;

import io.quotagate.plans.TenantSettings;
import io.quotagate.plans.TenantSettings.ResolverSpec;

import java.util.ArrayList;
import java.util.List;

/** Builds the resolver chain a plans file describes in {@code tenants.resolvers}. */
public final class TenantResolvers {
    private TenantResolvers() {
    }

    /** The chain for these settings: first match wins; none configured means the {@code X-Tenant-Id} header. */
    public static TenantResolver fromSettings(TenantSettings settings) {
        if (settings.resolvers().isEmpty()) return TenantResolver.header(TenantResolver.DEFAULT_HEADER);
        List<TenantResolver> chain = new ArrayList<>();
        for (ResolverSpec spec : settings.resolvers()) chain.add(fromSpec(spec));
        return TenantResolver.firstOf(chain);
    }

    private static TenantResolver fromSpec(ResolverSpec spec) {
        return switch (spec.type()) {
            case "header" -> TenantResolver.header(spec.options().getOrDefault("name", TenantResolver.DEFAULT_HEADER));
            default -> throw new IllegalArgumentException("unknown resolver type " + spec.type());
        };
    }
}

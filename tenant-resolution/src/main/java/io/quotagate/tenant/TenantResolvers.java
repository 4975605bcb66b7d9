package io.quotagate.tenant;

import io.quotagate.plans.PlansFile;
import io.quotagate.plans.TenantSettings;
import io.quotagate.plans.TenantSettings.ResolverSpec;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * Builds the resolver chain a plans file describes in {@code tenants.resolvers}. A resolver whose
 * key material cannot be had (an unset environment variable, an unreadable or malformed key file, a
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
        if (settings.resolvers().isEmpty()) return TenantResolver.header(TenantResolver.DEFAULT_HEADER);
        List<TenantResolver> chain = new ArrayList<>();
        for (ResolverSpec spec : settings.resolvers()) chain.add(fromSpec(spec, settings, environment));
        return TenantResolver.firstOf(chain);
    }

    private static TenantResolver fromSpec(ResolverSpec spec, TenantSettings settings, UnaryOperator<String> env) {
        Map<String, String> o = spec.options();
        try {
            return switch (spec.type()) {
                case "header" -> TenantResolver.header(o.getOrDefault("name", TenantResolver.DEFAULT_HEADER));
                case "host" -> TenantResolver.host(o.get("suffix"));
                case "path" -> TenantResolver.path(o.getOrDefault("prefix", TenantResolver.DEFAULT_PATH_PREFIX));
                case "principal" -> TenantResolver.principal();
                case "attribute" -> TenantResolver.attribute(o.get("name"));
                case "api-key" -> ApiKeyResolver.builder()
                        .header(o.getOrDefault("header", ApiKeyResolver.DEFAULT_HEADER))
                        .keys(settings.apiKeys())
                        .build();
                case "jwt-claim" -> jwt(spec, env);
                default -> throw spec.invalid("type", "unknown resolver type " + spec.type());
            };
        } catch (IllegalArgumentException | IllegalStateException e) {
            throw spec.invalid("", e.getMessage());
        }
    }

    private static TenantResolver jwt(ResolverSpec spec, UnaryOperator<String> env) {
        Map<String, String> o = spec.options();
        JwtClaimResolver.Builder b = JwtClaimResolver.builder().claim(o.getOrDefault("claim", JwtClaimResolver.DEFAULT_CLAIM));
        if (o.containsKey("header")) b.header(o.get("header"));
        if (o.containsKey("issuer")) b.issuer(o.get("issuer"));
        if (o.containsKey("audience")) b.audience(o.get("audience"));
        if ("false".equals(o.get("verify"))) return b.withoutVerification().build();
        try {
            if (o.containsKey("secret-env")) {
                String name = o.get("secret-env");
                String value = env.apply(name);
                if (value == null || value.isEmpty()) {
                    throw spec.invalid("secret-env", "environment variable " + name + " is not set");
                }
                b.hmacSecret(value.getBytes(StandardCharsets.UTF_8));
            } else if (o.containsKey("secret-file")) {
                b.hmacSecret(read(spec, "secret-file").strip().getBytes(StandardCharsets.UTF_8));
            } else if (o.containsKey("public-key-file")) {
                b.publicKeyPem(read(spec, "public-key-file"));
            } else if (o.containsKey("jwks-file")) {
                b.jwks(read(spec, "jwks-file"));
            }
        } catch (IllegalArgumentException e) {
            String option = PlansFile.JWT_KEY_SOURCES.stream()
                    .filter(o::containsKey).findFirst().orElse("");
            throw spec.invalid(option, e.getMessage());
        }
        return b.build();
    }

    /** A key file's text; a relative path is taken from the plans file's folder. */
    private static String read(ResolverSpec spec, String option) {
        Path path = Path.of(spec.options().get(option));
        String file = spec.origin().file();
        if (!path.isAbsolute() && !file.startsWith(PlansFile.CLASSPATH_PREFIX) && !file.startsWith("<")) {
            path = Path.of(file).toAbsolutePath().resolveSibling(path);
        }
        try {
            return Files.readString(path, StandardCharsets.UTF_8);
        } catch (IOException | RuntimeException e) {
            throw spec.invalid(option, "cannot read " + path + ": " + e.getClass().getSimpleName()
                    + (e.getMessage() == null ? "" : " " + e.getMessage()));
        }
    }
}

package io.quotagate.tenant;

import io.quotagate.plans.PlansFile;
import io.quotagate.plans.TenantSettings;
import io.quotagate.plans.TenantSettings.ResolverSpec;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

/**
 * {@code { type: jwt-claim, claim: tid, secret-env: JWT_SECRET }}: a {@link JwtClaimResolver} whose key
 * comes from exactly one of {@link #KEY_SOURCES}, or none with {@code verify: false}.
 */
final class JwtClaimType implements ResolverType {
    static final JwtClaimType INSTANCE = new JwtClaimType();

    /** The options that give the verification key, in the order tried; a verifying resolver has exactly one. */
    static final List<String> KEY_SOURCES = List.of("secret-env", "secret-file", "public-key-file", "jwks-file");
    private static final List<String> TEXT_OPTIONS = List.of("claim", "header", "issuer", "audience");
    private static final Set<String> OPTIONS = Set.of("claim", "header", "secret-env", "secret-file", "public-key-file",
            "jwks-file", "verify", "issuer", "audience");

    private JwtClaimType() {
    }

    @Override
    public String name() {
        return "jwt-claim";
    }

    @Override
    public Set<String> options() {
        return OPTIONS;
    }

    @Override
    public void check(ResolverSpec spec, TenantSettings settings) {
        for (String option : TEXT_OPTIONS) spec.string(option);
        List<String> sources = KEY_SOURCES.stream().filter(o -> spec.string(o).isPresent()).toList();
        boolean verify = spec.bool("verify").orElse(true);
        if (verify && sources.size() != 1) {
            throw spec.invalid(sources.size() > 1 ? sources.get(1) : "", "give exactly one of " + KEY_SOURCES
                    + " (or verify: false when an upstream filter already verified the token)");
        }
        if (!verify && !sources.isEmpty()) throw spec.invalid(sources.get(0), "verify: false takes no key");
        BuiltInResolverType.matching(spec, "header", BuiltInResolverType.HEADER_NAME);
    }

    @Override
    public TenantResolver create(ResolverSpec spec, Context context) {
        JwtClaimResolver.Builder b = JwtClaimResolver.builder()
                .claim(spec.string("claim").orElse(JwtClaimResolver.DEFAULT_CLAIM));
        spec.string("header").ifPresent(b::header);
        spec.string("issuer").ifPresent(b::issuer);
        spec.string("audience").ifPresent(b::audience);
        if (!spec.bool("verify").orElse(true)) return b.withoutVerification().build();
        String source = KEY_SOURCES.stream().filter(o -> spec.string(o).isPresent()).findFirst().orElseThrow();
        try {
            switch (source) {
                case "secret-env" -> {
                    String name = spec.string(source).orElseThrow();
                    String value = context.environment().apply(name);
                    if (value == null || value.isEmpty()) {
                        throw spec.invalid(source, "environment variable " + name + " is not set");
                    }
                    b.hmacSecret(value.getBytes(StandardCharsets.UTF_8));
                }
                case "secret-file" -> b.hmacSecret(read(spec, source).strip().getBytes(StandardCharsets.UTF_8));
                case "public-key-file" -> b.publicKeyPem(read(spec, source));
                default -> b.jwks(read(spec, source));
            }
        } catch (IllegalArgumentException e) {
            throw spec.invalid(source, e.getMessage());
        }
        return b.build();
    }

    /** A key file's text; a relative path is taken from the plans file's folder. */
    private static String read(ResolverSpec spec, String option) {
        Path path = Path.of(spec.string(option).orElseThrow());
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

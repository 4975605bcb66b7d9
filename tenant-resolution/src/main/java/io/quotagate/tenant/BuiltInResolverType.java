package io.quotagate.tenant;

import io.quotagate.plans.TenantSettings;
import io.quotagate.plans.TenantSettings.ResolverSpec;

import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/** The resolver types with one option or none; {@link JwtClaimType} is the one with many. */
abstract class BuiltInResolverType implements ResolverType {
    /** {@code { type: header, name: X-Tenant-Id }}. */
    static final ResolverType HEADER = new BuiltInResolverType("header", "name") {
        @Override
        public void check(ResolverSpec spec, TenantSettings settings) {
            matching(spec, "name", HEADER_NAME);
        }

        @Override
        public TenantResolver create(ResolverSpec spec, Context context) {
            return TenantResolver.header(spec.string("name").orElse(TenantResolver.DEFAULT_HEADER));
        }
    };

    /** {@code { type: host, suffix: .api.example.com }}; the suffix is compared in lower case. */
    static final ResolverType HOST = new BuiltInResolverType("host", "suffix") {
        @Override
        public void check(ResolverSpec spec, TenantSettings settings) {
            suffix(spec);
        }

        @Override
        public TenantResolver create(ResolverSpec spec, Context context) {
            return TenantResolver.host(suffix(spec));
        }

        private String suffix(ResolverSpec spec) {
            String suffix = spec.string("suffix")
                    .orElseThrow(() -> spec.invalid("suffix", "required (e.g. .api.example.com)"))
                    .toLowerCase(Locale.ROOT);
            if (!HOST_SUFFIX.matcher(suffix).matches()) throw mismatch(spec, "suffix", HOST_SUFFIX, suffix);
            return suffix;
        }
    };

    /** {@code { type: path, prefix: /t/ }}. */
    static final ResolverType PATH = new BuiltInResolverType("path", "prefix") {
        @Override
        public void check(ResolverSpec spec, TenantSettings settings) {
            matching(spec, "prefix", PATH_PREFIX);
        }

        @Override
        public TenantResolver create(ResolverSpec spec, Context context) {
            return TenantResolver.path(spec.string("prefix").orElse(TenantResolver.DEFAULT_PATH_PREFIX));
        }
    };

    /** {@code { type: principal }}. */
    static final ResolverType PRINCIPAL = new BuiltInResolverType("principal") {
        @Override
        public void check(ResolverSpec spec, TenantSettings settings) {
            // no options
        }

        @Override
        public TenantResolver create(ResolverSpec spec, Context context) {
            return TenantResolver.principal();
        }
    };

    /** {@code { type: attribute, name: tenant }}. */
    static final ResolverType ATTRIBUTE = new BuiltInResolverType("attribute", "name") {
        @Override
        public void check(ResolverSpec spec, TenantSettings settings) {
            name(spec);
        }

        @Override
        public TenantResolver create(ResolverSpec spec, Context context) {
            return TenantResolver.attribute(name(spec));
        }

        private String name(ResolverSpec spec) {
            return spec.string("name").orElseThrow(() -> spec.invalid("name", "required"));
        }
    };

    /** {@code { type: api-key, header: X-Api-Key }}, keys from {@code tenants.api-keys}. */
    static final ResolverType API_KEY = new BuiltInResolverType("api-key", "header") {
        @Override
        public void check(ResolverSpec spec, TenantSettings settings) {
            matching(spec, "header", HEADER_NAME);
            if (settings.apiKeys().isEmpty()) {
                throw spec.invalid("type", "an api-key resolver needs tenants.api-keys (SHA-256 of each key → tenant);"
                        + " to look keys up elsewhere, build the resolver in code");
            }
        }

        @Override
        public TenantResolver create(ResolverSpec spec, Context context) {
            return ApiKeyResolver.builder()
                    .header(spec.string("header").orElse(ApiKeyResolver.DEFAULT_HEADER))
                    .keys(context.settings().apiKeys())
                    .build();
        }
    };

    /** An HTTP header name (RFC 9110 token), short enough for a configuration value. */
    static final Pattern HEADER_NAME = Pattern.compile("[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}");
    private static final Pattern HOST_SUFFIX = Pattern.compile("(\\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+");
    private static final Pattern PATH_PREFIX = Pattern.compile("/([A-Za-z0-9._~-]+/)*");

    private final String name;
    private final Set<String> options;

    private BuiltInResolverType(String name, String... options) {
        this.name = name;
        this.options = Set.of(options);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Set<String> options() {
        return options;
    }

    @Override
    public String toString() {
        return name;
    }

    /** The option, if written, refused unless it matches {@code pattern}. */
    static Optional<String> matching(ResolverSpec spec, String option, Pattern pattern) {
        Optional<String> value = spec.string(option);
        if (value.isPresent() && !pattern.matcher(value.get()).matches()) {
            throw mismatch(spec, option, pattern, value.get());
        }
        return value;
    }

    private static RuntimeException mismatch(ResolverSpec spec, String option, Pattern pattern, String value) {
        return spec.invalid(option, "must match " + pattern.pattern() + ", was '" + value + "'");
    }
}

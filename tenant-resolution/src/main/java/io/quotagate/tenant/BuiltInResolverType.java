package io.quotagate.tenant;

import io.quotagate.plans.TenantSettings;
import io.quotagate.plans.TenantSettings.ResolverSpec;

import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Pattern;

/** The resolver types with one option or none; {@link JwtClaimType} is the one with many. */
abstract class BuiltInResolverType implements ResolverType {
    /** An HTTP header name (RFC 9110 token), short enough for a configuration value. */
    static final Pattern HEADER_NAME = Pattern.compile("[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}");
    private static final Pattern HOST_SUFFIX = Pattern.compile("(\\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+");
    /** Path segments, none of them {@code .} or {@code ..}: a prefix names the path as the container dispatches it. */
    private static final Pattern PATH_PREFIX = Pattern.compile("/((?!\\.\\.?/)[A-Za-z0-9._~-]+/)*");

    /** {@code { type: header, name: X-Tenant-Id }}. */
    static final ResolverType HEADER = oneOptional("header", "name", HEADER_NAME, TenantResolver.DEFAULT_HEADER,
            TenantResolver::header);

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
            String suffix = required(spec, "suffix", "required (e.g. .api.example.com)").toLowerCase(Locale.ROOT);
            if (!HOST_SUFFIX.matcher(suffix).matches()) throw mismatch(spec, "suffix", HOST_SUFFIX, suffix);
            return suffix;
        }
    };

    /** {@code { type: path, prefix: /t/ }}. */
    static final ResolverType PATH = oneOptional("path", "prefix", PATH_PREFIX, TenantResolver.DEFAULT_PATH_PREFIX,
            TenantResolver::path);

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
            required(spec, "name", "required");
        }

        @Override
        public TenantResolver create(ResolverSpec spec, Context context) {
            return TenantResolver.attribute(required(spec, "name", "required"));
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

    /** A type whose one option may be left out for {@code absent}, and must match {@code pattern} if written. */
    private static ResolverType oneOptional(String name, String option, Pattern pattern, String absent,
                                            Function<String, TenantResolver> factory) {
        return new BuiltInResolverType(name, option) {
            @Override
            public void check(ResolverSpec spec, TenantSettings settings) {
                matching(spec, option, pattern);
            }

            @Override
            public TenantResolver create(ResolverSpec spec, Context context) {
                return factory.apply(spec.string(option).orElse(absent));
            }
        };
    }

    /** The option, if written, refused unless it matches {@code pattern}. */
    static Optional<String> matching(ResolverSpec spec, String option, Pattern pattern) {
        Optional<String> value = spec.string(option);
        if (value.isPresent() && !pattern.matcher(value.get()).matches()) {
            throw mismatch(spec, option, pattern, value.get());
        }
        return value;
    }

    /** The option, refused with {@code reason} if it is not written. */
    static String required(ResolverSpec spec, String option, String reason) {
        return spec.string(option).orElseThrow(() -> spec.invalid(option, reason));
    }

    private static RuntimeException mismatch(ResolverSpec spec, String option, Pattern pattern, String value) {
        return spec.invalid(option, "must match " + pattern.pattern() + ", was '" + value + "'");
    }
}

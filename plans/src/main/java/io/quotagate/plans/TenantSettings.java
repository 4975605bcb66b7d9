package io.quotagate.plans;

import io.quotagate.plans.YamlNode.Mapping;
import io.quotagate.plans.YamlNode.Scalar;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * How tenants are found and which plan each one gets ({@code tenants:} in the plans file). Immutable;
 * built with {@link #builder()} or {@link #from(TenantSettings)}, so a new setting never breaks a caller.
 */
public final class TenantSettings {

    /** Default for {@link #maxTracked()}. */
    public static final int DEFAULT_MAX_TRACKED = 100_000;
    /** Default for {@link #directoryTimeout()}: 250 ms. */
    public static final Duration DEFAULT_DIRECTORY_TIMEOUT = Duration.ofMillis(250);
    /** The longest {@link #directoryTimeout()}: 10 s (a request waits that long at most for a lookup). */
    public static final Duration MAX_DIRECTORY_TIMEOUT = Duration.ofSeconds(10);
    /** Default for {@link #directoryLookups()}. */
    public static final int DEFAULT_DIRECTORY_LOOKUPS = 8;
    /** The most {@link #directoryLookups()}: each is a thread of the directory's own. */
    public static final int MAX_DIRECTORY_LOOKUPS = 256;

    private final List<ResolverSpec> resolvers;
    private final List<ResolverSpec> users;
    private final String defaultPlan;
    private final Unresolved unresolved;
    private final Unknown unknown;
    private final int maxTracked;
    private final Map<String, String> assignments;
    private final List<AddressRange> trustedProxies;
    private final Map<String, String> apiKeys;
    private final Map<String, List<Bandwidth>> overrides;
    private final Map<String, List<CalendarQuota>> overrideQuotas;
    private final GuestPool guests;
    private final Duration directoryTimeout;
    private final int directoryLookups;
    private final DirectoryFailure directoryFailure;

    private TenantSettings(Builder b) {
        if (b.defaultPlan == null) throw new IllegalArgumentException("a default plan is required");
        this.resolvers = List.copyOf(b.resolvers);
        this.users = List.copyOf(b.users);
        this.defaultPlan = b.defaultPlan;
        this.unresolved = b.unresolved;
        this.unknown = b.unknown;
        this.maxTracked = b.maxTracked;
        this.assignments = Map.copyOf(b.assignments);
        this.trustedProxies = List.copyOf(b.trustedProxies);
        this.apiKeys = Map.copyOf(b.apiKeys);
        Map<String, List<Bandwidth>> o = new LinkedHashMap<>();
        b.overrides.forEach((tenant, limits) -> {
            if (limits.isEmpty()) throw new IllegalArgumentException("an override needs at least one limit");
            o.put(tenant, List.copyOf(limits));
        });
        this.overrides = Map.copyOf(o);
        Map<String, List<CalendarQuota>> q = new LinkedHashMap<>();
        b.overrideQuotas.forEach((tenant, quotas) -> {
            if (!assignments.containsKey(tenant)) {
                throw new IllegalArgumentException("tenant " + tenant + " has quotas of its own but no plan");
            }
            q.put(tenant, List.copyOf(quotas));
        });
        this.overrideQuotas = Map.copyOf(q);
        this.guests = b.guests;
        this.directoryTimeout = b.directoryTimeout;
        this.directoryLookups = b.directoryLookups;
        this.directoryFailure = b.directoryFailure;
    }

    /**
     * A builder with the file's defaults: the {@code X-Tenant-Id} header, {@link Unresolved#REJECT},
     * {@link Unknown#DEFAULT}, {@link #DEFAULT_MAX_TRACKED}, no guest pool. The default plan is required.
     */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder starting from every setting of {@code prototype}. */
    public static Builder from(TenantSettings prototype) {
        return new Builder().resolvers(prototype.resolvers).users(prototype.users).defaultPlan(prototype.defaultPlan)
                .unresolved(prototype.unresolved).unknown(prototype.unknown).maxTracked(prototype.maxTracked)
                .assignments(prototype.assignments).trustedProxies(prototype.trustedProxies)
                .apiKeys(prototype.apiKeys).overrides(prototype.overrides).overrideQuotas(prototype.overrideQuotas)
                .guests(prototype.guests).directoryTimeout(prototype.directoryTimeout)
                .directoryLookups(prototype.directoryLookups).directoryFailure(prototype.directoryFailure);
    }

    /** Resolver specs in order, first match wins; empty means one header resolver on {@code X-Tenant-Id}. */
    public List<ResolverSpec> resolvers() {
        return resolvers;
    }

    /**
     * Resolver specs naming the user inside a tenant ({@code tenants.users}), in order, first match wins;
     * empty (the default) for none. Read only for a tenant whose plan has {@code per-user} limits.
     */
    public List<ResolverSpec> users() {
        return users;
    }

    /** The plan of a tenant without an assignment. */
    public String defaultPlan() {
        return defaultPlan;
    }

    /** What to do with a request whose tenant cannot be found. */
    public Unresolved unresolved() {
        return unresolved;
    }

    /** What to do with a tenant id that no assignment knows. */
    public Unknown unknown() {
        return unknown;
    }

    /**
     * The most buckets kept in memory per table: assigned tenants have one table, unknown tenants and
     * anonymous clients another, each bounded by this.
     */
    public int maxTracked() {
        return maxTracked;
    }

    /** Tenant id → plan name (including every tenant of {@link #overrides()}). */
    public Map<String, String> assignments() {
        return assignments;
    }

    /** Proxies whose {@code X-Forwarded-For} is believed when keying anonymous clients. */
    public List<AddressRange> trustedProxies() {
        return trustedProxies;
    }

    /** Lower-case SHA-256 hex of an API key → tenant id. */
    public Map<String, String> apiKeys() {
        return apiKeys;
    }

    /** Tenant id → limits that replace its plan's limits for that tenant only. */
    public Map<String, List<Bandwidth>> overrides() {
        return overrides;
    }

    /**
     * Tenant id → its own calendar quotas, replacing its plan's ({@code tenants.overrides.<t>.quotas});
     * an empty list: none at all. Every such tenant is assigned.
     */
    public Map<String, List<CalendarQuota>> overrideQuotas() {
        return overrideQuotas;
    }

    /**
     * The pool every guest (unknown tenant, anonymous client) is charged in as well as in its own
     * bucket and slots.
     */
    public GuestPool guests() {
        return guests;
    }

    /**
     * How long a request waits at most for the application's tenant directory to place a tenant its
     * cache does not know ({@code tenants.directory.timeout}); past it, the request gets
     * {@link #directoryFailure()}'s answer and the lookup goes on in the background. Read when the
     * filter is built.
     */
    public Duration directoryTimeout() {
        return directoryTimeout;
    }

    /**
     * The most lookups of the application's tenant directory running at once ({@code
     * tenants.directory.max-lookups}), each on a thread of the directory's own; a tenant the cache does
     * not know, arriving while that many run, gets {@link #directoryFailure()}'s answer at once. Read when
     * the filter is built.
     */
    public int directoryLookups() {
        return directoryLookups;
    }

    /**
     * The answer for a tenant that the application's tenant directory cannot place now (it failed, or did
     * not answer within {@link #directoryTimeout()}) and that its cache does not know
     * ({@code tenants.directory.unavailable}).
     */
    public DirectoryFailure directoryFailure() {
        return directoryFailure;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TenantSettings t && resolvers.equals(t.resolvers) && users.equals(t.users) && defaultPlan.equals(t.defaultPlan)
                && unresolved == t.unresolved && unknown == t.unknown && maxTracked == t.maxTracked
                && assignments.equals(t.assignments) && trustedProxies.equals(t.trustedProxies)
                && apiKeys.equals(t.apiKeys) && overrides.equals(t.overrides) && overrideQuotas.equals(t.overrideQuotas)
                && guests.equals(t.guests) && directoryTimeout.equals(t.directoryTimeout)
                && directoryLookups == t.directoryLookups && directoryFailure == t.directoryFailure;
    }

    @Override
    public int hashCode() {
        return Objects.hash(resolvers, users, defaultPlan, unresolved, unknown, maxTracked, assignments, trustedProxies,
                apiKeys, overrides, overrideQuotas, guests, directoryTimeout, directoryLookups, directoryFailure);
    }

    @Override
    public String toString() {
        // the API key hashes stay out of logs: a hash of a short key can be reversed
        return "TenantSettings[resolvers=" + resolvers + ", defaultPlan=" + defaultPlan + ", unresolved=" + unresolved
                + ", unknown=" + unknown + ", maxTracked=" + maxTracked + ", assignments=" + assignments
                + ", trustedProxies=" + trustedProxies + ", apiKeys=" + apiKeys.size() + " hashes, overrides="
                + overrides + ", guests=" + guests + ", directoryTimeout=" + directoryTimeout + ", directoryLookups="
                + directoryLookups + ", directoryFailure=" + directoryFailure + "]";
    }

    /** Builds {@link TenantSettings}; each setting is checked as it is given. */
    public static final class Builder {
        private List<ResolverSpec> resolvers = List.of();
        private List<ResolverSpec> users = List.of();
        private String defaultPlan;
        private Unresolved unresolved = Unresolved.REJECT;
        private Unknown unknown = Unknown.DEFAULT;
        private int maxTracked = DEFAULT_MAX_TRACKED;
        private Map<String, String> assignments = Map.of();
        private List<AddressRange> trustedProxies = List.of();
        private Map<String, String> apiKeys = Map.of();
        private Map<String, List<Bandwidth>> overrides = Map.of();
        private Map<String, List<CalendarQuota>> overrideQuotas = Map.of();
        private GuestPool guests = GuestPool.NONE;
        private Duration directoryTimeout = DEFAULT_DIRECTORY_TIMEOUT;
        private int directoryLookups = DEFAULT_DIRECTORY_LOOKUPS;
        private DirectoryFailure directoryFailure = DirectoryFailure.DEFAULT;

        private Builder() {
        }

        /** The resolver entries in order, first match wins (default: none, meaning the {@code X-Tenant-Id} header). */
        public Builder resolvers(List<ResolverSpec> resolvers) {
            this.resolvers = List.copyOf(resolvers);
            return this;
        }

        /** The resolver entries naming the user inside a tenant, first match wins (default: none). */
        public Builder users(List<ResolverSpec> users) {
            this.users = List.copyOf(users);
            return this;
        }

        /** The plan of a tenant without an assignment; required. */
        public Builder defaultPlan(String defaultPlan) {
            this.defaultPlan = Objects.requireNonNull(defaultPlan, "defaultPlan");
            return this;
        }

        /** What to do with a request whose tenant cannot be found (default {@link Unresolved#REJECT}). */
        public Builder unresolved(Unresolved unresolved) {
            this.unresolved = Objects.requireNonNull(unresolved, "unresolved");
            return this;
        }

        /** What to do with a tenant id no assignment knows (default {@link Unknown#DEFAULT}). */
        public Builder unknown(Unknown unknown) {
            this.unknown = Objects.requireNonNull(unknown, "unknown");
            return this;
        }

        /** The most buckets kept in memory per table, &gt; 0 (default {@link #DEFAULT_MAX_TRACKED}). */
        public Builder maxTracked(int maxTracked) {
            if (maxTracked <= 0) throw new IllegalArgumentException("maxTracked must be > 0, was " + maxTracked);
            this.maxTracked = maxTracked;
            return this;
        }

        /** Tenant id → plan name. */
        public Builder assignments(Map<String, String> assignments) {
            this.assignments = Map.copyOf(assignments);
            return this;
        }

        /** Proxies whose {@code X-Forwarded-For} is believed when keying anonymous clients. */
        public Builder trustedProxies(List<AddressRange> trustedProxies) {
            this.trustedProxies = List.copyOf(trustedProxies);
            return this;
        }

        /** Lower-case SHA-256 hex of an API key → tenant id. */
        public Builder apiKeys(Map<String, String> apiKeys) {
            this.apiKeys = Map.copyOf(apiKeys);
            return this;
        }

        /** Tenant → its own calendar quotas, replacing its plan's (an empty list: none); each tenant assigned. */
        public Builder overrideQuotas(Map<String, List<CalendarQuota>> quotas) {
            this.overrideQuotas = Map.copyOf(quotas);
            return this;
        }

        /** Tenant id → limits that replace its plan's limits for that tenant only, at least one each. */
        public Builder overrides(Map<String, List<Bandwidth>> overrides) {
            this.overrides = Map.copyOf(overrides);
            return this;
        }

        /** The pool every guest is charged in as well (default {@link GuestPool#NONE}). */
        public Builder guests(GuestPool guests) {
            this.guests = Objects.requireNonNull(guests, "guests");
            return this;
        }

        /**
         * The longest wait of a request for a lookup of the application's tenant directory, &gt; 0 and at
         * most {@link #MAX_DIRECTORY_TIMEOUT} (default {@link #DEFAULT_DIRECTORY_TIMEOUT}).
         */
        public Builder directoryTimeout(Duration timeout) {
            Objects.requireNonNull(timeout, "directoryTimeout");
            if (timeout.isNegative() || timeout.isZero() || timeout.compareTo(MAX_DIRECTORY_TIMEOUT) > 0) {
                throw new IllegalArgumentException("directoryTimeout must be > 0 and <= " + MAX_DIRECTORY_TIMEOUT
                        + ", was " + timeout);
            }
            this.directoryTimeout = timeout;
            return this;
        }

        /**
         * The most lookups of the application's tenant directory at once, from 1 to
         * {@link #MAX_DIRECTORY_LOOKUPS} (default {@link #DEFAULT_DIRECTORY_LOOKUPS}).
         */
        public Builder directoryLookups(int lookups) {
            if (lookups <= 0 || lookups > MAX_DIRECTORY_LOOKUPS) {
                throw new IllegalArgumentException("directoryLookups must be > 0 and <= " + MAX_DIRECTORY_LOOKUPS
                        + ", was " + lookups);
            }
            this.directoryLookups = lookups;
            return this;
        }

        /** The answer for a tenant the directory cannot place now (default {@link DirectoryFailure#DEFAULT}). */
        public Builder directoryFailure(DirectoryFailure failure) {
            this.directoryFailure = Objects.requireNonNull(failure, "directoryFailure");
            return this;
        }

        /**
         * The settings.
         *
         * @throws IllegalArgumentException if no default plan was given or an override has no limit
         */
        public TenantSettings build() {
            return new TenantSettings(this);
        }
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
     * The answer for a tenant that the application's tenant directory cannot place now (it fails, or does
     * not answer within {@link #directoryTimeout()}) and that its cache does not know; a tenant it does
     * know is answered from the cache, however old.
     */
    public enum DirectoryFailure {
        /**
         * The default plan, in the guest table, as for an unknown tenant under {@link Unknown#DEFAULT}
         * (also under {@link Unknown#REJECT}: the tenant may well be a customer): it shares the guest pool.
         */
        DEFAULT,
        /** Answer 503 {@code directory_unavailable} with {@code Retry-After}. */
        REFUSE
    }

    /**
     * One entry of {@code tenants.resolvers}, kept as written: its type and its options with their
     * lines. Which options a type takes, and what they must hold, is the resolver type's knowledge
     * (tenant-resolution's registry), not the plans file's; this only reads an option as the type asks
     * for it, with the same file:line:field errors as every other field.
     */
    public static final class ResolverSpec {
        private final String type;
        private final Map<String, YamlNode> options;
        private final Origin origin;
        private final FieldCursor in;

        /** An entry of a plans file; {@code entry} holds {@code type} and the options. */
        ResolverSpec(String type, Mapping entry, String file, String field) {
            this.type = type;
            Map<String, YamlNode> o = new LinkedHashMap<>(entry.entries());
            o.remove("type");
            this.options = o;
            Map<String, Integer> lines = new LinkedHashMap<>();
            entry.entries().forEach((k, v) -> lines.put(k, v.line()));
            this.origin = new Origin(file, entry.line(), field, lines);
            this.in = new FieldCursor(file);
        }

        private ResolverSpec(String type, Map<String, YamlNode> options, Origin origin) {
            this.type = type;
            this.options = options;
            this.origin = origin;
            this.in = new FieldCursor(origin.file());
        }

        /**
         * A spec written in code, with no file position. Option values are strings, or booleans where
         * the type takes one ({@code verify}).
         */
        public static ResolverSpec of(String type, Map<String, ?> options) {
            Objects.requireNonNull(type, "type");
            Map<String, YamlNode> o = new LinkedHashMap<>();
            options.forEach((k, v) -> o.put(k, new Scalar(String.valueOf(v),
                    v instanceof Boolean ? Scalar.Type.BOOLEAN : v instanceof Number ? Scalar.Type.INT
                            : Scalar.Type.STRING, 0)));
            return new ResolverSpec(type, o, new Origin("<code>", 0, "resolver", Map.of()));
        }

        /** The resolver type ({@code header}, {@code api-key}, {@code jwt-claim}...). */
        public String type() {
            return type;
        }

        /** The names of the options written, in file order ({@code type} is not one). */
        public Set<String> optionNames() {
            return new LinkedHashSet<>(options.keySet());
        }

        /** Where the entry is written. */
        public Origin origin() {
            return origin;
        }

        /**
         * The option as a non-empty string, if written.
         *
         * @throws InvalidPlansException naming file, line and field, if it is written but not a string
         */
        public Optional<String> string(String option) {
            YamlNode n = options.get(option);
            return n == null ? Optional.empty() : Optional.of(in.string(n, origin.field() + "." + option));
        }

        /**
         * The option as {@code true} or {@code false}, if written.
         *
         * @throws InvalidPlansException naming file, line and field, if it is written but not a boolean
         */
        public Optional<Boolean> bool(String option) {
            YamlNode n = options.get(option);
            return n == null ? Optional.empty() : Optional.of(in.bool(n, origin.field() + "." + option));
        }

        /**
         * The error for a bad value of {@code option} (empty: the entry as a whole), naming the file,
         * the line and the field.
         */
        public InvalidPlansException invalid(String option, String reason) {
            int line = origin.optionLines().getOrDefault(option, origin.line());
            return new InvalidPlansException(origin.file(), line, option.isEmpty() ? origin.field()
                    : origin.field() + "." + option, reason);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof ResolverSpec r && type.equals(r.type) && options.equals(r.options)
                    && origin.equals(r.origin);
        }

        @Override
        public int hashCode() {
            return Objects.hash(type, options, origin);
        }

        @Override
        public String toString() {
            return "ResolverSpec[type=" + type + ", options=" + options.keySet() + ", at " + origin.file() + ":"
                    + origin.line() + "]";
        }
    }

    /**
     * Where a resolver entry is written.
     *
     * @param file        the plans file
     * @param line        the entry's line
     * @param field       the entry's path ({@code tenants.resolvers[1]})
     * @param optionLines the line of each option (and of {@code type})
     */
    public record Origin(String file, int line, String field, Map<String, Integer> optionLines) {
        /** Checks and copies the components. */
        public Origin {
            Objects.requireNonNull(file, "file");
            Objects.requireNonNull(field, "field");
            optionLines = Map.copyOf(optionLines);
        }
    }
}

package io.quotagate.plans;

import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Which requests a rule covers and what they cost. Immutable; built with {@link #builder(String)}.
 *
 * <p>Rules are tried in file order; the first whose method and path match wins. Paths are
 * {@link PathPattern}s: {@code /health}, {@code /items/*} (one segment), {@code /v1/**} (any rest).
 * A rule for {@code GET} also covers {@code HEAD}: a servlet answers HEAD by running its GET
 * ({@code HttpServlet.doHead}), so a HEAD must cost what the GET costs and take its concurrency slot.
 */
public final class RouteRule {
    private final String name;
    private final Set<String> methods;
    private final List<PathPattern> paths;
    private final long cost;
    private final Optional<String> group;
    private final boolean limited;
    private final List<ScopedLimit> limits;
    private final Optional<Throttle> throttle;

    private RouteRule(Builder b) {
        this.name = b.name;
        // interned: a container's method strings are usually the interned constants, and the route
        // table's lookup of every request's method then matches them by identity before comparing
        Set<String> m = new HashSet<>();
        for (String method : b.methods) m.add(method.intern());
        if (m.contains("GET")) m.add("HEAD");
        this.methods = Set.copyOf(m);
        this.paths = List.copyOf(b.paths);
        this.cost = b.cost;
        this.group = b.group;
        this.limited = b.limited;
        this.limits = List.copyOf(b.limits);
        this.throttle = b.throttle;
        if (!limited && (!limits.isEmpty() || throttle.isPresent())) {
            if (throttle.isPresent()) throw new IllegalArgumentException("route " + name + " is not limited: it takes no throttle");
            throw new IllegalArgumentException("route " + name + " is not limited: it takes no limits");
        }
        java.util.Set<ScopedLimit.Scope> scopes = java.util.EnumSet.noneOf(ScopedLimit.Scope.class);
        for (ScopedLimit l : limits) {
            if (!scopes.add(l.per())) throw new IllegalArgumentException("route " + name + ": two limits per " + l.per());
        }
        if (paths.isEmpty()) throw new IllegalArgumentException("route " + name + " needs at least one path");
        if (!limited && (cost != 1 || group.isPresent())) {
            throw new IllegalArgumentException("route " + name + " is not limited: it takes no cost or group");
        }
    }

    /** A builder of a rule of this name: every method, cost 1, no group, limited; paths still to give. */
    public static Builder builder(String name) {
        return new Builder(name);
    }

    /** A builder starting from every setting of {@code prototype} (e.g. to give it other {@link #limits()}). */
    public static Builder from(RouteRule prototype) {
        Builder b = new Builder(prototype.name).methods(prototype.methods).paths(prototype.paths)
                .limited(prototype.limited).limits(prototype.limits).throttle(prototype.throttle);
        b.cost = prototype.cost;
        b.group = prototype.group;
        return b;
    }

    /** Unique name, used in metrics and logs. */
    public String name() {
        return name;
    }

    /** HTTP methods matched (upper case); empty means every method; {@code GET} implies {@code HEAD}. */
    public Set<String> methods() {
        return methods;
    }

    /** Path patterns, at least one. */
    public List<PathPattern> paths() {
        return paths;
    }

    /** Units taken from the tenant's and the global bucket per request, &gt; 0. */
    public long cost() {
        return cost;
    }

    /** The concurrency group, if the route is capped by in-flight count. */
    public Optional<String> group() {
        return group;
    }

    /** False for routes never limited (health checks, metrics). */
    public boolean limited() {
        return limited;
    }

    /**
     * The route's own buckets, beside the plan's: at most one per {@link ScopedLimit.Scope}, each taken
     * after the tenant's; empty (the default) for none.
     */
    public List<ScopedLimit> limits() {
        return limits;
    }

    /**
     * How this route's requests short of units are delayed instead of refused ({@code throttle:}), in
     * place of the plan's; empty (the default) leaves it to the plan.
     */
    public Optional<Throttle> throttle() {
        return throttle;
    }

    /** True if this rule covers a request with this method (upper case) and path. */
    public boolean matches(String method, String path) {
        if (!methods.isEmpty() && !methods.contains(method)) return false;
        // indexed: an iterator per rule per request is garbage on the hot path
        for (int i = 0, n = paths.size(); i < n; i++) {
            if (paths.get(i).matches(path)) return true;
        }
        return false;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RouteRule r && name.equals(r.name) && methods.equals(r.methods) && paths.equals(r.paths)
                && cost == r.cost && group.equals(r.group) && limited == r.limited && limits.equals(r.limits)
                && throttle.equals(r.throttle);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, methods, paths, cost, group, limited, limits, throttle);
    }

    @Override
    public String toString() {
        return "RouteRule[name=" + name + ", methods=" + methods + ", paths=" + paths + ", cost=" + cost
                + ", group=" + group + ", limited=" + limited + ", limits=" + limits + ", throttle=" + throttle + "]";
    }

    /** Builds a {@link RouteRule}; {@link #build()} refuses a rule without paths. */
    public static final class Builder {
        private final String name;
        private Set<String> methods = Set.of();
        private List<PathPattern> paths = List.of();
        private long cost = 1;
        private Optional<String> group = Optional.empty();
        private boolean limited = true;
        private List<ScopedLimit> limits = List.of();
        private Optional<Throttle> throttle = Optional.empty();

        private Builder(String name) {
            this.name = Objects.requireNonNull(name, "name");
        }

        /** The methods matched, upper case (default: every method). */
        public Builder methods(Set<String> methods) {
            this.methods = Set.copyOf(methods);
            return this;
        }

        /** The path patterns matched, at least one. */
        public Builder paths(List<PathPattern> paths) {
            this.paths = List.copyOf(paths);
            return this;
        }

        /**
         * The paths matched, as {@link PathPattern#parse} reads them.
         *
         * @throws IllegalArgumentException if one is not a valid pattern
         */
        public Builder paths(String... paths) {
            this.paths = java.util.Arrays.stream(paths).map(PathPattern::parse).toList();
            return this;
        }

        /** Units per request (default 1). */
        public Builder cost(long cost) {
            if (cost <= 0) throw new IllegalArgumentException("cost must be > 0, was " + cost);
            this.cost = cost;
            return this;
        }

        /** The concurrency group whose caps the route's requests take a slot of. */
        public Builder group(String group) {
            this.group = Optional.of(Objects.requireNonNull(group, "group"));
            return this;
        }

        /** The route's own buckets, at most one per scope (replaces any given before; default none). */
        public Builder limits(List<ScopedLimit> limits) {
            this.limits = List.copyOf(limits);
            return this;
        }

        /** How requests short of units are delayed, in place of the plan's (default empty: the plan's). */
        public Builder throttle(Optional<Throttle> throttle) {
            this.throttle = Objects.requireNonNull(throttle, "throttle");
            return this;
        }

        /** False for a route never limited (default true). */
        public Builder limited(boolean limited) {
            this.limited = limited;
            return this;
        }

        /**
         * The rule.
         *
         * @throws IllegalArgumentException if no path was given, or an unlimited route has a cost or group
         */
        public RouteRule build() {
            return new RouteRule(this);
        }
    }
}

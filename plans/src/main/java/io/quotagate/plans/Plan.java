package io.quotagate.plans;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A named set of limits a tenant is sized by (free, pro, enterprise...). Immutable; built with
 * {@link #builder(String)} or copied with changes through {@link #from(Plan)}, so a new setting
 * never breaks a caller.
 */
public final class Plan {
    private final String name;
    private final List<Bandwidth> limits;
    private final List<CalendarQuota> quotas;
    private final List<Bandwidth> perUser;
    private final Map<String, Integer> concurrency;
    private final boolean publish;
    private final boolean shadow;
    private final Optional<Throttle> throttle;

    private Plan(Builder b) {
        this.name = b.name;
        this.limits = List.copyOf(b.limits);
        this.quotas = List.copyOf(b.quotas);
        this.perUser = List.copyOf(b.perUser);
        this.concurrency = Map.copyOf(b.concurrency);
        this.publish = b.publish;
        this.shadow = b.shadow;
        this.throttle = b.throttle;
        if (limits.isEmpty()) throw new IllegalArgumentException("plan " + name + " needs at least one limit");
        java.util.Set<String> names = new java.util.HashSet<>();
        for (CalendarQuota q : quotas) {
            if (!names.add(q.name())) {
                throw new IllegalArgumentException("plan " + name + ": duplicate quota name '" + q.name() + "'");
            }
        }
    }

    /** A builder of a plan of this name: hidden, enforcing, no concurrency caps, limits still to give. */
    public static Builder builder(String name) {
        return new Builder(name);
    }

    /** A builder starting from every setting of {@code prototype}. */
    public static Builder from(Plan prototype) {
        return new Builder(prototype.name).limits(prototype.limits).quotas(prototype.quotas).perUser(prototype.perUser).concurrency(prototype.concurrency)
                .publish(prototype.publish).shadow(prototype.shadow).throttle(prototype.throttle);
    }

    /** The plan's name, as used in assignments. */
    public String name() {
        return name;
    }

    /** The bandwidths of each tenant's bucket under this plan, at least one. */
    public List<Bandwidth> limits() {
        return limits;
    }

    /**
     * The calendar quotas of each tenant under this plan (per day, week, month), counted beside its
     * bandwidths; empty (the default) for none.
     */
    public List<CalendarQuota> quotas() {
        return quotas;
    }

    /**
     * The bandwidths of each user's own bucket inside a tenant under this plan ({@code per-user:}),
     * taken beside the tenant's, so one user cannot use up the tenant's bucket for its colleagues;
     * empty (the default) for none. Users are named by {@code tenants.users}.
     */
    public List<Bandwidth> perUser() {
        return perUser;
    }

    /** The most requests of a route group in flight per tenant (group → cap). */
    public Map<String, Integer> concurrency() {
        return concurrency;
    }

    /**
     * True to publish the limits to clients ({@code RateLimit-Policy} / {@code RateLimit} fields on
     * every response); false (default) keeps them hidden.
     */
    public boolean publish() {
        return publish;
    }

    /** True to refuse nothing: requests that would be refused are counted and logged. */
    public boolean shadow() {
        return shadow;
    }

    /**
     * How its tenants' requests short of units are delayed instead of refused ({@code throttle:}); empty
     * (the default) refuses them at once. A route's own {@code throttle:} takes precedence.
     */
    public Optional<Throttle> throttle() {
        return throttle;
    }

    /** The smallest capacity among the plan's bandwidths: no request may cost more. */
    public long smallestCapacity() {
        return limits.stream().mapToLong(Bandwidth::capacity).min().orElseThrow();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Plan p && name.equals(p.name) && limits.equals(p.limits)
                && quotas.equals(p.quotas) && perUser.equals(p.perUser) && concurrency.equals(p.concurrency) && publish == p.publish
                && shadow == p.shadow && throttle.equals(p.throttle);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, limits, quotas, perUser, concurrency, publish, shadow, throttle);
    }

    @Override
    public String toString() {
        return "Plan[name=" + name + ", limits=" + limits + ", quotas=" + quotas + ", perUser=" + perUser + ", concurrency=" + concurrency + ", publish=" + publish
                + ", shadow=" + shadow + ", throttle=" + throttle + "]";
    }

    /** Builds a {@link Plan}; {@link #build()} refuses a plan without limits. */
    public static final class Builder {
        private final String name;
        private List<Bandwidth> limits = List.of();
        private List<CalendarQuota> quotas = List.of();
        private List<Bandwidth> perUser = List.of();
        private final Map<String, Integer> concurrency = new LinkedHashMap<>();
        private boolean publish;
        private boolean shadow;
        private Optional<Throttle> throttle = Optional.empty();

        private Builder(String name) {
            this.name = Objects.requireNonNull(name, "name");
        }

        /** The bandwidths of each tenant's bucket, at least one (replaces any given before). */
        public Builder limits(List<Bandwidth> limits) {
            this.limits = List.copyOf(limits);
            return this;
        }

        /** The calendar quotas of each tenant, names unique (replaces any given before; default none). */
        public Builder quotas(List<CalendarQuota> quotas) {
            this.quotas = List.copyOf(quotas);
            return this;
        }

        /** The bandwidths of each user's own bucket inside a tenant (replaces any given before; default none). */
        public Builder perUser(List<Bandwidth> perUser) {
            this.perUser = List.copyOf(perUser);
            return this;
        }

        /** The per-tenant in-flight caps, group → cap (replaces any given before). */
        public Builder concurrency(Map<String, Integer> caps) {
            concurrency.clear();
            caps.forEach(this::concurrency);
            return this;
        }

        /** At most {@code cap} requests of {@code group} in flight per tenant. */
        public Builder concurrency(String group, int cap) {
            Objects.requireNonNull(group, "group");
            if (cap <= 0) throw new IllegalArgumentException("the cap of group " + group + " must be > 0, was " + cap);
            concurrency.put(group, cap);
            return this;
        }

        /** Whether the limits are published to clients (default false: hidden). */
        public Builder publish(boolean publish) {
            this.publish = publish;
            return this;
        }

        /** Whether the plan is in shadow mode (default false: enforcing). */
        public Builder shadow(boolean shadow) {
            this.shadow = shadow;
            return this;
        }

        /** How requests short of units are delayed instead of refused (default empty: refused at once). */
        public Builder throttle(Optional<Throttle> throttle) {
            this.throttle = Objects.requireNonNull(throttle, "throttle");
            return this;
        }

        /**
         * The plan.
         *
         * @throws IllegalArgumentException if no limit was given, or two quotas share a name
         */
        public Plan build() {
            return new Plan(this);
        }
    }
}

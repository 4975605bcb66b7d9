package io.quotagate.plans;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A loaded, validated plans file: the global quota, the plans, the routes and the tenant settings.
 * Immutable; read one with {@link PlansFile}, build one in code with {@link #builder(String)}, or
 * derive one with {@link #from(Plans)} or the {@code withX} methods. Built, not constructed, so that
 * a new setting never breaks a caller.
 */
public final class Plans {
    private final String source;
    private final Optional<GlobalQuota> global;
    private final Map<String, Plan> plans;
    private final List<RouteRule> routes;
    private final TenantSettings tenants;
    private final Map<String, GroupSettings> groups;
    private final boolean shadow;
    private final StoreSpec store;
    private final SignalSettings signals;

    private Plans(Builder b) {
        this.source = b.source;
        this.global = b.global;
        this.plans = Collections.unmodifiableMap(new LinkedHashMap<>(b.plans));
        this.routes = List.copyOf(b.routes);
        this.groups = Collections.unmodifiableMap(new LinkedHashMap<>(b.groups));
        this.shadow = b.shadow;
        this.store = b.store;
        this.signals = b.signals;
        if (plans.isEmpty()) throw new IllegalArgumentException("at least one plan is required");
        TenantSettings t = b.tenants;
        if (t == null) {
            if (plans.size() > 1) {
                throw new IllegalArgumentException("tenants(...) with a default plan is required when there are "
                        + "several plans: " + plans.keySet());
            }
            t = TenantSettings.builder().defaultPlan(plans.keySet().iterator().next()).build();
        }
        this.tenants = t;
        if (!plans.containsKey(tenants.defaultPlan())) {
            throw new IllegalArgumentException("default plan " + tenants.defaultPlan() + " is not defined");
        }
        reserveConflict(plans, routes, global, tenants).ifPresent(c -> {
            throw new IllegalArgumentException(c.limits() + " limit '" + c.limit() + "': " + c.reason());
        });
    }

    /**
     * A sliding-window limit a throttled request would be charged in: a throttle reserves units ahead (the bucket
     * goes into debt until they arrive), which a sliding window cannot do, since units it admitted stay counted
     * for a whole period whenever they were meant to arrive.
     *
     * @param limits   the field of the list the limit is in ({@code plans.free.limits}, {@code routes[2].limits})
     * @param limit    the limit's name
     * @param throttle the field of the throttle that reaches it ({@code plans.free.throttle})
     */
    record ReserveConflict(String limits, String limit, String throttle) {
        String reason() {
            return reason(throttle);
        }

        /** The reason, naming the throttle as {@code throttleAt} (its field, and maybe its line). */
        String reason(String throttleAt) {
            return "a sliding window cannot reserve units ahead, as the throttle " + throttleAt + " does for the"
                    + " requests it delays: use algorithm token-bucket or gcra here, or no throttle";
        }
    }

    /**
     * The first sliding-window limit a throttle reaches, if any. A request is charged in its plan's limits (or its
     * tenant's own), its plan's per-user limits, its route's own, the guest pool and the global quota, all reserved
     * together under its throttle: the route's, else its plan's.
     */
    static Optional<ReserveConflict> reserveConflict(Map<String, Plan> plans, List<RouteRule> routes,
                                                     Optional<GlobalQuota> global, TenantSettings tenants) {
        String routeThrottle = null;
        for (int i = 0; i < routes.size() && routeThrottle == null; i++) {
            if (routes.get(i).throttle().isPresent()) routeThrottle = "routes[" + i + "].throttle";
        }
        String planThrottle = null;
        for (Plan p : plans.values()) {
            if (planThrottle == null && p.throttle().isPresent()) planThrottle = "plans." + p.name() + ".throttle";
        }
        if (routeThrottle == null && planThrottle == null) return Optional.empty();
        for (Plan p : plans.values()) {
            String t = p.throttle().isPresent() ? "plans." + p.name() + ".throttle" : routeThrottle;
            if (t == null) continue;
            Optional<ReserveConflict> c = sliding(p.limits(), "plans." + p.name() + ".limits", t)
                    .or(() -> sliding(p.perUser(), "plans." + p.name() + ".per-user.limits", t));
            if (c.isPresent()) return c;
            for (Map.Entry<String, List<Bandwidth>> own : tenants.overrides().entrySet()) {
                if (!p.name().equals(tenants.assignments().get(own.getKey()))) continue;
                c = sliding(own.getValue(), "tenants.overrides." + own.getKey() + ".limits", t);
                if (c.isPresent()) return c;
            }
        }
        String any = routeThrottle != null ? routeThrottle : planThrottle;
        Optional<ReserveConflict> c = global.flatMap(g -> sliding(g.limits(), "global.limits", any))
                .or(() -> sliding(tenants.guests().limits(), "tenants.guests.limits", any));
        if (c.isPresent()) return c;
        for (int i = 0; i < routes.size(); i++) {
            RouteRule r = routes.get(i);
            String t = r.throttle().isPresent() ? "routes[" + i + "].throttle" : planThrottle;
            if (t == null) continue;
            for (ScopedLimit l : r.limits()) {
                c = sliding(l.limits(), "routes[" + i + "].limits", t);
                if (c.isPresent()) return c;
            }
        }
        return Optional.empty();
    }

    private static Optional<ReserveConflict> sliding(List<Bandwidth> limits, String field, String throttle) {
        for (Bandwidth b : limits) {
            if (b.algorithm() == Algorithm.SLIDING_WINDOW) return Optional.of(new ReserveConflict(field, b.name(), throttle));
        }
        return Optional.empty();
    }

    /**
     * A builder of plans: no global quota, no routes, no group settings, enforcing, local store. At
     * least one plan is required; tenant settings too when there are several plans (with one, its
     * defaults name that plan as the default plan).
     *
     * @param source where the plans come from, for messages (a file name, {@code <code>})
     */
    public static Builder builder(String source) {
        return new Builder(source);
    }

    /** A builder starting from every setting of {@code prototype}. */
    public static Builder from(Plans prototype) {
        Builder b = new Builder(prototype.source);
        b.global = prototype.global;
        b.plans.putAll(prototype.plans);
        b.routes.addAll(prototype.routes);
        b.tenants = prototype.tenants;
        b.groups.putAll(prototype.groups);
        b.shadow = prototype.shadow;
        b.store = prototype.store;
        b.signals = prototype.signals;
        return b;
    }

    /** Where the plans were loaded from (file name, for messages). */
    public String source() {
        return source;
    }

    /** The quota shared by all tenants, if any. */
    public Optional<GlobalQuota> global() {
        return global;
    }

    /** Plans by name, in the order given. */
    public Map<String, Plan> plans() {
        return plans;
    }

    /** Route rules in match order. */
    public List<RouteRule> routes() {
        return routes;
    }

    /** Tenant resolution and assignment settings. */
    public TenantSettings tenants() {
        return tenants;
    }

    /** Settings of the concurrency groups shared by all tenants ({@code groups:}), by name. */
    public Map<String, GroupSettings> groups() {
        return groups;
    }

    /**
     * True to put every plan (and the global quota) in shadow mode: nothing is refused, requests that
     * would be are counted and logged.
     */
    public boolean shadow() {
        return shadow;
    }

    /**
     * Where the buckets live: {@code local} by default, or a shared store's type and options as written (checked
     * by that type's provider when a filter opens it or takes these plans).
     */
    public StoreSpec store() {
        return store;
    }

    /** When quota events are raised and where the plans file sends them ({@code signals:}). */
    public SignalSettings signals() {
        return signals;
    }

    /** A copy using another store (e.g. a Redis URI given on the command line). */
    public Plans withStore(StoreSpec store) {
        return from(this).store(store).build();
    }

    /** The plan of this name. */
    public Optional<Plan> plan(String name) {
        return Optional.ofNullable(plans.get(name));
    }

    /**
     * These plans with another global quota (empty: none), as set at runtime.
     *
     * @throws IllegalArgumentException if a route's cost exceeds one of the new capacities (such a
     *                                  request could never be admitted)
     */
    public Plans withGlobal(Optional<GlobalQuota> newGlobal) {
        Objects.requireNonNull(newGlobal, "global");
        newGlobal.ifPresent(g -> checkRouteCostsFit("global", g.limits()));
        return from(this).global(newGlobal).build();
    }

    /**
     * These plans with new limits for one plan (its other settings kept), as set at runtime.
     *
     * @throws IllegalArgumentException if the plan is unknown or a route's cost exceeds one of the
     *                                  new capacities
     */
    public Plans withPlanLimits(String planName, List<Bandwidth> limits) {
        Plan old = plans.get(planName);
        if (old == null) throw new IllegalArgumentException("unknown plan '" + planName + "', defined: " + plans.keySet());
        Plan changed = Plan.from(old).limits(limits).build();
        checkRouteCostsFit("plans." + planName, changed.limits());
        return from(this).plan(changed).build();
    }

    /**
     * These plans with new calendar quotas for one plan (its other settings kept), as set at runtime or
     * by the shared limits record; an empty list removes them.
     *
     * @throws IllegalArgumentException if the plan is unknown, two quotas share a name, or a route's
     *                                  cost exceeds a quota's limit
     */
    public Plans withPlanQuotas(String planName, List<CalendarQuota> quotas) {
        Plan old = plans.get(planName);
        if (old == null) throw new IllegalArgumentException("unknown plan '" + planName + "', defined: " + plans.keySet());
        if (old.quotas().equals(quotas)) return this;
        Plan changed = Plan.from(old).quotas(quotas).build();
        for (RouteRule route : routes) {
            if (!route.limited()) continue;
            int i = firstQuotaBelow(route.cost(), quotas);
            if (i >= 0) {
                throw new IllegalArgumentException("limit " + quotas.get(i).limit() + " of plans." + planName
                        + " quota '" + quotas.get(i).name() + "' is below the cost " + route.cost() + " of route '"
                        + route.name() + "': such requests could never be admitted");
            }
        }
        return from(this).plan(changed).build();
    }

    /**
     * These plans with one plan's {@code per-user} limits replaced (its other settings kept), as the
     * shared limits record gives them; an empty list: none.
     *
     * @throws IllegalArgumentException if the plan is unknown, there are limits but no {@code tenants.users}
     *                                  to find the user, or a route's cost exceeds one of the capacities
     */
    public Plans withPlanPerUser(String planName, List<Bandwidth> perUser) {
        Plan old = plans.get(planName);
        if (old == null) throw new IllegalArgumentException("unknown plan '" + planName + "', defined: " + plans.keySet());
        if (old.perUser().equals(perUser)) return this;
        if (!perUser.isEmpty() && tenants.users().isEmpty()) {
            throw new IllegalArgumentException("plans." + planName + ".per-user: per-user limits need tenants.users, "
                    + "the resolvers that name the user inside a tenant, and " + source + " has none");
        }
        checkRouteCostsFit("plans." + planName + ".per-user", perUser);
        return from(this).plan(Plan.from(old).perUser(perUser).build()).build();
    }

    /**
     * These plans with one route's own limits ({@code routes[].limits}) replaced (its paths, methods,
     * cost and group kept), as the shared limits record gives them; an empty list: none.
     *
     * @throws IllegalArgumentException if the route is unknown or not limited (and limits are given), two
     *                                  limits share a scope, a limit per user finds no {@code tenants.users},
     *                                  or a capacity is below the route's cost
     */
    public Plans withRouteLimits(String routeName, List<ScopedLimit> limits) {
        int at = -1;
        for (int i = 0; i < routes.size(); i++) {
            if (routes.get(i).name().equals(routeName)) at = i;
        }
        if (at < 0) throw new IllegalArgumentException("unknown route '" + routeName + "'");
        RouteRule old = routes.get(at);
        if (old.limits().equals(limits)) return this;
        for (ScopedLimit l : limits) {
            if (l.per() == ScopedLimit.Scope.USER && tenants.users().isEmpty()) {
                throw new IllegalArgumentException("route " + routeName + ": a limit per user needs tenants.users, "
                        + "the resolvers that name the user inside a tenant, and " + source + " has none");
            }
            int i = firstLimitBelow(old.cost(), l.limits());
            if (i >= 0) {
                throw new IllegalArgumentException("route " + routeName + ": capacity " + l.limits().get(i).capacity()
                        + " of limit '" + l.limits().get(i).name() + "' (per " + l.per() + ") is below the route's cost "
                        + old.cost() + ": such requests could never be admitted");
            }
        }
        java.util.List<RouteRule> changed = new java.util.ArrayList<>(routes);
        changed.set(at, RouteRule.from(old).limits(limits).build());
        return from(this).routes(changed).build();
    }

    /**
     * These plans with the guest pool's bandwidths replaced (its concurrency caps kept), as set at
     * runtime or by another instance's plans file. An empty list: no shared guest bucket.
     *
     * @throws IllegalArgumentException if a route's cost exceeds one of the new capacities
     */
    public Plans withGuestLimits(List<Bandwidth> limits) {
        if (!limits.isEmpty()) checkRouteCostsFit("tenants.guests", limits);
        GuestPool old = tenants.guests();
        TenantSettings t = TenantSettings.from(tenants).guests(new GuestPool(limits, old.concurrency())).build();
        return from(this).tenants(t).build();
    }

    /**
     * These plans with the tenants' assignments and own limits replaced ({@code tenants.assignments}
     * and {@code tenants.overrides}), as set at runtime or by another instance's plans file.
     *
     * @param assignments tenant → plan
     * @param own         tenant → its own bandwidths (replacing its plan's); every such tenant is assigned
     * @throws IllegalArgumentException naming the tenant if a plan is unknown, a tenant id invalid, an
     *                                  own-limits tenant unassigned, or a route's cost exceeds a capacity
     */
    public Plans withTenants(Map<String, String> assignments, Map<String, List<Bandwidth>> own) {
        return withTenants(assignments, own, Map.of());
    }

    /**
     * As {@link #withTenants(Map, Map)}, with tenants' own calendar quotas (replacing their plan's; an
     * empty list: none) too.
     *
     * @throws IllegalArgumentException also if a route's cost exceeds an own quota's limit, or a tenant
     *                                  with own quotas is unassigned
     */
    public Plans withTenants(Map<String, String> assignments, Map<String, List<Bandwidth>> own,
                             Map<String, List<CalendarQuota>> ownQuotas) {
        ownQuotas.forEach((tenant, quotas) -> {
            for (RouteRule route : routes) {
                int i = route.limited() ? firstQuotaBelow(route.cost(), quotas) : -1;
                if (i >= 0) {
                    throw new IllegalArgumentException("tenant " + tenant + ": limit " + quotas.get(i).limit()
                            + " of quota '" + quotas.get(i).name() + "' is below the cost " + route.cost()
                            + " of route '" + route.name() + "': such requests could never be admitted");
                }
            }
        });
        assignments.forEach((tenant, plan) -> {
            if (!TenantId.isValid(tenant)) throw new IllegalArgumentException("not a valid tenant id: '" + tenant + "'");
            if (!plans.containsKey(plan)) {
                throw new IllegalArgumentException("tenant " + tenant + ": unknown plan '" + plan + "', defined: "
                        + plans.keySet());
            }
        });
        own.forEach((tenant, limits) -> {
            if (!assignments.containsKey(tenant)) {
                throw new IllegalArgumentException("tenant " + tenant + " has limits of its own but no plan");
            }
            if (limits.isEmpty()) throw new IllegalArgumentException("tenant " + tenant + ": limits must not be empty");
            checkRouteCostsFit("tenant " + tenant, limits);
        });
        TenantSettings t = TenantSettings.from(tenants).assignments(assignments).overrides(own)
                .overrideQuotas(ownQuotas).build();
        return from(this).tenants(t).build();
    }

    /**
     * Why {@code limits} cannot size a bucket under these routes (a route whose cost exceeds one of the
     * capacities could never be admitted), or empty if they can.
     */
    public Optional<String> limitsRefusal(String owner, List<Bandwidth> limits) {
        try {
            checkRouteCostsFit(owner, limits);
            return Optional.empty();
        } catch (IllegalArgumentException refused) {
            return Optional.of(refused.getMessage());
        }
    }

    /**
     * As {@link #limitsRefusal(String, List)}, for the own limits of a tenant on {@code plan}: also refused if one
     * is a sliding window and a throttle would reserve in it (the plan's {@code throttle:} or a route's), which a
     * sliding window cannot do.
     */
    public Optional<String> limitsRefusal(String owner, String plan, List<Bandwidth> limits) {
        Optional<String> refusal = limitsRefusal(owner, limits);
        if (refusal.isPresent()) return refusal;
        Plan p = plans.get(plan);
        String throttle = p != null && p.throttle().isPresent() ? "plans." + plan + ".throttle" : null;
        for (int i = 0; i < routes.size() && throttle == null; i++) {
            if (routes.get(i).throttle().isPresent()) throttle = "routes[" + i + "].throttle";
        }
        if (throttle == null) return Optional.empty();
        return sliding(limits, owner, throttle).map(c -> owner + " limit '" + c.limit() + "': " + c.reason());
    }

    /**
     * Why {@code quotas} cannot count under these routes (a route whose cost exceeds a quota's limit could
     * never be admitted), or empty if they can.
     */
    public Optional<String> quotasRefusal(String owner, List<CalendarQuota> quotas) {
        for (RouteRule route : routes) {
            int i = route.limited() ? firstQuotaBelow(route.cost(), quotas) : -1;
            if (i >= 0) {
                return Optional.of("limit " + quotas.get(i).limit() + " of " + owner + " quota '" + quotas.get(i).name()
                        + "' is below the cost " + route.cost() + " of route '" + route.name()
                        + "': such requests could never be admitted");
            }
        }
        return Optional.empty();
    }

    private void checkRouteCostsFit(String owner, List<Bandwidth> limits) {
        for (RouteRule route : routes) {
            if (!route.limited()) continue;
            int i = firstLimitBelow(route.cost(), limits);
            if (i >= 0) {
                Bandwidth b = limits.get(i);
                throw new IllegalArgumentException("capacity " + b.capacity() + " of " + owner + " limit '" + b.name()
                        + "' is below the cost " + route.cost() + " of route '" + route.name()
                        + "': such requests could never be admitted");
            }
        }
    }

    /**
     * The index of the first of {@code limits} whose capacity is below {@code cost} (a request of that
     * cost could never be admitted), or -1 if the cost fits every bucket. The one rule behind every
     * "cost must fit the capacity" check, each caller keeping its own message.
     */
    static int firstLimitBelow(long cost, List<Bandwidth> limits) {
        for (int i = 0; i < limits.size(); i++) {
            if (cost > limits.get(i).capacity()) return i;
        }
        return -1;
    }

    /** The index of the first of {@code quotas} whose limit is below {@code cost}, or -1 if the cost fits each. */
    static int firstQuotaBelow(long cost, List<CalendarQuota> quotas) {
        for (int i = 0; i < quotas.size(); i++) {
            if (cost > quotas.get(i).limit()) return i;
        }
        return -1;
    }

    /** The settings of a concurrency group; a group without {@code groups:} settings fails fast. */
    public GroupSettings group(String name) {
        GroupSettings g = groups.get(name);
        return g != null ? g : GroupSettings.failFast(name);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Plans p && source.equals(p.source) && global.equals(p.global) && plans.equals(p.plans)
                && routes.equals(p.routes) && tenants.equals(p.tenants) && groups.equals(p.groups)
                && shadow == p.shadow && store.equals(p.store) && signals.equals(p.signals);
    }

    @Override
    public int hashCode() {
        return Objects.hash(source, global, plans, routes, tenants, groups, shadow, store, signals);
    }

    @Override
    public String toString() {
        return "Plans[source=" + source + ", global=" + global + ", plans=" + plans + ", routes=" + routes
                + ", tenants=" + tenants + ", groups=" + groups + ", shadow=" + shadow + ", store=" + store + "]";
    }

    /** Builds {@link Plans}; {@link #build()} checks what spans several settings (the default plan exists). */
    public static final class Builder {
        private final String source;
        private Optional<GlobalQuota> global = Optional.empty();
        private final Map<String, Plan> plans = new LinkedHashMap<>();
        private final List<RouteRule> routes = new java.util.ArrayList<>();
        private TenantSettings tenants;
        private final Map<String, GroupSettings> groups = new LinkedHashMap<>();
        private boolean shadow;
        private StoreSpec store = StoreSpec.local();
        private SignalSettings signals = SignalSettings.DEFAULTS;

        private Builder(String source) {
            this.source = Objects.requireNonNull(source, "source");
        }

        /** The quota shared by all tenants (empty: none, the default). */
        public Builder global(Optional<GlobalQuota> global) {
            this.global = Objects.requireNonNull(global, "global");
            return this;
        }

        /** One quota shared by all tenants. */
        public Builder global(GlobalQuota global) {
            return global(Optional.of(global));
        }

        /** A plan; one given before under the same name is replaced. */
        public Builder plan(Plan plan) {
            plans.put(plan.name(), plan);
            return this;
        }

        /** These plans instead of any given before, in this order. */
        public Builder plans(Collection<Plan> plans) {
            this.plans.clear();
            plans.forEach(this::plan);
            return this;
        }

        /** A route rule, tried after those given before. */
        public Builder route(RouteRule route) {
            routes.add(Objects.requireNonNull(route, "route"));
            return this;
        }

        /** These route rules instead of any given before, in match order. */
        public Builder routes(List<RouteRule> routes) {
            this.routes.clear();
            routes.forEach(this::route);
            return this;
        }

        /** How tenants are found and which plan each gets (required with several plans). */
        public Builder tenants(TenantSettings tenants) {
            this.tenants = Objects.requireNonNull(tenants, "tenants");
            return this;
        }

        /** The settings of one concurrency group; one given before for the same group is replaced. */
        public Builder group(GroupSettings group) {
            groups.put(group.name(), group);
            return this;
        }

        /** These group settings instead of any given before. */
        public Builder groups(Collection<GroupSettings> groups) {
            this.groups.clear();
            groups.forEach(this::group);
            return this;
        }

        /** Whether every plan and the global quota are in shadow mode (default false). */
        public Builder shadow(boolean shadow) {
            this.shadow = shadow;
            return this;
        }

        /** When quota events are raised and where the file sends them (default {@link SignalSettings#DEFAULTS}). */
        public Builder signals(SignalSettings signals) {
            this.signals = Objects.requireNonNull(signals, "signals");
            return this;
        }

        /**
         * Where the buckets live (default {@link StoreSpec#local()}); a shared store's options are checked by
         * its type's provider when a filter takes these plans.
         */
        public Builder store(StoreSpec store) {
            this.store = Objects.requireNonNull(store, "store");
            return this;
        }

        /**
         * The plans.
         *
         * @throws IllegalArgumentException if there is no plan, or the default plan is not one of them, or
         *                                  several plans were given without tenant settings
         */
        public Plans build() {
            return new Plans(this);
        }
    }
}

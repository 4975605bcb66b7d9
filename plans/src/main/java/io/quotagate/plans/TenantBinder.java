package io.quotagate.plans;

import io.quotagate.plans.YamlNode.Mapping;
import io.quotagate.plans.YamlNode.Sequence;

import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code tenants:}: resolvers, default plan, policies, assignments, API keys, overrides, trusted
 * proxies and the guest pool. A resolver entry is kept as written (its type and raw options with
 * their lines): the resolver type, in tenant-resolution, knows which options it takes and checks them.
 */
final class TenantBinder {
    private final FieldCursor in;
    private final PlanBinder limits;

    TenantBinder(FieldCursor in, PlanBinder limits) {
        this.in = in;
        this.limits = limits;
    }

    TenantSettings tenants(YamlNode node, Map<String, Plan> plans, List<RouteRule> routes) {
        Mapping m = node == null ? new Mapping()
                : in.mapping(node, "tenants", Set.of("resolvers", "users", "default-plan", "unresolved", "unknown",
                "max-tracked", "assignments", "trusted-proxies", "api-keys", "overrides", "guests", "directory"));
        TenantSettings.Builder b = TenantSettings.builder();
        b.apiKeys(apiKeys(m.entries().get("api-keys")));
        b.resolvers(resolvers(m.entries().get("resolvers"), "tenants.resolvers"));
        List<TenantSettings.ResolverSpec> users = resolvers(m.entries().get("users"), "tenants.users");
        b.users(users);
        if (users.isEmpty()) {
            plans.values().stream().filter(p -> !p.perUser().isEmpty()).findFirst().ifPresent(p -> {
                throw in.error(limits.perUserLines.getOrDefault(p.name(), m.line()), "plans." + p.name() + ".per-user",
                        "per-user limits need tenants.users, the resolvers that name the user inside a tenant");
            });
        }
        String defaultPlan = defaultPlan(m, plans);
        b.defaultPlan(defaultPlan);
        b.unresolved(in.choice(m, "unresolved", "tenants.unresolved",
                TenantSettings.Unresolved.REJECT, TenantSettings.Unresolved.class));
        b.unknown(in.choice(m, "unknown", "tenants.unknown", TenantSettings.Unknown.DEFAULT,
                TenantSettings.Unknown.class));
        YamlNode maxTracked = m.entries().get("max-tracked");
        if (maxTracked != null) b.maxTracked(in.positiveInt(maxTracked, "tenants.max-tracked", Integer.MAX_VALUE));

        Map<String, String> assignments = assignments(m.entries().get("assignments"), plans);
        Map<String, List<CalendarQuota>> overrideQuotas = new LinkedHashMap<>();
        b.overrides(overrides(m.entries().get("overrides"), plans, routes, assignments, defaultPlan, overrideQuotas));
        b.overrideQuotas(overrideQuotas);
        b.assignments(assignments);
        b.trustedProxies(trustedProxies(m.entries().get("trusted-proxies")));
        b.guests(guests(m.entries().get("guests"), routes));
        directory(m.entries().get("directory"), b);
        return b.build();
    }

    /** {@code tenants.directory}: how the application's tenant directory is asked, and what its failure answers. */
    private void directory(YamlNode node, TenantSettings.Builder b) {
        if (node == null) return;
        String f = "tenants.directory";
        Mapping d = in.mapping(node, f, Set.of("timeout", "max-lookups", "unavailable"));
        YamlNode timeout = d.entries().get("timeout");
        if (timeout != null) {
            java.time.Duration t = in.period(timeout, f + ".timeout");
            if (t.compareTo(TenantSettings.MAX_DIRECTORY_TIMEOUT) > 0) {
                throw in.error(timeout.line(), f + ".timeout", "must be <= 10s (a request waits that long at most), was "
                        + ((YamlNode.Scalar) timeout).text());
            }
            b.directoryTimeout(t);
        }
        YamlNode lookups = d.entries().get("max-lookups");
        if (lookups != null) {
            b.directoryLookups(in.positiveInt(lookups, f + ".max-lookups", TenantSettings.MAX_DIRECTORY_LOOKUPS));
        }
        b.directoryFailure(in.choice(d, "unavailable", f + ".unavailable", TenantSettings.DirectoryFailure.DEFAULT,
                TenantSettings.DirectoryFailure.class));
    }

    private List<TenantSettings.ResolverSpec> resolvers(YamlNode node, String field) {
        List<TenantSettings.ResolverSpec> resolvers = new ArrayList<>();
        if (node == null) return resolvers;
        Sequence seq = in.sequence(node, field);
        for (int i = 0; i < seq.items().size(); i++) {
            String f = field + "[" + i + "]";
            Mapping r = in.mapping(seq.items().get(i), f, null);
            String type = in.string(in.required(r, "type", f), f + ".type");
            resolvers.add(new TenantSettings.ResolverSpec(type, r, in.source(), f));
        }
        return resolvers;
    }

    private String defaultPlan(Mapping m, Map<String, Plan> plans) {
        YamlNode dp = m.entries().get("default-plan");
        if (dp != null) {
            String defaultPlan = in.string(dp, "tenants.default-plan");
            if (!plans.containsKey(defaultPlan)) {
                throw in.error(dp.line(), "tenants.default-plan", "unknown plan '" + defaultPlan + "', defined: "
                        + plans.keySet());
            }
            return defaultPlan;
        }
        if (plans.size() == 1) return plans.keySet().iterator().next();
        throw in.error(m.line(), "tenants.default-plan", "required when more than one plan is defined");
    }

    private Map<String, String> assignments(YamlNode node, Map<String, Plan> plans) {
        Map<String, String> assignments = new LinkedHashMap<>();
        if (node == null) return assignments;
        Mapping am = in.mapping(node, "tenants.assignments", null);
        am.entries().forEach((tenant, v) -> {
            String f = "tenants.assignments." + tenant;
            checkTenantId(tenant, am.keyLines().get(tenant), f);
            String plan = in.string(v, f);
            if (!plans.containsKey(plan)) {
                throw in.error(v.line(), f, "unknown plan '" + plan + "', defined: " + plans.keySet());
            }
            assignments.put(tenant, plan);
        });
        return assignments;
    }

    /**
     * {@code tenants.overrides}; each overridden tenant is added to {@code assignments}, and its own
     * {@code quotas} (if written) to {@code overrideQuotas}; {@code limits} may be left out then. A
     * {@code zone} is the tenant's: its own quotas written without a zone run in it, and without own
     * quotas, its plan's quotas do (added to {@code overrideQuotas} in that zone).
     */
    private Map<String, List<Bandwidth>> overrides(YamlNode node, Map<String, Plan> plans, List<RouteRule> routes,
                                                   Map<String, String> assignments, String defaultPlan,
                                                   Map<String, List<CalendarQuota>> overrideQuotas) {
        Map<String, List<Bandwidth>> overrides = new LinkedHashMap<>();
        if (node == null) return overrides;
        Mapping om = in.mapping(node, "tenants.overrides", null);
        om.entries().forEach((tenant, v) -> {
            String f = "tenants.overrides." + tenant;
            checkTenantId(tenant, om.keyLines().get(tenant), f);
            Mapping o = in.mapping(v, f, Set.of("plan", "limits", "quotas", "zone"));
            YamlNode planNode = o.entries().get("plan");
            if (planNode != null) {
                String plan = in.string(planNode, f + ".plan");
                if (!plans.containsKey(plan)) {
                    throw in.error(planNode.line(), f + ".plan", "unknown plan '" + plan + "', defined: "
                            + plans.keySet());
                }
                String assigned = assignments.get(tenant);
                if (assigned != null && !assigned.equals(plan)) {
                    throw in.error(planNode.line(), f + ".plan", "contradicts tenants.assignments." + tenant + ": "
                            + assigned);
                }
                assignments.put(tenant, plan);
            }
            // an override makes its tenant known, on the default plan unless assigned another
            assignments.putIfAbsent(tenant, defaultPlan);
            YamlNode quotasNode = o.entries().get("quotas");
            YamlNode zoneNode = o.entries().get("zone");
            ZoneId zone = zoneNode == null ? null : limits.zone(zoneNode, f + ".zone");
            if (quotasNode == null && zone != null) {
                // the tenant's zone: its plan's quotas run in it (copied here, as its own)
                Plan plan = plans.get(assignments.get(tenant));
                List<CalendarQuota> planQuotas = plan == null ? List.of() : plan.quotas();
                overrideQuotas.put(tenant, planQuotas.stream().map(q -> q.inZone(zone)).toList());
                if (!o.entries().containsKey("limits")) return;
            }
            if (quotasNode != null) {
                // the tenant's own quotas run in its zone unless one names its own
                List<CalendarQuota> own = limits.quotas(quotasNode, f + ".quotas", zone == null ? ZoneOffset.UTC : zone);
                for (RouteRule r : routes) {
                    int i = r.limited() ? Plans.firstQuotaBelow(r.cost(), own) : -1;
                    if (i >= 0) {
                        throw in.error(in.sequence(quotasNode, f).items().get(i).line(), f + ".quotas[" + i + "].limit",
                                "limit " + own.get(i).limit() + " is below the cost " + r.cost() + " of route "
                                        + r.name() + ": such a request could never be admitted");
                    }
                }
                overrideQuotas.put(tenant, own);
                // own quotas alone keep the plan's limits
                if (!o.entries().containsKey("limits")) return;
            }
            overrides.put(tenant, limits.limitsFittingRoutes(in.required(o, "limits", f), f, routes));
        });
        return overrides;
    }

    private List<AddressRange> trustedProxies(YamlNode node) {
        List<AddressRange> trustedProxies = new ArrayList<>();
        if (node == null) return trustedProxies;
        Sequence seq = in.sequence(node, "tenants.trusted-proxies");
        for (int i = 0; i < seq.items().size(); i++) {
            String f = "tenants.trusted-proxies[" + i + "]";
            YamlNode item = seq.items().get(i);
            try {
                trustedProxies.add(AddressRange.parse(in.string(item, f)));
            } catch (IllegalArgumentException e) {
                throw in.error(item.line(), f, e.getMessage()
                        + " (expected an IPv4/IPv6 address or CIDR block such as 10.0.0.0/8)");
            }
        }
        return trustedProxies;
    }

    private void checkTenantId(String tenant, int line, String field) {
        if (!TenantId.isValid(tenant)) {
            throw in.error(line, field, "not a valid tenant id (1-" + TenantId.MAX_LENGTH
                    + " characters of A-Z a-z 0-9 . _ : -, not only dots)");
        }
    }

    /** {@code tenants.guests}: a shared bucket, shared concurrency caps, or both. */
    private GuestPool guests(YamlNode node, List<RouteRule> routes) {
        if (node == null) return GuestPool.NONE;
        String field = "tenants.guests";
        Mapping gm = in.mapping(node, field, Set.of("limits", "concurrency"));
        YamlNode limitsNode = gm.entries().get("limits");
        YamlNode concurrencyNode = gm.entries().get("concurrency");
        if (limitsNode == null && concurrencyNode == null) {
            throw in.error(gm.line(), field, "give limits, concurrency or both (omit tenants.guests for no pool)");
        }
        List<Bandwidth> pool = limitsNode == null ? List.of() : limits.limitsFittingRoutes(limitsNode, field, routes);
        Map<String, Integer> concurrency = limits.concurrency(concurrencyNode, field + ".concurrency");
        if (concurrencyNode instanceof Mapping cm) {
            Set<String> used = RouteBinder.usedGroups(routes);
            cm.keyLines().forEach((group, line) ->
                    RouteBinder.requireUsedGroup(in, used, group, line, field + ".concurrency." + group));
        }
        return new GuestPool(pool, concurrency);
    }

    /** {@code tenants.api-keys}: SHA-256 hex of a key → tenant. The keys themselves never appear in the file. */
    private Map<String, String> apiKeys(YamlNode node) {
        Map<String, String> out = new LinkedHashMap<>();
        if (node == null) return out;
        Mapping km = in.mapping(node, "tenants.api-keys", null);
        km.entries().forEach((hash, v) -> {
            String f = "tenants.api-keys." + (hash.length() > 16 ? hash.substring(0, 16) + "..." : hash);
            if (!ApiKeyHash.isSha256Hex(hash)) {
                throw in.error(km.keyLines().get(hash), f, "expected the SHA-256 of the key as 64 hex digits "
                        + "(e.g. printf %s \"$KEY\" | sha256sum), never the key itself");
            }
            String tenant = in.string(v, f);
            checkTenantId(tenant, v.line(), f);
            if (out.put(ApiKeyHash.normalize(hash), tenant) != null) {
                throw in.error(km.keyLines().get(hash), f, "duplicate key hash (differs only in letter case)");
            }
        });
        return out;
    }
}

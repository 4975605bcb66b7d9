package io.quotagate.filter.status;

import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.CalendarQuota;
import io.quotagate.tenant.TenantContract;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The limits in force as plain, ordered maps and lists, for every surface that shows them as JSON (the
 * Actuator endpoint, the example app's {@code /admin/*}), so they all say the same thing the same way.
 */
public final class LimitsReport {
    private LimitsReport() {
    }

    /**
     * Where the limits come from ({@code shared}, {@code version}, {@code source}, {@code publishedBy},
     * {@code fileAgrees}, {@code reachable}, {@code refused}, {@code lastRefusal} when there is one) and
     * the runtime changes ({@code overrides}).
     */
    public static Map<String, Object> status(LimitsStatus status) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("shared", status.shared());
        out.put("version", status.version());
        out.put("source", status.source());
        out.put("publishedBy", status.publishedBy());
        out.put("fileAgrees", status.fileAgrees());
        out.put("reachable", status.reachable());
        out.put("refused", status.refused());
        status.lastRefusal().ifPresent(r -> out.put("lastRefusal", r));
        out.put("overrides", overrides(status.overrides()));
        return out;
    }

    /** {@code global} only when set at runtime ({@code []}: removed), then {@code plans} and {@code tenants}. */
    public static Map<String, Object> overrides(LimitOverrides overrides) {
        Map<String, Object> out = new LinkedHashMap<>();
        overrides.global().ifPresent(g -> out.put("global", bandwidths(g)));
        Map<String, Object> plans = new LinkedHashMap<>();
        overrides.plans().forEach((plan, limits) -> plans.put(plan, bandwidths(limits)));
        out.put("plans", plans);
        Map<String, Object> tenants = new LinkedHashMap<>();
        overrides.tenants().forEach((tenant, c) -> tenants.put(tenant, contract(c)));
        out.put("tenants", tenants);
        return out;
    }

    /**
     * {@code plan}, {@code limits} (empty when the tenant has the plan's) and, when the tenant has
     * calendar quotas of its own, {@code quotas}; when it has a zone, {@code zone}.
     */
    public static Map<String, Object> contract(TenantContract contract) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("plan", contract.plan());
        out.put("limits", bandwidths(contract.limits()));
        if (contract.hasOwnQuotas()) out.put("quotas", quotas(contract.quotas()));
        if (contract.zone() != null) out.put("zone", contract.zone().getId());
        return out;
    }

    /**
     * Each calendar quota as {@code name}, {@code limit}, {@code per} ({@code day}, {@code week},
     * {@code month}), {@code zone} and, for an anchored one, {@code anchor} ({@code day} or
     * {@code weekday}, and {@code time}), as a plans file writes them.
     */
    public static List<Map<String, Object>> quotas(List<CalendarQuota> quotas) {
        List<Map<String, Object>> out = new ArrayList<>(quotas.size());
        for (CalendarQuota q : quotas) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", q.name());
            m.put("limit", q.limit());
            m.put("per", q.per().name().toLowerCase(Locale.ROOT));
            m.put("zone", q.zone().getId());
            if (q.anchored()) m.put("anchor", anchor(q));
            out.add(m);
        }
        return out;
    }

    private static Map<String, Object> anchor(CalendarQuota q) {
        Map<String, Object> a = new LinkedHashMap<>();
        if (q.per() == CalendarQuota.Per.MONTH) a.put("day", q.anchor().day());
        if (q.per() == CalendarQuota.Per.WEEK) a.put("weekday", q.anchor().weekday().name().toLowerCase(Locale.ROOT));
        a.put("time", q.anchor().time().toString());
        return a;
    }

    /** A tenant's use of each calendar quota this period: {@code name}, {@code per}, {@code limit}, {@code used}, {@code remaining}, {@code resetsAt}. */
    public static List<Map<String, Object>> usage(List<QuotaUsage> quotas) {
        List<Map<String, Object>> out = new ArrayList<>(quotas.size());
        for (QuotaUsage u : quotas) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", u.name());
            m.put("per", u.per().name().toLowerCase(Locale.ROOT));
            m.put("limit", u.limit());
            m.put("used", u.used());
            m.put("remaining", u.remaining());
            m.put("resetsAt", u.resetsAt().toString());
            out.add(m);
        }
        return out;
    }

    /**
     * Each bandwidth as {@code name}, {@code capacity}, {@code refill}, {@code period} (ISO-8601) and {@code algorithm}
     * ({@code token-bucket}, {@code gcra}, {@code sliding-window}).
     */
    public static List<Map<String, Object>> bandwidths(List<Bandwidth> limits) {
        List<Map<String, Object>> out = new ArrayList<>(limits.size());
        for (Bandwidth b : limits) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", b.name());
            m.put("capacity", b.capacity());
            m.put("refill", b.refill());
            m.put("period", b.period().toString());
            m.put("algorithm", b.algorithm().fileName());
            out.add(m);
        }
        return out;
    }
}

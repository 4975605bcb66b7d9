package io.quotagate.spring;

import io.quotagate.filter.admission.ConcurrencyView;
import io.quotagate.filter.admission.LimitStatus;
import io.quotagate.filter.servlet.QuotaControl;
import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.GlobalQuota;
import io.quotagate.plans.Plan;
import io.quotagate.plans.PlansFile;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.lang.Nullable;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The Actuator endpoint {@code quotagate}: what the filter enforces, one tenant's state, and runtime changes of
 * the global quota and a plan's limits (the buckets keep their tokens, see {@link QuotaControl}). Expose it with
 * {@code management.endpoints.web.exposure.include=quotagate} and protect it as the application protects
 * Actuator: a write changes every tenant's limits.
 *
 * <ul>
 * <li>{@code GET /actuator/quotagate}: plans, global quota (limits, capacity, available), concurrency groups.</li>
 * <li>{@code GET /actuator/quotagate/{tenant}}: the tenant's bandwidths (capacity, remaining, seconds to full)
 *     and its requests in flight and queued per concurrency group.</li>
 * <li>{@code POST /actuator/quotagate} {@code {"capacity":1500,"refill":1500,"period":"1m"}}: sets the global
 *     quota's bandwidth.</li>
 * <li>{@code POST /actuator/quotagate/{plan}} with the same body: sets that plan's bandwidth.</li>
 * </ul>
 *
 * <p>A write changes one bandwidth, named by the optional {@code bandwidth} field, and keeps the others; without
 * it the list must have at most one (which is replaced). A new name adds a bandwidth. Bad values (not &gt; 0, an
 * unknown period or plan, a capacity below a route's cost) answer 400 with {@code {"error": "..."}}.
 */
@Endpoint(id = "quotagate")
public class QuotagateEndpoint {

    private final QuotaControl control;

    /** The endpoint of the filter with these controls. */
    public QuotagateEndpoint(QuotaControl control) {
        this.control = Objects.requireNonNull(control, "control");
    }

    /** What is in force: plans, global quota and concurrency groups. */
    @ReadOperation
    public Map<String, Object> quotas() {
        Map<String, Object> plans = new LinkedHashMap<>();
        for (Plan plan : control.plans().plans().values()) {
            Map<String, Object> p = new LinkedHashMap<>();
            p.put("limits", bandwidths(plan.limits()));
            p.put("concurrency", plan.concurrency());
            plans.put(plan.name(), p);
        }
        Map<String, Object> global = new LinkedHashMap<>();
        global.put("limits", bandwidths(control.plans().global().map(GlobalQuota::limits).orElse(List.of())));
        global.put("capacity", control.globalQuotaCapacity());
        global.put("available", control.globalQuotaAvailable());
        ConcurrencyView concurrency = control.concurrency();
        Map<String, Object> groups = new LinkedHashMap<>();
        for (String group : concurrency.groups()) {
            groups.put(group, Map.of("inflight", concurrency.inflight(group), "queued", concurrency.queued(group)));
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("plans", plans);
        body.put("global", global);
        body.put("concurrency", groups);
        return body;
    }

    /** One tenant's bandwidths as its next request would find them, and its requests in flight. */
    @ReadOperation
    public WebEndpointResponse<Map<String, Object>> tenant(@Selector String tenant) {
        List<LimitStatus> limits;
        try {
            limits = control.tenantLimits(tenant);
        } catch (IllegalArgumentException e) {
            return badRequest(e.getMessage());
        }
        List<Map<String, Object>> bandwidths = new ArrayList<>();
        for (LimitStatus s : limits) {
            Map<String, Object> b = new LinkedHashMap<>();
            b.put("name", s.name());
            b.put("capacity", s.capacity());
            b.put("windowSeconds", s.windowSeconds());
            b.put("remaining", s.remaining());
            b.put("secondsToFull", s.secondsToFull()); // as the RateLimit field's t
            bandwidths.add(b);
        }
        ConcurrencyView concurrency = control.concurrency();
        Map<String, Integer> inflight = new LinkedHashMap<>();
        Map<String, Integer> queued = new LinkedHashMap<>();
        for (String group : concurrency.groups()) {
            inflight.put(group, concurrency.inflight(group, tenant));
            queued.put(group, concurrency.queued(group, tenant));
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("tenant", tenant);
        body.put("limits", bandwidths);
        body.put("inflight", inflight);
        body.put("queued", queued);
        return new WebEndpointResponse<>(body);
    }

    /** Sets one bandwidth of the global quota (creating the quota if there is none). */
    @WriteOperation
    public WebEndpointResponse<Map<String, Object>> setGlobalQuota(long capacity, long refill, String period,
                                                                 @Nullable String bandwidth) {
        List<Bandwidth> current = control.plans().global().map(GlobalQuota::limits).orElse(List.of());
        try {
            List<Bandwidth> limits = withBandwidth(current, bandwidth, capacity, refill, period);
            control.setGlobalQuota(limits);
            return new WebEndpointResponse<>(Map.of("global", bandwidths(limits)));
        } catch (IllegalArgumentException e) {
            return badRequest(e.getMessage());
        }
    }

    /** Sets one bandwidth of a plan; its tenants move to it on their next request, keeping their tokens. */
    @WriteOperation
    public WebEndpointResponse<Map<String, Object>> setPlanLimits(@Selector String plan, long capacity, long refill,
                                                                String period, @Nullable String bandwidth) {
        Plan current = control.plans().plan(plan).orElse(null);
        if (current == null) return badRequest("unknown plan '" + plan + "'");
        try {
            List<Bandwidth> limits = withBandwidth(current.limits(), bandwidth, capacity, refill, period);
            control.setPlanLimits(plan, limits);
            return new WebEndpointResponse<>(Map.of("plan", plan, "limits", bandwidths(limits)));
        } catch (IllegalArgumentException e) {
            return badRequest(e.getMessage());
        }
    }

    /**
     * The list with the named bandwidth replaced (or added); unnamed, the list's only one, or {@code b0} (the
     * plans file's default name) when the list is empty.
     */
    private static List<Bandwidth> withBandwidth(List<Bandwidth> current, String name, long capacity, long refill,
                                                 String period) {
        Duration duration;
        try {
            duration = PlansFile.parsePeriod(period);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("period: " + e.getMessage(), e);
        }
        if (name == null) {
            if (current.size() > 1) {
                throw new IllegalArgumentException("bandwidth: name the bandwidth to change, one of "
                        + current.stream().map(Bandwidth::name).toList());
            }
            name = current.isEmpty() ? "b0" : current.get(0).name();
        }
        Bandwidth changed = new Bandwidth(name, capacity, refill, duration);
        List<Bandwidth> limits = new ArrayList<>();
        boolean replaced = false;
        for (Bandwidth b : current) {
            if (b.name().equals(name)) {
                limits.add(changed);
                replaced = true;
            } else {
                limits.add(b);
            }
        }
        if (!replaced) limits.add(changed);
        return List.copyOf(limits);
    }

    private static List<Map<String, Object>> bandwidths(List<Bandwidth> limits) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Bandwidth b : limits) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", b.name());
            m.put("capacity", b.capacity());
            m.put("refill", b.refill());
            m.put("period", b.period().toString());
            out.add(m);
        }
        return out;
    }

    private static WebEndpointResponse<Map<String, Object>> badRequest(String message) {
        return new WebEndpointResponse<>(Map.of("error", String.valueOf(message)),
                WebEndpointResponse.STATUS_BAD_REQUEST);
    }
}

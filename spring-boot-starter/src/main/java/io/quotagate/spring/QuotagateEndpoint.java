package io.quotagate.spring;

import io.quotagate.filter.QuotaControl;
import io.quotagate.filter.status.BandwidthStatus;
import io.quotagate.filter.status.ConcurrencyView;
import io.quotagate.filter.status.LimitsReport;
import io.quotagate.filter.status.LimitsStatus;
import io.quotagate.filter.status.QuotaUsage;
import io.quotagate.filter.status.TenantUsage;
import io.quotagate.filter.status.UsagePage;
import io.quotagate.filter.store.StoreUnavailableException;
import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.CalendarQuota;
import io.quotagate.plans.GlobalQuota;
import io.quotagate.plans.Plan;
import io.quotagate.plans.TenantId;
import io.quotagate.tenant.TenantContract;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.lang.Nullable;
import org.springframework.core.io.InputStreamResource;
import org.springframework.util.MimeType;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The Actuator endpoint {@code quotagate}: what the filter enforces and where it comes from, one tenant's
 * contract and state, and runtime changes of the global quota, a plan's limits and a tenant's contract (the
 * buckets keep their tokens, see {@link QuotaControl}). With a shared store (Redis) a change made here is
 * enforced and reported by every instance sharing it. Expose it with
 * {@code management.endpoints.web.exposure.include=quotagate} and protect it as the application protects
 * Actuator: a write changes every tenant's limits.
 *
 * <ul>
 * <li>{@code GET /actuator/quotagate}: plans, global quota (limits, capacity, available), concurrency groups
 *     (in flight, queued, and an adaptive group's {@code limit} in force),
 *     and {@code limits}: where the limits in force come from (shared record's version, source, whether this
 *     instance's plans file agrees, records refused) and the runtime {@code overrides} (global, plans,
 *     tenants).</li>
 * <li>{@code GET /actuator/quotagate/{tenant}} (or {@code /tenant/{tenant}}): the tenant's {@code contract}
 *     (plan and own limits), its bandwidths (capacity, algorithm, remaining, seconds to full), its calendar quotas' use this
 *     period ({@code quotas}: limit, used, remaining, resetsAt; absent if its plan has none) and its requests in flight
 *     and queued per concurrency group; 404 if nothing knows the tenant and it has no bucket state.</li>
 * <li>{@code POST /actuator/quotagate} {@code {"capacity":1500,"refill":1500,"period":"1m"}}: sets the global
 *     quota's bandwidth.</li>
 * <li>{@code POST /actuator/quotagate/{plan}} with the same body: sets that plan's bandwidth.</li>
 * <li>{@code POST /actuator/quotagate/tenant/{tenant}} {@code {"plan":"pro"}}: places the tenant on a plan with
 *     the plan's limits; with {@code "capacity":50,"refill":10,"period":"1m","bandwidth":"burst"} besides, with
 *     limits of its own (one bandwidth per write, changed in its own limits on that plan, else in the plan's).
 *     {@code DELETE} on the same path removes that runtime entry.</li>
 * <li>{@code DELETE /actuator/quotagate/overrides}: drops every runtime change.</li>
 * <li>{@code POST /actuator/quotagate/invalidate/{tenant}} (no body, {@code Content-Type: application/json} as
 *     every Actuator write): drops the tenant's cached directory answer on every instance.</li>
 * </ul>
 *
 * <p>Actuator reads a write's body as flat fields of text (a nested object or list is refused with 400 before
 * the endpoint sees it), so every write sets one bandwidth.
 *
 * <p>The paths differ by their number of segments, so a plan or tenant of any name is reachable: {@code POST
 * /actuator/quotagate/tenant} sets the limits of a plan named {@code tenant}.
 *
 * <p>A write changes one bandwidth, named by the optional {@code bandwidth} field, and keeps the others; without
 * it the list must have at most one (which is replaced). A new name adds a bandwidth. The optional
 * {@code algorithm} ({@code token-bucket}, {@code gcra}, {@code sliding-window}) chooses how it counts; without
 * it a replaced bandwidth keeps its algorithm and a new one is a token bucket. A sliding window takes no
 * {@code refill} (it admits at most {@code capacity} in any {@code period}); the others require one. Bad
 * values (not &gt; 0, an unknown period or plan, a capacity below a route's cost, an invalid tenant id) answer
 * 400 with {@code {"error": "..."}} naming the field; a shared store that cannot be reached, or whose record
 * cannot be used, answers 503 with the reason, and nothing changed.
 */
@Endpoint(id = "quotagate")
public class QuotagateEndpoint {

    private static final String TENANT = "tenant";
    private static final String INVALIDATE = "invalidate";
    private static final String OVERRIDES = "overrides";

    private final QuotaControl control;

    /** The endpoint of the filter with these controls. */
    public QuotagateEndpoint(QuotaControl control) {
        this.control = Objects.requireNonNull(control, "control");
    }

    /** What is in force: plans, global quota, concurrency groups, and where the limits come from. */
    @ReadOperation
    public Map<String, Object> quotas() {
        Map<String, Object> plans = new LinkedHashMap<>();
        for (Plan plan : control.plans().plans().values()) {
            Map<String, Object> p = new LinkedHashMap<>();
            p.put("limits", bandwidths(plan.limits()));
            if (!plan.quotas().isEmpty()) p.put("quotas", quotas(plan.quotas()));
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
            Map<String, Object> g = new LinkedHashMap<>();
            g.put("inflight", concurrency.inflight(group));
            g.put("queued", concurrency.queued(group));
            // an adaptive group's limit in force on this instance, as quotagate.concurrency.limit shows it
            concurrency.adaptiveLimit(group).ifPresent(limit -> g.put("limit", limit));
            groups.put(group, g);
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("plans", plans);
        body.put("global", global);
        body.put("concurrency", groups);
        body.put("limits", limits());
        return body;
    }

    /**
     * One tenant: its contract in force, its bandwidths as its next request would find them, and its requests in
     * flight; 404 if no assignment, runtime entry or directory knows it and it has no bucket state (no units
     * spent that have not refilled, nothing in flight or queued).
     */
    @ReadOperation
    public WebEndpointResponse<Map<String, Object>> tenant(@Selector String tenant) {
        if (!TenantId.isValid(tenant)) return badRequest(invalidTenant(tenant));
        Optional<TenantContract> contract;
        List<BandwidthStatus> limits;
        List<QuotaUsage> quotas;
        try {
            contract = control.tenant(tenant);
            limits = control.tenantLimits(tenant);
            quotas = control.tenantQuotas(tenant);
        } catch (IllegalArgumentException e) {
            return badRequest(e.getMessage());
        }
        boolean spent = false;
        List<Map<String, Object>> bandwidths = new ArrayList<>();
        for (BandwidthStatus s : limits) {
            Map<String, Object> b = new LinkedHashMap<>();
            b.put("name", s.name());
            b.put("capacity", s.capacity());
            if (s.algorithm() != null) b.put("algorithm", s.algorithm().fileName());
            b.put("windowSeconds", s.windowSeconds());
            b.put("remaining", s.remaining());
            b.put("secondsToFull", s.secondsToFull()); // as the RateLimit field's t
            bandwidths.add(b);
            spent |= s.nanosToFull() > 0;
        }
        ConcurrencyView concurrency = control.concurrency();
        Map<String, Integer> inflight = new LinkedHashMap<>();
        Map<String, Integer> queued = new LinkedHashMap<>();
        for (String group : concurrency.groups()) {
            int running = concurrency.inflight(group, tenant);
            int waiting = concurrency.queued(group, tenant);
            inflight.put(group, running);
            queued.put(group, waiting);
            spent |= running > 0 || waiting > 0;
        }
        if (contract.isEmpty() && !spent) {
            return response(WebEndpointResponse.STATUS_NOT_FOUND, "unknown tenant '" + tenant
                    + "': no assignment, runtime entry or directory knows it, and it has no bucket state");
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("tenant", tenant);
        contract.ifPresent(c -> body.put("contract", contract(c))); // absent: a guest
        body.put("limits", bandwidths);
        if (!quotas.isEmpty()) body.put("quotas", usage(quotas));
        body.put("inflight", inflight);
        body.put("queued", queued);
        return new WebEndpointResponse<>(body);
    }

    /**
     * {@code GET /actuator/quotagate/tenant/{tenant}}: the same as {@link #tenant(String)}; {@code GET
     * /actuator/quotagate/usage/json} or {@code /usage/csv}: one page of the usage export
     * ({@link QuotaControl#usage}), {@code size} tenants at most (default {@value #DEFAULT_USAGE_PAGE}), from
     * {@code cursor} (the previous page's {@code next}); the CSV form streams the whole export (from {@code cursor}
     * on, with the header line when from the start), reading a page at a time as the client reads.
     */
    @ReadOperation
    public WebEndpointResponse<Object> tenantEntry(@Selector String kind, @Selector String tenant,
                                                   @Nullable String cursor, @Nullable Integer size) {
        if (USAGE.equals(kind)) return usage(tenant, cursor, size);
        if (!TENANT.equals(kind)) return widen(notFound(kind, TENANT + " or " + USAGE));
        return widen(tenant(tenant));
    }

    /** Default page size of the usage export. */
    public static final int DEFAULT_USAGE_PAGE = 1_000;
    private static final String USAGE = "usage";
    private static final MimeType CSV = new MimeType("text", "csv", java.nio.charset.StandardCharsets.UTF_8);

    private WebEndpointResponse<Object> usage(String format, @Nullable String cursor, @Nullable Integer size) {
        if (!"json".equals(format) && !"csv".equals(format)) return widen(notFound(format, "json or csv"));
        UsagePage page;
        try {
            page = control.usage(cursor, size == null ? DEFAULT_USAGE_PAGE : size);
        } catch (IllegalArgumentException e) {
            return widen(badRequest(e.getMessage()));
        } catch (StoreUnavailableException | IllegalStateException e) {
            return widen(response(WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE, e.getMessage()));
        } catch (UnsupportedOperationException e) { // a store of the application's own that cannot list its counters
            return widen(response(501, "this store cannot list its quota counters: " + e.getMessage()));
        }
        if ("csv".equals(format)) {
            // the whole export from this page on, streamed page by page as the client reads (bounded memory)
            return new WebEndpointResponse<>(new InputStreamResource(new UsageCsvStream(control, page,
                    size == null ? DEFAULT_USAGE_PAGE : size, cursor == null)), WebEndpointResponse.STATUS_OK, CSV);
        }
        List<Map<String, Object>> tenants = new ArrayList<>(page.tenants().size());
        for (TenantUsage t : page.tenants()) {
            List<Map<String, Object>> periods = new ArrayList<>(t.periods().size());
            for (TenantUsage.Period p : t.periods()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("quota", p.quota());
                m.put("per", p.per().name().toLowerCase(java.util.Locale.ROOT));
                m.put("limit", p.limit());
                m.put("start", p.start().toString());
                m.put("end", p.end().toString());
                m.put("closed", p.closed());
                m.put("used", p.used());
                periods.add(m);
            }
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("tenant", t.tenant());
            m.put("plan", t.plan());
            m.put("periods", periods);
            tenants.add(m);
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("tenants", tenants);
        body.put("next", page.next());
        return new WebEndpointResponse<>(body);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static WebEndpointResponse<Object> widen(WebEndpointResponse<? extends Object> r) {
        return (WebEndpointResponse) r;
    }

    /** Sets one bandwidth of the global quota (creating the quota if there is none). */
    @WriteOperation
    public WebEndpointResponse<Map<String, Object>> setGlobalQuota(long capacity, @Nullable Long refill, String period,
                                                                 @Nullable String bandwidth,
                                                                 @Nullable String algorithm) {
        List<Bandwidth> current = control.plans().global().map(GlobalQuota::limits).orElse(List.of());
        try {
            List<Bandwidth> limits = WriteBody.withBandwidth(current, bandwidth, algorithm, capacity, refill, period);
            control.setGlobalQuota(limits);
            return new WebEndpointResponse<>(Map.of("global", bandwidths(limits)));
        } catch (IllegalArgumentException e) {
            return badRequest(e.getMessage());
        } catch (IllegalStateException e) {
            return unavailable(e);
        }
    }

    /** Sets one bandwidth of a plan; its tenants move to it on their next request, keeping their tokens. */
    @WriteOperation
    public WebEndpointResponse<Map<String, Object>> setPlanLimits(@Selector String plan, long capacity,
                                                                @Nullable Long refill, String period,
                                                                @Nullable String bandwidth,
                                                                @Nullable String algorithm) {
        Plan current = control.plans().plan(plan).orElse(null);
        if (current == null) {
            return badRequest("plan: unknown plan " + WriteBody.describe(plan) + ", defined: "
                    + control.plans().plans().keySet());
        }
        try {
            List<Bandwidth> limits = WriteBody.withBandwidth(current.limits(), bandwidth, algorithm, capacity, refill,
                    period);
            control.setPlanLimits(plan, limits);
            return new WebEndpointResponse<>(Map.of("plan", plan, "limits", bandwidths(limits)));
        } catch (IllegalArgumentException e) {
            return badRequest(e.getMessage());
        } catch (IllegalStateException e) {
            return unavailable(e);
        }
    }

    /**
     * {@code POST /actuator/quotagate/tenant/{tenant}} {@code {"plan": "pro"}}: places the tenant on a plan, with
     * the plan's limits, replacing what the plans file or the directory says (it keeps its tokens). With
     * {@code capacity}, {@code refill}, {@code period} and the optional {@code bandwidth}, the tenant gets limits of
     * its own: that bandwidth changed (or added) in its current own limits on that plan, else in the plan's.
     * {@code POST /actuator/quotagate/invalidate/{tenant}} (no fields): drops the tenant's cached directory answer
     * on every instance.
     */
    @WriteOperation
    public WebEndpointResponse<Map<String, Object>> write(@Selector String kind, @Selector String tenant,
                                                        @Nullable String plan, @Nullable String capacity,
                                                        @Nullable String refill, @Nullable String period,
                                                        @Nullable String bandwidth, @Nullable String algorithm) {
        if (!TENANT.equals(kind) && !INVALIDATE.equals(kind)) return notFound(kind, TENANT + " or " + INVALIDATE);
        if (!TenantId.isValid(tenant)) return badRequest(invalidTenant(tenant));
        try {
            if (INVALIDATE.equals(kind)) {
                control.invalidate(tenant);
                return new WebEndpointResponse<>(Map.of("tenant", tenant, "invalidated", true));
            }
            TenantContract contract = WriteBody.contract(control.plans(), control.tenant(tenant), plan, capacity,
                    refill, period, bandwidth, algorithm);
            control.setTenant(tenant, contract);
            return new WebEndpointResponse<>(Map.of("tenant", tenant, "contract", contract(contract)));
        } catch (IllegalArgumentException e) {
            return badRequest(e.getMessage());
        } catch (IllegalStateException e) {
            return unavailable(e);
        }
    }

    /**
     * {@code DELETE /actuator/quotagate/tenant/{tenant}}: removes the tenant's runtime entry, so the plans file
     * or the directory places it again; {@code cleared} is false if it had none (nothing changed).
     */
    @DeleteOperation
    public WebEndpointResponse<Map<String, Object>> clearTenant(@Selector String kind, @Selector String tenant) {
        if (!TENANT.equals(kind)) return notFound(kind, TENANT);
        if (!TenantId.isValid(tenant)) return badRequest(invalidTenant(tenant));
        try {
            boolean cleared = control.clearTenant(tenant);
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("tenant", tenant);
            body.put("cleared", cleared);
            control.tenant(tenant).ifPresent(c -> body.put("contract", contract(c))); // what places it now
            return new WebEndpointResponse<>(body);
        } catch (IllegalArgumentException e) {
            return badRequest(e.getMessage());
        } catch (IllegalStateException e) {
            return unavailable(e);
        }
    }

    /** {@code DELETE /actuator/quotagate/overrides}: drops every runtime change; the plans file applies again. */
    @DeleteOperation
    public WebEndpointResponse<Map<String, Object>> clear(@Selector String what) {
        if (!OVERRIDES.equals(what)) return notFound(what, OVERRIDES);
        try {
            control.clearOverrides();
            return new WebEndpointResponse<>(Map.of(OVERRIDES, LimitsReport.overrides(control.overrides())));
        } catch (IllegalStateException e) {
            return unavailable(e);
        }
    }

    /** Where the limits in force come from, and the runtime changes on top of the plans file. */
    private Map<String, Object> limits() {
        LimitsStatus status = control.limitsStatus();
        if (status != null) return LimitsReport.status(status);
        return Map.of(OVERRIDES, LimitsReport.overrides(control.overrides()));
    }

    private static Map<String, Object> contract(TenantContract c) {
        return LimitsReport.contract(c);
    }

    private static List<Map<String, Object>> quotas(List<CalendarQuota> quotas) {
        return LimitsReport.quotas(quotas);
    }

    private static List<Map<String, Object>> usage(List<QuotaUsage> quotas) {
        return LimitsReport.usage(quotas);
    }

    private static List<Map<String, Object>> bandwidths(List<Bandwidth> limits) {
        return LimitsReport.bandwidths(limits);
    }

    private static String invalidTenant(String tenant) {
        return "tenant: not a valid tenant id (1 to " + TenantId.MAX_LENGTH + " of A-Z a-z 0-9 . _ : -, not only "
                + "dots): " + WriteBody.describe(tenant);
    }

    private static WebEndpointResponse<Map<String, Object>> notFound(String segment, String expected) {
        return response(WebEndpointResponse.STATUS_NOT_FOUND, "no such path: " + WriteBody.describe(segment)
                + ", expected " + expected);
    }

    private static WebEndpointResponse<Map<String, Object>> badRequest(String message) {
        return response(WebEndpointResponse.STATUS_BAD_REQUEST, message);
    }

    /** The shared store could not be reached or its record cannot be used: nothing changed, try again. */
    private static WebEndpointResponse<Map<String, Object>> unavailable(IllegalStateException e) {
        return response(WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE, e.getMessage());
    }

    private static WebEndpointResponse<Map<String, Object>> response(int status, String message) {
        return new WebEndpointResponse<>(Map.of("error", String.valueOf(message)), status);
    }
}

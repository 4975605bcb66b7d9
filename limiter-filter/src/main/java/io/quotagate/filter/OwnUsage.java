package io.quotagate.filter;

import io.quotagate.filter.internal.admission.Gate;
import io.quotagate.filter.status.BandwidthStatus;
import io.quotagate.filter.status.QuotaUsage;
import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.store.QuotaClock;
import io.quotagate.filter.store.StoreUnavailableException;
import io.quotagate.plans.TenantId;
import io.quotagate.tenant.TenantRejectedException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The tenant's own usage endpoint ({@link QuotaFilter.Builder#usageEndpoint}), like GitHub's
 * {@code GET /rate_limit}: the calling tenant's limits, calendar quotas and their use, as JSON, answered by the
 * filter itself.
 *
 * <ul>
 * <li><b>Never charged.</b> No token is taken, no quota counted, no concurrency slot held, nothing counted in
 *     the request statistics; the buckets are read as {@link QuotaControl#tenantLimits} reads them.</li>
 * <li><b>Only the caller.</b> The tenant is resolved exactly as for a request (the same resolver chain); a
 *     query parameter or anything else naming another tenant is ignored.</li>
 * <li><b>Hidden plans stay hidden.</b> A tenant whose plan does not publish its limits gets 404 (as if there were
 *     no endpoint), unless the filter is built to show hidden plans too.</li>
 * <li><b>No tenant, unknown tenants.</b> A request without a tenant gets 401, an invalid tenant id 400, an
 *     unknown tenant under {@code unknown: reject} 403, as a request would; an unknown tenant under {@code
 *     unknown: default} (a guest) gets its guest bucket's limits and no quotas, if the default plan publishes.</li>
 * <li><b>Never a free way to load the store.</b> Each answer reads the tenant's buckets and counters (from
 *     Redis, with a shared store), and nothing charges for it: one instance works out at most
 *     {@link #ANSWERS_PER_SECOND} answers a second, at most {@link #ANSWERS_PER_SECOND_EACH} of them for one
 *     tenant (the guests together count as one), so no client can take the endpoint from the others; the rest
 *     get 429 {@code usage_endpoint_busy} with {@code Retry-After: 1} before anything is read.</li>
 * </ul>
 * Only {@code GET} and {@code HEAD} are answered (others get 405); the answer is never cached
 * ({@code Cache-Control: no-store}).
 */
final class OwnUsage {
    /** Answers worked out per second on one instance, at most (a client polling its usage asks now and then). */
    static final int ANSWERS_PER_SECOND = 200;
    /** Of them, for one tenant (or all guests together), at most. */
    static final int ANSWERS_PER_SECOND_EACH = 5;
    private static final long NANOS_PER_SECOND = 1_000_000_000L;
    private static final System.Logger LOG = System.getLogger(QuotaFilter.class.getName());
    private final String path;
    private final boolean showHidden;
    private final QuotaClock clock;
    /** The second being counted, the answers worked out in it, and per tenant (at most ANSWERS_PER_SECOND entries); guarded by {@code this}. */
    private long second = Long.MIN_VALUE;
    private int answered;
    private final java.util.Map<String, Integer> answeredEach = new java.util.HashMap<>();

    OwnUsage(String path, boolean showHidden, QuotaClock clock) {
        this.path = path;
        this.showHidden = showHidden;
        this.clock = clock;
    }

    /** True if one more answer for {@code who} may be worked out in this second (and counts it). */
    private synchronized boolean mayAnswer(String who) {
        long now = Math.floorDiv(clock.nanoTime(), NANOS_PER_SECOND);
        if (now != second) {
            second = now;
            answered = 0;
            answeredEach.clear();
        }
        if (answered >= ANSWERS_PER_SECOND) return false;
        int mine = answeredEach.getOrDefault(who, 0);
        if (mine >= ANSWERS_PER_SECOND_EACH) return false;
        answeredEach.put(who, mine + 1);
        answered++;
        return true;
    }

    /** True for a request to the endpoint ({@code normalizedPath} exactly its path). */
    boolean matches(String normalizedPath) {
        return path.equals(normalizedPath);
    }

    /** Answers the calling tenant's own usage, or the refusal a request of it would get. */
    void answer(FilterRuntime rt, FilterRuntime.Engine engine, HttpServletRequest request,
                HttpServletResponse response) throws IOException {
        String method = request.getMethod().toUpperCase(Locale.ROOT);
        if (!method.equals("GET") && !method.equals("HEAD")) {
            response.setHeader("Allow", "GET, HEAD");
            new Problem(405, "method_not_allowed", "The usage endpoint answers GET only.", null, 0).write(response);
            return;
        }
        String tenant;
        try {
            tenant = engine.resolver().resolve(request).orElse(null);
        } catch (TenantRejectedException rejected) {
            new Problem(rejected.status(), rejected.reason(), rejected.getMessage(), null, 0).write(response);
            return;
        } catch (RuntimeException bug) {
            rt.setup.resolverFailures().failed("", bug);
            new Problem(500, "internal_error", "The tenant of this request could not be determined.", null, 0)
                    .write(response);
            return;
        }
        if (tenant == null) {
            new Problem(401, "missing_tenant", "The usage endpoint answers a tenant's own usage; this request names "
                    + "no tenant.", null, 0).write(response);
            return;
        }
        if (!TenantId.isValid(tenant)) {
            new Problem(400, "invalid_tenant", "The tenant id must be 1-64 characters of [A-Za-z0-9._:-].", null, 0)
                    .write(response);
            return;
        }
        String json;
        try {
            Optional<Gate.Placed> placed = rt.gate.place(engine.policy(), tenant);
            if (placed.isEmpty()) {
                new Problem(403, "unknown_tenant", "This tenant is not known.", tenant, 0).write(response);
                return;
            }
            String plan = placed.get().plan();
            if (!showHidden && !rt.gate.publishes(engine.policy(), plan)) {
                new Problem(404, "not_found", "Not found.", null, 0).write(response);
                return;
            }
            boolean guest = placed.get().kind() == BucketKind.GUEST;
            if (!mayAnswer(guest ? "" : tenant)) { // "" is no tenant id: the guests' share
                new Problem(429, "usage_endpoint_busy", "The usage endpoint is asked too often; retry after 1 s.",
                        tenant, 1).write(response);
                return;
            }
            List<BandwidthStatus> limits = rt.gate.tenantLimits(engine.policy(), tenant);
            List<QuotaUsage> quotas = placed.get().kind() == BucketKind.TENANT
                    ? rt.gate.tenantQuotas(engine.policy(), tenant) : List.of();
            json = json(tenant, plan, placed.get().kind() == BucketKind.GUEST, limits, quotas);
        } catch (StoreUnavailableException down) {
            new Problem(503, "store_unavailable", "The limits cannot be read now; retry later.", tenant,
                    Math.max(1, down.retryAfterSeconds())).write(response);
            return;
        } catch (RuntimeException failed) {
            LOG.log(System.Logger.Level.WARNING, "quotagate: the usage endpoint could not read tenant {0}''s limits: {1}",
                    tenant, String.valueOf(failed));
            new Problem(503, "unavailable", "The limits cannot be read now; retry later.", tenant, 1)
                    .write(response);
            return;
        }
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        response.setStatus(200);
        response.setContentType("application/json");
        response.setHeader("Cache-Control", "no-store");
        response.setContentLength(body.length);
        if (method.equals("GET")) response.getOutputStream().write(body);
    }

    /**
     * {@code {"tenant":..., "plan":..., "guest":false, "limits":[{"name":..., "limit":..., "remaining":...,
     * "windowSeconds":..., "resetSeconds":...}], "quotas":[{"name":..., "per":"month", "limit":..., "used":...,
     * "remaining":..., "resetsAt":"2027-01-01T00:00:00Z"}]}}
     */
    static String json(String tenant, String plan, boolean guest, List<BandwidthStatus> limits,
                       List<QuotaUsage> quotas) {
        StringBuilder b = new StringBuilder(256);
        // tenant ids and plan names need no escaping: [A-Za-z0-9._:-] and [a-z0-9_-]
        b.append("{\"tenant\":\"").append(tenant).append("\",\"plan\":\"").append(plan).append("\",\"guest\":")
                .append(guest).append(",\"limits\":[");
        for (int i = 0; i < limits.size(); i++) {
            BandwidthStatus s = limits.get(i);
            if (i > 0) b.append(',');
            b.append("{\"name\":\"").append(s.name()).append("\",\"limit\":").append(s.capacity())
                    .append(",\"remaining\":").append(s.remaining())
                    .append(",\"windowSeconds\":").append(s.windowSeconds())
                    .append(",\"resetSeconds\":").append(s.secondsToFull()).append('}');
        }
        b.append("],\"quotas\":[");
        for (int i = 0; i < quotas.size(); i++) {
            QuotaUsage q = quotas.get(i);
            if (i > 0) b.append(',');
            b.append("{\"name\":\"").append(q.name()).append("\",\"per\":\"")
                    .append(q.per().name().toLowerCase(Locale.ROOT)).append("\",\"limit\":").append(q.limit())
                    .append(",\"used\":").append(q.used()).append(",\"remaining\":").append(q.remaining())
                    .append(",\"resetsAt\":\"").append(q.resetsAt()).append("\"}");
        }
        return b.append("]}").toString();
    }
}

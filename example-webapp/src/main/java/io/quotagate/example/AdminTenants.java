package io.quotagate.example;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.quotagate.filter.QuotaControl;
import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.status.BandwidthStatus;
import io.quotagate.filter.status.LimitsReport;
import io.quotagate.plans.Algorithm;
import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.PlansFile;
import io.quotagate.plans.TenantId;
import io.quotagate.tenant.TenantContract;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The tenants' admin API on the management port, behind the same bearer token as {@link AdminQuota}:
 * <ul>
 *   <li>{@code GET /admin/tenants/{id}}: the tenant's contract in force (plan, own limits, whether a
 *       runtime change set it) and its buckets' state; 404 for a tenant nobody knows;</li>
 *   <li>{@code PUT /admin/tenants/{id}} {@code {"plan": "pro", "limits": [{"capacity": 500, "refill":
 *       100, "period": "10s"}]}}: places it ({@code plan} defaults to its current plan, {@code limits}
 *       to the plan's), validated as the plans file is (400 naming the field);</li>
 *   <li>{@code DELETE /admin/tenants/{id}}: removes the runtime entry (204; 404 if it had none);</li>
 *   <li>{@code POST /admin/tenants/{id}/invalidate}: drops the directory's cached answer (204);</li>
 *   <li>{@code GET /admin/overrides}: every runtime change and where the limits come from;
 *       {@code DELETE /admin/overrides}: drops them all.</li>
 * </ul>
 * With a shared store a change is enforced and reported by every instance; if the store cannot be
 * reached nothing changes anywhere and the answer is 503.
 */
final class AdminTenants extends HttpServlet {
    private static final long serialVersionUID = 1L;
    private static final ObjectMapper JSON = JsonBody.JSON;
    private static final int MAX_BODY = 16_384;
    private static final String EXAMPLE = "{\"plan\": \"pro\", \"limits\": [{\"capacity\": 500, \"refill\": 100, "
            + "\"period\": \"10s\"}]}";

    private final transient QuotaFilter filter;
    private final transient AdminQuota auth;

    AdminTenants(QuotaFilter filter, AdminQuota auth) {
        this.filter = Objects.requireNonNull(filter, "filter");
        this.auth = Objects.requireNonNull(auth, "auth");
    }

    private QuotaControl control() {
        return filter.control();
    }

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        if (!auth.authorized(req, resp)) return;
        if (isOverrides(req)) {
            json(resp, 200, overrides());
            return;
        }
        String tenant = tenant(req, resp, false);
        if (tenant == null) return;
        Optional<TenantContract> contract = control().tenant(tenant);
        List<BandwidthStatus> state = control().tenantLimits(tenant);
        if (contract.isEmpty() && state.isEmpty()) {
            AdminQuota.problem(resp, 404, "Tenant " + tenant + " is not known.");
            return;
        }
        ObjectNode body = JSON.createObjectNode();
        body.put("tenant", tenant);
        body.put("plan", contract.map(TenantContract::plan).orElse(null));
        body.put("known", contract.isPresent());
        body.put("runtime", control().overrides().tenants().containsKey(tenant));
        body.set("limits", bandwidths(contract.map(TenantContract::limits).orElse(List.of())));
        ArrayNode buckets = body.putArray("buckets");
        for (BandwidthStatus s : state) {
            buckets.addObject().put("name", s.name()).put("capacity", s.capacity()).put("remaining", s.remaining())
                    .put("secondsToFull", s.secondsToFull());
        }
        body.set("quotas", JSON.valueToTree(LimitsReport.usage(control().tenantQuotas(tenant)))); // this period's use
        json(resp, 200, body);
    }

    @Override
    protected void doPut(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        if (!auth.authorized(req, resp)) return;
        String tenant = tenant(req, resp, false);
        if (tenant == null) return;
        byte[] raw;
        try (InputStream in = req.getInputStream()) {
            raw = in.readNBytes(MAX_BODY + 1);
        }
        if (raw.length > MAX_BODY) {
            AdminQuota.problem(resp, 400, "The body must be at most " + MAX_BODY + " bytes.");
            return;
        }
        TenantContract contract;
        try {
            contract = contract(raw, tenant);
        } catch (IllegalArgumentException e) {
            AdminQuota.problem(resp, 400, e.getMessage());
            return;
        }
        if (!change(resp, () -> control().setTenant(tenant, contract))) return;
        ObjectNode body = JSON.createObjectNode();
        body.put("tenant", tenant);
        body.put("plan", contract.plan());
        body.set("limits", bandwidths(contract.limits()));
        json(resp, 200, body);
    }

    @Override
    protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        if (!auth.authorized(req, resp)) return;
        String tenant = tenant(req, resp, true);
        if (tenant == null) return;
        if (change(resp, () -> control().invalidate(tenant))) resp.setStatus(204);
    }

    @Override
    protected void doDelete(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        if (!auth.authorized(req, resp)) return;
        if (isOverrides(req)) {
            if (change(resp, () -> control().clearOverrides())) resp.setStatus(204);
            return;
        }
        String tenant = tenant(req, resp, false);
        if (tenant == null) return;
        boolean[] cleared = new boolean[1];
        if (!change(resp, () -> cleared[0] = control().clearTenant(tenant))) return;
        if (cleared[0]) {
            resp.setStatus(204);
        } else {
            AdminQuota.problem(resp, 404, "Tenant " + tenant + " has no runtime entry.");
        }
    }

    /**
     * Runs a change: 400 for an invalid one, 503 when the shared store cannot be reached or its record
     * cannot be used; false if refused.
     */
    private static boolean change(HttpServletResponse resp, Runnable change) throws IOException {
        try {
            change.run();
            return true;
        } catch (IllegalArgumentException e) {
            AdminQuota.problem(resp, 400, e.getMessage());
        } catch (IllegalStateException e) {
            AdminQuota.problem(resp, 503, e.getMessage());
        }
        return false;
    }

    private static boolean isOverrides(HttpServletRequest req) {
        return "/admin/overrides".equals(req.getServletPath());
    }

    /**
     * The tenant id of {@code /admin/tenants/{id}} (or {@code /admin/tenants/{id}/invalidate} when
     * {@code invalidate}); null after answering 404 or 400.
     */
    private static String tenant(HttpServletRequest req, HttpServletResponse resp, boolean invalidate)
            throws IOException {
        String path = req.getPathInfo();
        String id = path == null ? "" : path.substring(1);
        if (invalidate) {
            if (!id.endsWith("/invalidate")) {
                AdminQuota.problem(resp, 404, "POST /admin/tenants/{id}/invalidate is the only POST here.");
                return null;
            }
            id = id.substring(0, id.length() - "/invalidate".length());
        }
        if (!TenantId.isValid(id)) {
            AdminQuota.problem(resp, 400, "Not a valid tenant id (1-" + TenantId.MAX_LENGTH
                    + " characters of A-Z a-z 0-9 . _ : -): " + JSON.getNodeFactory().textNode(id));
            return null;
        }
        return id;
    }

    /** The contract of a PUT body; the plan defaults to the tenant's current one, the limits to the plan's. */
    private TenantContract contract(byte[] raw, String tenant) {
        JsonNode root;
        try {
            root = JsonBody.read(raw);
        } catch (JsonProcessingException e) { // trailing data and a field given twice too
            throw new IllegalArgumentException("The body is not valid JSON (" + JsonBody.problem(e) + "); expected "
                    + EXAMPLE + ".");
        } catch (IOException e) {
            throw new IllegalArgumentException("The body could not be read.");
        }
        if (root == null || !root.isObject()) {
            throw new IllegalArgumentException("The body must be a JSON object such as " + EXAMPLE + ".");
        }
        fields(root, "", Set.of("plan", "limits"));
        String plan;
        JsonNode p = root.get("plan");
        if (p == null) {
            plan = control().tenant(tenant).map(TenantContract::plan)
                    .orElse(control().plans().tenants().defaultPlan());
        } else if (!p.isTextual()) {
            throw new IllegalArgumentException("plan must be a string, was " + p + ".");
        } else {
            plan = p.textValue();
            if (control().plans().plan(plan).isEmpty()) {
                throw new IllegalArgumentException("plan: unknown plan " + p + ", defined: "
                        + control().plans().plans().keySet() + ".");
            }
        }
        List<Bandwidth> limits = new ArrayList<>();
        JsonNode l = root.get("limits");
        if (l != null) {
            if (!l.isArray() || l.isEmpty()) {
                throw new IllegalArgumentException("limits must be a non-empty list such as " + EXAMPLE
                        + " (leave it out for the plan's limits), was " + l + ".");
            }
            for (int i = 0; i < l.size(); i++) limits.add(bandwidth(l.get(i), "limits[" + i + "]"));
        }
        return new TenantContract(plan, limits);
    }

    private static Bandwidth bandwidth(JsonNode node, String field) {
        if (!node.isObject()) throw new IllegalArgumentException(field + " must be an object, was " + node + ".");
        fields(node, field + ".", Set.of("name", "algorithm", "capacity", "refill", "period"));
        JsonNode name = node.get("name");
        if (name != null && (!name.isTextual() || name.textValue().isBlank())) {
            throw new IllegalArgumentException(field + ".name must be a non-empty string, was " + name + ".");
        }
        Algorithm algorithm = AdminQuota.algorithm(node, field + ".");
        long capacity = positive(node, field, "capacity");
        long refill = AdminQuota.refill(node, field + ".", algorithm, capacity,
                () -> positive(node, field, "refill"));
        JsonNode period = node.get("period");
        if (period == null || !period.isTextual()) {
            throw new IllegalArgumentException(field + ".period must be a string such as \"1m\", was " + period + ".");
        }
        Duration d;
        try {
            d = PlansFile.parsePeriod(period.textValue());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(field + ".period: " + e.getMessage());
        }
        String n = name == null ? field.replace("limits[", "b").replace("]", "") : name.textValue();
        try {
            return new Bandwidth(n, capacity, refill, d, algorithm);
        } catch (IllegalArgumentException e) { // a name unsafe in a header, a period past 10 years
            throw new IllegalArgumentException(field + ": " + e.getMessage());
        }
    }

    private static long positive(JsonNode node, String field, String key) {
        JsonNode n = node.get(key);
        if (n == null || !n.isIntegralNumber() || !n.canConvertToLong() || n.longValue() <= 0) {
            throw new IllegalArgumentException(field + "." + key + " must be a whole number > 0, was " + n + ".");
        }
        return n.longValue();
    }

    private static void fields(JsonNode node, String prefix, Set<String> allowed) {
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String key = it.next();
            if (!allowed.contains(key)) {
                throw new IllegalArgumentException("Unknown field " + JSON.getNodeFactory().textNode(prefix + key)
                        + "; expected " + allowed + ".");
            }
        }
    }

    private ObjectNode overrides() {
        ObjectNode body = JSON.createObjectNode();
        body.set("limits", JSON.valueToTree(LimitsReport.status(control().limitsStatus())));
        return body;
    }

    private static ArrayNode bandwidths(List<Bandwidth> limits) {
        return JSON.valueToTree(LimitsReport.bandwidths(limits));
    }

    private static void json(HttpServletResponse resp, int status, ObjectNode body) throws IOException {
        ExampleServlets.json(resp, status, JSON.writeValueAsString(body), "application/json");
    }
}

package io.quotagate.example;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quotagate.filter.servlet.QuotaFilter;
import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.GlobalQuota;
import io.quotagate.plans.PlansFile;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * {@code PUT /admin/quota} with {@code {"capacity": 1500, "refill": 1500, "period": "1m"}}: replaces
 * the hidden global quota while running (the bucket keeps its tokens, capped at the new capacity).
 * {@code GET /admin/quota} shows it. Both need {@code Authorization: Bearer <admin token>}; wrong or
 * missing: 401. Only registered when an admin token is configured (otherwise 404).
 */
final class AdminQuota extends HttpServlet {
    private static final long serialVersionUID = 1L;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int MAX_BODY = 4096;
    private static final Set<String> KEYS = Set.of("capacity", "refill", "period");

    private final transient QuotaFilter filter;
    private final byte[] token;

    AdminQuota(QuotaFilter filter, String token) {
        this.filter = Objects.requireNonNull(filter, "filter");
        this.token = token.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        if (!authorized(req, resp)) return;
        ExampleServlets.json(resp, 200, describe(filter.plans().global().map(GlobalQuota::limits).orElse(List.of())),
                "application/json");
    }

    @Override
    protected void doPut(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        if (!authorized(req, resp)) return;
        byte[] body;
        try (InputStream in = req.getInputStream()) {
            body = in.readNBytes(MAX_BODY + 1);
        }
        if (body.length > MAX_BODY) {
            problem(resp, 400, "The body must be at most " + MAX_BODY + " bytes.");
            return;
        }
        Bandwidth quota;
        try {
            quota = parse(body, currentName());
        } catch (IllegalArgumentException e) {
            problem(resp, 400, e.getMessage());
            return;
        }
        try {
            filter.setGlobalQuota(List.of(quota));
        } catch (IllegalArgumentException e) { // e.g. below a route's cost
            problem(resp, 400, e.getMessage());
            return;
        }
        ExampleServlets.json(resp, 200, describe(List.of(quota)), "application/json");
    }

    private String currentName() {
        return filter.plans().global().map(g -> g.limits().get(0).name()).orElse("api");
    }

    /** A bandwidth from {@code {"capacity": n, "refill": n, "period": "1m"}}; every mistake named. */
    static Bandwidth parse(byte[] body, String name) {
        JsonNode root;
        try {
            root = JSON.readTree(body);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("The body must be JSON: {\"capacity\": 1500, \"refill\": 1500, \"period\": \"1m\"}.");
        } catch (IOException e) {
            throw new IllegalArgumentException("The body could not be read.");
        }
        if (root == null || !root.isObject()) {
            throw new IllegalArgumentException("The body must be a JSON object: {\"capacity\": 1500, \"refill\": 1500, \"period\": \"1m\"}.");
        }
        for (Iterator<String> it = root.fieldNames(); it.hasNext(); ) {
            String key = it.next();
            if (!KEYS.contains(key)) throw new IllegalArgumentException("unknown field; expected capacity, refill and period.");
        }
        long capacity = positive(root, "capacity");
        long refill = positive(root, "refill");
        JsonNode period = root.get("period");
        if (period == null || !period.isTextual()) throw new IllegalArgumentException("period must be a string such as \"1m\".");
        Duration d;
        try {
            d = PlansFile.parsePeriod(period.textValue());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("period: " + e.getMessage().replace(period.textValue(), "…"));
        }
        return new Bandwidth(name, capacity, refill, d);
    }

    private static long positive(JsonNode root, String field) {
        JsonNode n = root.get(field);
        if (n == null || !n.isIntegralNumber() || !n.canConvertToLong() || n.longValue() <= 0) {
            throw new IllegalArgumentException(field + " must be a whole number > 0.");
        }
        return n.longValue();
    }

    private boolean authorized(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        String header = req.getHeader("Authorization");
        byte[] given = header != null && header.regionMatches(true, 0, "Bearer ", 0, 7)
                ? header.substring(7).trim().getBytes(StandardCharsets.UTF_8) : new byte[0];
        if (given.length > 0 && MessageDigest.isEqual(given, token)) return true; // constant time
        resp.setHeader("WWW-Authenticate", "Bearer realm=\"quotagate-admin\"");
        problem(resp, 401, "A valid admin bearer token is required.");
        return false;
    }

    private static String describe(List<Bandwidth> limits) throws JsonProcessingException {
        var root = JSON.createObjectNode();
        var arr = root.putArray("limits");
        for (Bandwidth b : limits) {
            var o = arr.addObject();
            o.put("name", b.name());
            o.put("capacity", b.capacity());
            o.put("refill", b.refill());
            o.put("period", b.period().toString());
        }
        return JSON.writeValueAsString(root);
    }

    private static void problem(HttpServletResponse resp, int status, String detail) throws IOException {
        var o = JSON.createObjectNode();
        o.put("type", "about:blank");
        o.put("title", status == 401 ? "Unauthorized" : "Bad Request");
        o.put("status", status);
        o.put("detail", detail);
        ExampleServlets.json(resp, status, JSON.writeValueAsString(o), "application/problem+json");
    }
}

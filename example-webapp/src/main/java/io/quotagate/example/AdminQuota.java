package io.quotagate.example;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.status.RetryAfter;
import io.quotagate.plans.Algorithm;
import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.GlobalQuota;
import io.quotagate.plans.PlansFile;
import io.quotagate.tenant.ClientAddress;
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
 * missing: 401, and after repeated wrong tokens their address gets one token a second compared for
 * a while (the others: 429 with {@code Retry-After}, {@link WrongTokenBackoff}). A body with a field
 * twice or anything after its object is refused (400, {@link JsonBody}). Every 400 names the bad
 * value as it was sent. With a shared store, a change that cannot reach it or whose stored record cannot
 * be used (damaged, too large, a newer format) answers 503 saying why, and changes nothing on any
 * instance. Only registered when an admin token is configured (otherwise 404), on the management port.
 */
final class AdminQuota extends ApiServlet {
    private static final long serialVersionUID = 1L;
    private static final ObjectMapper JSON = JsonBody.JSON;
    private static final String EXAMPLE = "{\"capacity\": 1500, \"refill\": 1500, \"period\": \"1m\"}";
    /** Wrong tokens are counted per connection address: the management port is not behind the public proxies. */
    private static final ClientAddress ADDRESSES = ClientAddress.behind(List.of());
    private static final int MAX_BODY = 4096;
    private static final Set<String> KEYS = Set.of("capacity", "refill", "period", "algorithm");

    private final transient QuotaFilter filter;
    private final byte[] token;
    private final transient WrongTokenBackoff backoff;

    AdminQuota(QuotaFilter filter, String token, WrongTokenBackoff backoff) {
        this.filter = Objects.requireNonNull(filter, "filter");
        this.token = token.getBytes(StandardCharsets.UTF_8);
        this.backoff = Objects.requireNonNull(backoff, "backoff");
    }

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        if (!authorized(req, resp)) return;
        ExampleServlets.json(resp, 200, describe(filter.control().plans().global().map(GlobalQuota::limits).orElse(List.of())),
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
            filter.control().setGlobalQuota(List.of(quota));
        } catch (IllegalArgumentException e) { // the change's own fault, e.g. below a route's cost; never the stored record's
            problem(resp, 400, e.getMessage());
            return;
        } catch (IllegalStateException e) { // the shared store cannot be reached or its record cannot be used
            problem(resp, 503, e.getMessage()); // (the message says why and how to repair): nothing changed anywhere
            return;
        }
        ExampleServlets.json(resp, 200, describe(List.of(quota)), "application/json");
    }

    private String currentName() {
        return filter.control().plans().global().map(g -> g.limits().get(0).name()).orElse("api");
    }

    /**
     * A bandwidth from {@code {"capacity": n, "refill": n, "period": "1m"}}. Every mistake is named
     * with the value as sent (JSON-encoded in the problem body, so echoing it is safe; the body is at
     * most {@value #MAX_BODY} bytes).
     */
    static Bandwidth parse(byte[] body, String name) {
        JsonNode root;
        try {
            root = JsonBody.read(body);
        } catch (JsonProcessingException e) { // a duplicate field or data after the object too
            throw new IllegalArgumentException("The body is not valid JSON (" + JsonBody.problem(e) + "); expected " + EXAMPLE + ".");
        } catch (IOException e) {
            throw new IllegalArgumentException("The body could not be read.");
        }
        if (root == null || root.isMissingNode() || !root.isObject()) {
            throw new IllegalArgumentException("The body must be a JSON object such as " + EXAMPLE + ", was "
                    + (root == null || root.isMissingNode() ? "empty" : root.toString()) + ".");
        }
        for (Iterator<String> it = root.fieldNames(); it.hasNext(); ) {
            String key = it.next();
            if (!KEYS.contains(key)) {
                throw new IllegalArgumentException("Unknown field " + JSON.getNodeFactory().textNode(key)
                        + "; expected capacity, refill and period (and optionally algorithm).");
            }
        }
        Algorithm algorithm = algorithm(root, "");
        long capacity = positive(root, "capacity");
        long refill = refill(root, "", algorithm, capacity, () -> positive(root, "refill"));
        JsonNode period = root.get("period");
        if (period == null) throw new IllegalArgumentException("period is required, a string such as \"1m\".");
        if (!period.isTextual()) throw new IllegalArgumentException("period must be a string such as \"1m\", was " + period + ".");
        Duration d;
        try {
            d = PlansFile.parsePeriod(period.textValue());
        } catch (IllegalArgumentException e) { // its message quotes the text as given
            throw new IllegalArgumentException("period: " + e.getMessage());
        }
        return new Bandwidth(name, capacity, refill, d, algorithm);
    }

    /**
     * The optional {@code algorithm} of a bandwidth in a body: {@code token-bucket} (when absent), {@code gcra} or
     * {@code sliding-window}; {@code prefix} names where the bandwidth is ({@code limits[0].}).
     */
    static Algorithm algorithm(JsonNode node, String prefix) {
        JsonNode a = node.get("algorithm");
        if (a == null) return Algorithm.TOKEN_BUCKET;
        Algorithm algorithm = a.isTextual() ? Algorithm.ofFileName(a.textValue())
                .filter(x -> x.fileName().equals(a.textValue())).orElse(null) : null;
        if (algorithm == null) {
            throw new IllegalArgumentException(prefix + "algorithm must be token-bucket, gcra or sliding-window, was " + a + ".");
        }
        return algorithm;
    }

    /** The {@code refill} of a body's bandwidth: none for a sliding window (its capacity), else required. */
    static long refill(JsonNode node, String prefix, Algorithm algorithm, long capacity,
                       java.util.function.LongSupplier required) {
        if (algorithm != Algorithm.SLIDING_WINDOW) return required.getAsLong();
        if (node.has("refill")) {
            throw new IllegalArgumentException(prefix + "refill: a sliding window takes no refill: it admits at most "
                    + "capacity in any period.");
        }
        return capacity;
    }

    private static long positive(JsonNode root, String field) {
        JsonNode n = root.get(field);
        if (n == null) throw new IllegalArgumentException(field + " is required, a whole number > 0.");
        if (!n.isIntegralNumber() || !n.canConvertToLong() || n.longValue() <= 0) {
            throw new IllegalArgumentException(field + " must be a whole number > 0, was " + n + ".");
        }
        return n.longValue();
    }

    /** Checks the bearer token (shared by every /admin/* servlet, so one lock-out covers them all). */
    boolean authorized(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        String header = req.getHeader("Authorization");
        byte[] given = header != null && header.regionMatches(true, 0, "Bearer ", 0, 7)
                ? header.substring(7).trim().getBytes(StandardCharsets.UTF_8) : new byte[0];
        if (given.length > 0) { // no token: nothing to compare, nothing guessed
            String client = ADDRESSES.of(req);
            long wait = backoff.mayCompare(client);
            if (wait > 0) { // locked out, and this second's comparison is taken: refused before the token is compared
                long seconds = RetryAfter.seconds(wait);
                resp.setHeader("Retry-After", Long.toString(seconds));
                problem(resp, 429, "Too many wrong admin tokens from this address: one token a second is compared; retry after "
                        + seconds + " s.");
                return false;
            }
            if (MessageDigest.isEqual(given, token)) { // constant time
                backoff.succeeded(client);
                return true;
            }
            backoff.failed(client);
        }
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
            o.put("algorithm", b.algorithm().fileName());
        }
        return JSON.writeValueAsString(root);
    }

    static void problem(HttpServletResponse resp, int status, String detail) throws IOException {
        var o = JSON.createObjectNode();
        o.put("type", "about:blank");
        o.put("title", switch (status) {
            case 401 -> "Unauthorized";
            case 404 -> "Not Found";
            case 429 -> "Too Many Requests";
            case 503 -> "Service Unavailable";
            default -> "Bad Request";
        });
        o.put("status", status);
        o.put("detail", detail);
        ExampleServlets.json(resp, status, JSON.writeValueAsString(o), "application/problem+json");
    }
}

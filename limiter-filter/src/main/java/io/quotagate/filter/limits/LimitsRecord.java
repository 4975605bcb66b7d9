package io.quotagate.filter.limits;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.CalendarQuota;
import io.quotagate.tenant.TenantContract;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.ZoneId;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * The shared limits record, formats 1 and 2: the JSON every instance sharing a store reads and writes (under
 * {@code <prefix>:limits} on Redis, beside its version). Documented in the README ("Several
 * instances"):
 *
 * <pre>{@code
 * {"format": 1,
 *  "base": {"fingerprint": "<sha-256 of the limits below>", "source": "plans.yml",
 *           "publishedBy": "<instance>", "publishedAt": "2026-12-01T21:00:00Z",
 *           "global": [<bandwidth>...], "guests": [...], "plans": {"free": [...]},
 *           "tenants": {"acme": {"plan": "pro", "limits": [...]}}},
 *  "overrides": {"global": [...], "plans": {...}, "tenants": {...}},
 *  "lastChange": {"by": "<instance>", "at": "...", "what": "setGlobalQuota"}}
 * }</pre>
 * A bandwidth is {@code {"name": "b0", "capacity": 20, "refill": 10, "period": "PT10S"}} (ISO-8601).
 * Format 2 adds calendar quotas: {@code base.quotas} and {@code overrides.quotas}, plan → list of
 * {@code {"name": "monthly", "limit": 100000, "per": "month", "zone": "Europe/Berlin"}}, each present
 * only when not empty. A record without any quota is written as format 1, so instances of the
 * previous version keep reading it during a rolling upgrade until the first quota appears (they then
 * refuse the record as newer, keep their last good limits, and say "upgrade this instance"). The
 * fingerprint of a base without quotas is the same in both formats.
 * {@code overrides.global} absent: the base's; {@code []}: removed. A record of a newer format, or
 * one that does not parse, is refused whole ({@link Unusable}).
 *
 * @param base        the limits part of the plans file published last
 * @param source      that file's name, for operators
 * @param publishedBy the instance that published it
 * @param publishedAt when
 * @param overrides   the runtime changes on top
 * @param lastChange  who changed what last, for operators
 */
record LimitsRecord(LimitsBase base, String source, String publishedBy, Instant publishedAt,
                    LimitOverrides overrides, Change lastChange) {
    /** The newest format this code writes and reads (see the class comment for when it writes 1). */
    static final int FORMAT = 2;
    /** The format of a record without calendar quotas. */
    static final int FORMAT_WITHOUT_QUOTAS = 1;
    private static final ObjectMapper JSON = JsonMapper.builder()
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .disable(SerializationFeature.INDENT_OUTPUT)
            .build();

    /** The last change: which instance, when, what. */
    record Change(String by, Instant at, String what) {
    }

    /** A record that cannot be used: the reason, for the log and the status. */
    static final class Unusable extends Exception {
        Unusable(String reason) {
            super(reason);
        }
    }

    /** The fingerprint of a base: SHA-256 of its canonical JSON, hex. */
    static String fingerprint(LimitsBase base) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256")
                    .digest(JSON.writeValueAsString(limitsNode(base, JSON.createObjectNode())).getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException | JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    String fingerprint() {
        return fingerprint(base);
    }

    /** The record as stored. */
    String toJson() {
        ObjectNode root = JSON.createObjectNode();
        boolean quotas = !base.quotas().isEmpty() || !overrides.quotas().isEmpty()
                || base.tenants().values().stream().anyMatch(TenantContract::hasOwnQuotas)
                || overrides.tenants().values().stream().anyMatch(TenantContract::hasOwnQuotas);
        root.put("format", quotas ? FORMAT : FORMAT_WITHOUT_QUOTAS);
        ObjectNode b = root.putObject("base");
        b.put("fingerprint", fingerprint());
        b.put("source", source);
        b.put("publishedBy", publishedBy);
        b.put("publishedAt", publishedAt.toString());
        limitsNode(base, b);
        ObjectNode o = root.putObject("overrides");
        overrides.global().ifPresent(g -> o.set("global", bandwidths(g)));
        ObjectNode plans = o.putObject("plans");
        overrides.plans().forEach((name, limits) -> plans.set(name, bandwidths(limits)));
        o.set("tenants", tenants(overrides.tenants()));
        if (!overrides.quotas().isEmpty()) o.set("quotas", quotaPlans(overrides.quotas()));
        ObjectNode c = root.putObject("lastChange");
        c.put("by", lastChange.by());
        c.put("at", lastChange.at().toString());
        c.put("what", lastChange.what());
        try {
            return JSON.writeValueAsString(root);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Parses a stored record, refusing anything but a complete record of {@link #FORMAT}. */
    static LimitsRecord parse(String json) throws Unusable {
        JsonNode root;
        try {
            root = JSON.readTree(json);
        } catch (JsonProcessingException e) {
            throw new Unusable("not JSON: " + e.getOriginalMessage());
        }
        if (root == null || !root.isObject()) throw new Unusable("not a JSON object");
        JsonNode format = root.get("format");
        if (format == null || !format.isInt()) throw new Unusable("format: missing or not a whole number");
        if (format.intValue() > FORMAT) {
            throw new Unusable("format " + format.intValue() + " is newer than this version of quotagate reads ("
                    + FORMAT + "): upgrade this instance");
        }
        if (format.intValue() != FORMAT && format.intValue() != FORMAT_WITHOUT_QUOTAS) {
            throw new Unusable("format " + format.intValue() + " is unknown");
        }
        boolean quotas = format.intValue() >= FORMAT;
        fields(root, "", Set.of("format", "base", "overrides", "lastChange"));
        try {
            JsonNode b = object(root, "base");
            Set<String> baseFields = Set.of("fingerprint", "source", "publishedBy", "publishedAt", "global", "guests",
                    "plans", "tenants");
            fields(b, "base.", quotas ? with(baseFields, "quotas") : baseFields);
            LimitsBase base = new LimitsBase(bandwidths(b.get("global"), "base.global"),
                    bandwidths(b.get("guests"), "base.guests"), plans(b.get("plans"), "base.plans"),
                    tenants(b.get("tenants"), "base.tenants", quotas), quotaPlans(b.get("quotas"), "base.quotas"));
            String fingerprint = text(b, "fingerprint", "base.");
            if (!fingerprint.equals(fingerprint(base))) {
                throw new Unusable("base.fingerprint does not match the base's limits (edited by hand?)");
            }
            JsonNode o = object(root, "overrides");
            Set<String> overrideFields = Set.of("global", "plans", "tenants");
            fields(o, "overrides.", quotas ? with(overrideFields, "quotas") : overrideFields);
            Optional<List<Bandwidth>> global = o.has("global")
                    ? Optional.of(bandwidths(o.get("global"), "overrides.global")) : Optional.empty();
            LimitOverrides overrides = new LimitOverrides(global, plans(o.get("plans"), "overrides.plans"),
                    tenants(o.get("tenants"), "overrides.tenants", quotas), quotaPlans(o.get("quotas"), "overrides.quotas"));
            JsonNode c = object(root, "lastChange");
            fields(c, "lastChange.", Set.of("by", "at", "what"));
            return new LimitsRecord(base, text(b, "source", "base."), text(b, "publishedBy", "base."),
                    instant(b, "publishedAt", "base."), overrides,
                    new Change(text(c, "by", "lastChange."), instant(c, "at", "lastChange."),
                            text(c, "what", "lastChange.")));
        } catch (IllegalArgumentException invalid) {
            throw new Unusable(invalid.getMessage());
        }
    }

    private static ObjectNode limitsNode(LimitsBase base, ObjectNode into) {
        into.set("global", bandwidths(base.global()));
        into.set("guests", bandwidths(base.guests()));
        ObjectNode plans = into.putObject("plans");
        base.plans().forEach((name, limits) -> plans.set(name, bandwidths(limits)));
        into.set("tenants", tenants(base.tenants()));
        // only when there are some: a base without quotas keeps its format-1 fingerprint
        if (!base.quotas().isEmpty()) into.set("quotas", quotaPlans(base.quotas()));
        return into;
    }

    private static Set<String> with(Set<String> names, String more) {
        Set<String> all = new java.util.HashSet<>(names);
        all.add(more);
        return all;
    }

    private static ObjectNode quotaPlans(Map<String, List<CalendarQuota>> quotas) {
        ObjectNode plans = JSON.createObjectNode();
        quotas.forEach((plan, list) -> plans.set(plan, quotaList(list)));
        return plans;
    }

    private static ArrayNode quotaList(List<CalendarQuota> list) {
        ArrayNode a = JSON.createArrayNode();
        for (CalendarQuota q : list) {
            a.addObject().put("name", q.name()).put("limit", q.limit())
                    .put("per", q.per().name().toLowerCase(Locale.ROOT)).put("zone", q.zone().getId());
        }
        return a;
    }

    /** {@code plan → quotas}; none if {@code node} is absent. */
    private static Map<String, List<CalendarQuota>> quotaPlans(JsonNode node, String field) {
        Map<String, List<CalendarQuota>> out = new TreeMap<>();
        if (node == null) return out;
        if (!node.isObject()) throw new IllegalArgumentException(field + ": not an object");
        for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            out.put(e.getKey(), quotaList(e.getValue(), field + "." + e.getKey()));
        }
        return out;
    }

    private static List<CalendarQuota> quotaList(JsonNode node, String f) {
        if (!node.isArray()) throw new IllegalArgumentException(f + ": not a list");
        List<CalendarQuota> list = new ArrayList<>();
        for (int i = 0; i < node.size(); i++) {
            String qf = f + "[" + i + "]";
            JsonNode q = node.get(i);
            if (!q.isObject()) throw new IllegalArgumentException(qf + ": not an object");
            fields(q, qf + ".", Set.of("name", "limit", "per", "zone"));
            CalendarQuota.Per per;
            ZoneId zone;
            try {
                per = CalendarQuota.Per.valueOf(text(q, "per", qf + ".").toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException bad) {
                throw new IllegalArgumentException(qf + ".per: not day, week or month");
            }
            try {
                zone = ZoneId.of(text(q, "zone", qf + "."));
            } catch (DateTimeException bad) {
                throw new IllegalArgumentException(qf + ".zone: not a time zone");
            }
            try {
                list.add(new CalendarQuota(text(q, "name", qf + "."), whole(q, "limit", qf), per, zone));
            } catch (IllegalArgumentException bad) {
                throw new IllegalArgumentException(qf + ": " + bad.getMessage());
            }
        }
        return list;
    }

    private static ObjectNode tenants(Map<String, TenantContract> tenants) {
        ObjectNode t = JSON.createObjectNode();
        tenants.forEach((tenant, c) -> {
            ObjectNode entry = t.putObject(tenant);
            entry.put("plan", c.plan());
            if (c.hasOwnLimits()) entry.set("limits", bandwidths(c.limits()));
            if (c.hasOwnQuotas()) entry.set("quotas", quotaList(c.quotas()));
        });
        return t;
    }

    private static ArrayNode bandwidths(List<Bandwidth> limits) {
        ArrayNode a = JSON.createArrayNode();
        for (Bandwidth bw : limits) {
            a.addObject().put("name", bw.name()).put("capacity", bw.capacity()).put("refill", bw.refill())
                    .put("period", bw.period().toString());
        }
        return a;
    }

    private static List<Bandwidth> bandwidths(JsonNode node, String field) {
        if (node == null || !node.isArray()) throw new IllegalArgumentException(field + ": missing or not a list");
        List<Bandwidth> out = new ArrayList<>();
        for (int i = 0; i < node.size(); i++) {
            String f = field + "[" + i + "]";
            JsonNode bw = node.get(i);
            if (!bw.isObject()) throw new IllegalArgumentException(f + ": not an object");
            fields(bw, f + ".", Set.of("name", "capacity", "refill", "period"));
            Duration period;
            try {
                period = Duration.parse(text(bw, "period", f + "."));
            } catch (DateTimeParseException e) {
                throw new IllegalArgumentException(f + ".period: not an ISO-8601 duration");
            }
            try {
                out.add(new Bandwidth(text(bw, "name", f + "."), whole(bw, "capacity", f), whole(bw, "refill", f), period));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(f + ": " + e.getMessage());
            }
        }
        return out;
    }

    private static Map<String, List<Bandwidth>> plans(JsonNode node, String field) {
        if (node == null || !node.isObject()) throw new IllegalArgumentException(field + ": missing or not an object");
        Map<String, List<Bandwidth>> out = new TreeMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            out.put(e.getKey(), bandwidths(e.getValue(), field + "." + e.getKey()));
        }
        return out;
    }

    private static Map<String, TenantContract> tenants(JsonNode node, String field, boolean quotas) {
        if (node == null || !node.isObject()) throw new IllegalArgumentException(field + ": missing or not an object");
        Map<String, TenantContract> out = new TreeMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            String f = field + "." + e.getKey();
            if (!e.getValue().isObject()) throw new IllegalArgumentException(f + ": not an object");
            fields(e.getValue(), f + ".", quotas ? Set.of("plan", "limits", "quotas") : Set.of("plan", "limits"));
            List<Bandwidth> limits = e.getValue().has("limits") ? bandwidths(e.getValue().get("limits"), f + ".limits")
                    : List.of();
            List<CalendarQuota> own = e.getValue().has("quotas") ? quotaList(e.getValue().get("quotas"), f + ".quotas")
                    : null;
            out.put(e.getKey(), new TenantContract(text(e.getValue(), "plan", f + "."), limits, own));
        }
        return out;
    }

    private static JsonNode object(JsonNode parent, String name) {
        JsonNode n = parent.get(name);
        if (n == null || !n.isObject()) throw new IllegalArgumentException(name + ": missing or not an object");
        return n;
    }

    private static void fields(JsonNode node, String prefix, Set<String> allowed) {
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String name = it.next();
            if (!allowed.contains(name)) throw new IllegalArgumentException(prefix + name + ": unknown field");
        }
    }

    private static String text(JsonNode node, String name, String prefix) {
        JsonNode n = node.get(name);
        if (n == null || !n.isTextual()) throw new IllegalArgumentException(prefix + name + ": missing or not text");
        return n.textValue();
    }

    private static long whole(JsonNode node, String name, String prefix) {
        JsonNode n = node.get(name);
        if (n == null || !n.canConvertToExactIntegral() || !n.canConvertToLong()) {
            throw new IllegalArgumentException(prefix + "." + name + ": missing or not a whole number");
        }
        return n.longValue();
    }

    private static Instant instant(JsonNode node, String name, String prefix) {
        try {
            return Instant.parse(text(node, name, prefix));
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException(prefix + name + ": not an ISO-8601 instant");
        }
    }
}

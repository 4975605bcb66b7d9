package io.quotagate.filter.internal.limits;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.quotagate.filter.status.LimitOverrides;
import io.quotagate.plans.Algorithm;
import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.CalendarQuota;
import io.quotagate.plans.ScopedLimit;
import io.quotagate.tenant.TenantContract;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.DateTimeException;
import java.time.DayOfWeek;
import java.time.Duration;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * The shared limits record, formats 1 to 4: the JSON every instance sharing a store reads and writes (under
 * {@code <prefix>:limits} on Redis, beside its version). Documented in docs/changing-limits.md
 * ("Several instances"):
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
 * Format 3 adds the file's per-user and route limits: {@code base.perUser}, plan → list of bandwidths,
 * and {@code base.routes}, route name → list of {@code {"name": "b0", "capacity": 10, "refill": 10,
 * "period": "PT1H", "per": "tenant"}} ({@code per}: {@code tenant}, {@code user} or
 * {@code client-address}; the bandwidths of one {@code per} make one bucket), each present only when
 * not empty. It is written only when the base has some, with the same rule for older instances as
 * format 2; the fingerprint of a base without them is that of formats 1 and 2. They are the file's
 * only: no runtime change sets them, so {@code overrides} has no such fields.
 * Format 4 adds each bandwidth's algorithm, billing anchors and tenant zones: {@code "algorithm": "gcra"} or
 * {@code "sliding-window"} on a bandwidth that is not a token bucket (a sliding window's {@code refill} is its
 * {@code capacity}; a bandwidth without the field is a token bucket, as every bandwidth of formats 1 to 3 is), a
 * quota's {@code "anchor": {"day": 15, "time": "09:00"}} ({@code weekday} for a week), present only on an anchored
 * quota, and a tenant's {@code "zone"}, present only when set. It is written only when some bandwidth has another
 * algorithm, some quota is anchored or some tenant has a zone, with the same rule for older instances as formats 2
 * and 3; the fingerprint of a base without them is that of formats 1 to 3.
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
    /** The newest format this code writes and reads (see the class comment for when it writes 1, 2 or 3). */
    static final int FORMAT = 4;
    /** The format of a record with per-user or route limits, token buckets only, no anchored quota or tenant zone. */
    static final int FORMAT_SCOPED = 3;
    /** The format of a record with calendar quotas but without per-user or route limits. */
    static final int FORMAT_WITH_QUOTAS = 2;
    /** The format of a record without calendar quotas, per-user or route limits. */
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
        private final boolean newerFormat;

        Unusable(String reason) {
            this(reason, false);
        }

        private Unusable(String reason, boolean newerFormat) {
            super(reason);
            this.newerFormat = newerFormat;
        }

        /** True for a record of a format newer than this code reads: written by a newer quotagate, not damaged. */
        boolean newerFormat() {
            return newerFormat;
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
        boolean scoped = !base.perUser().isEmpty() || !base.routes().isEmpty();
        boolean anchored = anchored(base.quotas(), base.tenants()) || anchored(overrides.quotas(), overrides.tenants());
        root.put("format", otherAlgorithms() || anchored ? FORMAT : scoped ? FORMAT_SCOPED
                : quotas ? FORMAT_WITH_QUOTAS : FORMAT_WITHOUT_QUOTAS);
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

    /** True if some bandwidth of the record is not a token bucket (format 4). */
    private boolean otherAlgorithms() {
        List<List<Bandwidth>> all = new ArrayList<>();
        all.add(base.global());
        all.add(base.guests());
        all.addAll(base.plans().values());
        all.addAll(base.perUser().values());
        base.routes().values().forEach(route -> route.forEach(l -> all.add(l.limits())));
        base.tenants().values().forEach(c -> all.add(c.limits()));
        overrides.global().ifPresent(all::add);
        all.addAll(overrides.plans().values());
        overrides.tenants().values().forEach(c -> all.add(c.limits()));
        return all.stream().flatMap(List::stream).anyMatch(b -> b.algorithm() != Algorithm.TOKEN_BUCKET);
    }

    /**
     * Parses a stored record, refusing anything but a complete record of a known format. The text is
     * hostile input (anyone who can write to the store wrote it): every way it can be wrong is an
     * {@link Unusable}, never another exception.
     */
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
                    + FORMAT + "): upgrade this instance", true);
        }
        if (format.intValue() < FORMAT_WITHOUT_QUOTAS) {
            throw new Unusable("format " + format.intValue() + " is unknown");
        }
        boolean quotas = format.intValue() >= FORMAT_WITH_QUOTAS;
        boolean scoped = format.intValue() >= FORMAT_SCOPED;
        boolean anchors = format.intValue() >= FORMAT;
        try {
            fields(root, "", Set.of("format", "base", "overrides", "lastChange"));
            JsonNode b = object(root, "base");
            Set<String> baseFields = Set.of("fingerprint", "source", "publishedBy", "publishedAt", "global", "guests",
                    "plans", "tenants");
            if (quotas) baseFields = with(baseFields, "quotas");
            if (scoped) baseFields = with(with(baseFields, "perUser"), "routes");
            fields(b, "base.", baseFields);
            Map<String, List<Bandwidth>> plans = plans(b.get("plans"), "base.plans");
            Map<String, List<Bandwidth>> perUser = b.has("perUser") ? plans(b.get("perUser"), "base.perUser") : Map.of();
            for (String plan : perUser.keySet()) {
                if (!plans.containsKey(plan)) {
                    throw new IllegalArgumentException("base.perUser." + plan + ": not a plan of base.plans");
                }
            }
            LimitsBase base = new LimitsBase(bandwidths(b.get("global"), "base.global"),
                    bandwidths(b.get("guests"), "base.guests"), plans,
                    tenants(b.get("tenants"), "base.tenants", quotas, anchors), quotaPlans(b.get("quotas"), "base.quotas", anchors),
                    perUser, routes(b.get("routes"), "base.routes"));
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
                    tenants(o.get("tenants"), "overrides.tenants", quotas, anchors),
                    quotaPlans(o.get("quotas"), "overrides.quotas", anchors));
            JsonNode c = object(root, "lastChange");
            fields(c, "lastChange.", Set.of("by", "at", "what"));
            return new LimitsRecord(base, text(b, "source", "base."), text(b, "publishedBy", "base."),
                    instant(b, "publishedAt", "base."), overrides,
                    new Change(text(c, "by", "lastChange."), instant(c, "at", "lastChange."),
                            text(c, "what", "lastChange.")));
        } catch (IllegalArgumentException invalid) {
            throw new Unusable(invalid.getMessage());
        } catch (RuntimeException malformed) { // whoever can write to the store wrote it: no failure of ours escapes
            throw new Unusable("malformed: " + malformed);
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
        // the same for per-user and route limits (format 3)
        if (!base.perUser().isEmpty()) {
            ObjectNode perUser = into.putObject("perUser");
            base.perUser().forEach((name, limits) -> perUser.set(name, bandwidths(limits)));
        }
        if (!base.routes().isEmpty()) {
            ObjectNode routes = into.putObject("routes");
            base.routes().forEach((name, limits) -> routes.set(name, scopedLimits(limits)));
        }
        return into;
    }

    /** A route's own limits, one entry per bandwidth with its {@code per}. */
    private static ArrayNode scopedLimits(List<ScopedLimit> limits) {
        ArrayNode a = JSON.createArrayNode();
        for (ScopedLimit limit : limits) {
            for (Bandwidth bw : limit.limits()) {
                algorithm(a.addObject().put("name", bw.name()), bw).put("capacity", bw.capacity())
                        .put("refill", bw.refill()).put("period", bw.period().toString()).put("per", limit.per().toString());
            }
        }
        return a;
    }

    /** {@code route → its own limits}; none if {@code node} is absent. */
    private static Map<String, List<ScopedLimit>> routes(JsonNode node, String field) {
        Map<String, List<ScopedLimit>> out = new TreeMap<>();
        if (node == null) return out;
        if (!node.isObject()) throw new IllegalArgumentException(field + ": not an object");
        for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            String f = field + "." + e.getKey();
            if (!e.getValue().isArray() || e.getValue().isEmpty()) {
                throw new IllegalArgumentException(f + ": missing or not a list of at least one limit");
            }
            // the bandwidths of one per make one bucket, in the order the scopes first appear (as the file reads)
            Map<ScopedLimit.Scope, List<Bandwidth>> byScope = new LinkedHashMap<>();
            Set<String> names = new java.util.HashSet<>();
            for (int i = 0; i < e.getValue().size(); i++) {
                String lf = f + "[" + i + "]";
                JsonNode l = e.getValue().get(i);
                if (!l.isObject()) throw new IllegalArgumentException(lf + ": not an object");
                fields(l, lf + ".", Set.of("name", "algorithm", "capacity", "refill", "period", "per"));
                ScopedLimit.Scope per = scope(text(l, "per", lf + "."), lf + ".per");
                Bandwidth bw = bandwidth(l, lf);
                if (!names.add(bw.name())) throw new IllegalArgumentException(lf + ".name: duplicate name '" + bw.name() + "'");
                byScope.computeIfAbsent(per, s -> new ArrayList<>()).add(bw);
            }
            List<ScopedLimit> limits = new ArrayList<>();
            byScope.forEach((per, bws) -> limits.add(new ScopedLimit(per, bws)));
            out.put(e.getKey(), limits);
        }
        return out;
    }

    private static ScopedLimit.Scope scope(String text, String field) {
        for (ScopedLimit.Scope s : ScopedLimit.Scope.values()) {
            if (s.toString().equals(text)) return s;
        }
        throw new IllegalArgumentException(field + ": not tenant, user or client-address");
    }

    private static Set<String> with(Set<String> names, String more) {
        Set<String> all = new java.util.HashSet<>(names);
        all.add(more);
        return all;
    }

    /** True if a quota has an anchor or a tenant a zone (format 4). */
    private static boolean anchored(Map<String, List<CalendarQuota>> quotas, Map<String, TenantContract> tenants) {
        return quotas.values().stream().flatMap(List::stream).anyMatch(CalendarQuota::anchored)
                || tenants.values().stream().anyMatch(c -> c.zone() != null
                || c.hasOwnQuotas() && c.quotas().stream().anyMatch(CalendarQuota::anchored));
    }

    private static ObjectNode quotaPlans(Map<String, List<CalendarQuota>> quotas) {
        ObjectNode plans = JSON.createObjectNode();
        quotas.forEach((plan, list) -> plans.set(plan, quotaList(list)));
        return plans;
    }

    private static ArrayNode quotaList(List<CalendarQuota> list) {
        ArrayNode a = JSON.createArrayNode();
        for (CalendarQuota q : list) {
            ObjectNode o = a.addObject().put("name", q.name()).put("limit", q.limit())
                    .put("per", q.per().name().toLowerCase(Locale.ROOT)).put("zone", q.zone().getId());
            // only when anchored: an unanchored quota keeps the fingerprint of formats 2 and 3
            if (q.anchored()) {
                ObjectNode anchor = o.putObject("anchor");
                if (q.per() == CalendarQuota.Per.MONTH) anchor.put("day", q.anchor().day());
                if (q.per() == CalendarQuota.Per.WEEK) {
                    anchor.put("weekday", q.anchor().weekday().name().toLowerCase(Locale.ROOT));
                }
                anchor.put("time", q.anchor().time().toString());
            }
        }
        return a;
    }

    /** {@code plan → quotas}; none if {@code node} is absent. */
    private static Map<String, List<CalendarQuota>> quotaPlans(JsonNode node, String field, boolean anchors) {
        Map<String, List<CalendarQuota>> out = new TreeMap<>();
        if (node == null) return out;
        if (!node.isObject()) throw new IllegalArgumentException(field + ": not an object");
        for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            out.put(e.getKey(), quotaList(e.getValue(), field + "." + e.getKey(), anchors));
        }
        return out;
    }

    private static List<CalendarQuota> quotaList(JsonNode node, String f, boolean anchors) {
        if (!node.isArray()) throw new IllegalArgumentException(f + ": not a list");
        List<CalendarQuota> list = new ArrayList<>();
        for (int i = 0; i < node.size(); i++) {
            String qf = f + "[" + i + "]";
            JsonNode q = node.get(i);
            if (!q.isObject()) throw new IllegalArgumentException(qf + ": not an object");
            fields(q, qf + ".", anchors ? Set.of("name", "limit", "per", "zone", "anchor") : Set.of("name", "limit", "per", "zone"));
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
            String name = text(q, "name", qf + ".");
            long limit = whole(q, "limit", qf);
            try {
                list.add(new CalendarQuota(name, limit, per, zone, q.has("anchor") ? anchor(q.get("anchor"), qf) : null));
            } catch (IllegalArgumentException bad) {
                throw new IllegalArgumentException(qf + ": " + bad.getMessage());
            }
        }
        return list;
    }

    /** A quota's {@code anchor}: {@code day}, {@code weekday} and {@code time}, each optional. */
    private static CalendarQuota.Anchor anchor(JsonNode a, String qf) {
        String f = qf + ".anchor";
        if (!a.isObject()) throw new IllegalArgumentException(f + ": not an object");
        fields(a, f + ".", Set.of("day", "weekday", "time"));
        int day = a.has("day") ? (int) Math.max(-1, Math.min(whole(a, "day", f), 32)) : 0;
        DayOfWeek weekday;
        LocalTime time;
        try {
            weekday = a.has("weekday") ? DayOfWeek.valueOf(text(a, "weekday", f + ".").toUpperCase(Locale.ROOT)) : null;
        } catch (IllegalArgumentException bad) {
            throw new IllegalArgumentException(f + ".weekday: not a weekday");
        }
        try {
            time = a.has("time") ? LocalTime.parse(text(a, "time", f + ".")) : LocalTime.MIDNIGHT;
        } catch (DateTimeParseException bad) {
            throw new IllegalArgumentException(f + ".time: not a local time HH:MM");
        }
        try {
            return new CalendarQuota.Anchor(day, weekday, time);
        } catch (IllegalArgumentException bad) {
            throw new IllegalArgumentException(f + ": " + bad.getMessage());
        }
    }

    private static ObjectNode tenants(Map<String, TenantContract> tenants) {
        ObjectNode t = JSON.createObjectNode();
        tenants.forEach((tenant, c) -> {
            ObjectNode entry = t.putObject(tenant);
            entry.put("plan", c.plan());
            if (c.hasOwnLimits()) entry.set("limits", bandwidths(c.limits()));
            if (c.hasOwnQuotas()) entry.set("quotas", quotaList(c.quotas()));
            if (c.zone() != null) entry.put("zone", c.zone().getId());
        });
        return t;
    }

    private static ArrayNode bandwidths(List<Bandwidth> limits) {
        ArrayNode a = JSON.createArrayNode();
        for (Bandwidth bw : limits) {
            algorithm(a.addObject().put("name", bw.name()), bw).put("capacity", bw.capacity())
                    .put("refill", bw.refill()).put("period", bw.period().toString());
        }
        return a;
    }

    /** A bandwidth's {@code algorithm}, written only when it is not a token bucket (so older records stay the same). */
    private static ObjectNode algorithm(ObjectNode into, Bandwidth bw) {
        if (bw.algorithm() != Algorithm.TOKEN_BUCKET) into.put("algorithm", bw.algorithm().fileName());
        return into;
    }

    private static List<Bandwidth> bandwidths(JsonNode node, String field) {
        if (node == null || !node.isArray()) throw new IllegalArgumentException(field + ": missing or not a list");
        List<Bandwidth> out = new ArrayList<>();
        for (int i = 0; i < node.size(); i++) {
            String f = field + "[" + i + "]";
            JsonNode bw = node.get(i);
            if (!bw.isObject()) throw new IllegalArgumentException(f + ": not an object");
            fields(bw, f + ".", Set.of("name", "algorithm", "capacity", "refill", "period"));
            out.add(bandwidth(bw, f));
        }
        return out;
    }

    /**
     * One bandwidth's {@code name}, {@code algorithm} (a token bucket when absent, as in every record before format 4),
     * {@code capacity}, {@code refill} and {@code period} (other fields checked by the caller).
     */
    private static Bandwidth bandwidth(JsonNode bw, String f) {
        Duration period;
        try {
            period = Duration.parse(text(bw, "period", f + "."));
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException(f + ".period: not an ISO-8601 duration");
        }
        // read before the try: their own errors name the field already
        String name = text(bw, "name", f + ".");
        long capacity = whole(bw, "capacity", f);
        long refill = whole(bw, "refill", f);
        Algorithm algorithm = Algorithm.TOKEN_BUCKET;
        if (bw.has("algorithm")) {
            String text = text(bw, "algorithm", f + ".");
            algorithm = Algorithm.ofFileName(text).filter(a -> a.fileName().equals(text))
                    .orElseThrow(() -> new IllegalArgumentException(f + ".algorithm: not token-bucket, gcra or sliding-window"));
        }
        try {
            return new Bandwidth(name, capacity, refill, period, algorithm);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(f + ": " + e.getMessage());
        }
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

    private static Map<String, TenantContract> tenants(JsonNode node, String field, boolean quotas, boolean anchors) {
        if (node == null || !node.isObject()) throw new IllegalArgumentException(field + ": missing or not an object");
        Map<String, TenantContract> out = new TreeMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            String f = field + "." + e.getKey();
            if (!e.getValue().isObject()) throw new IllegalArgumentException(f + ": not an object");
            fields(e.getValue(), f + ".", anchors ? Set.of("plan", "limits", "quotas", "zone")
                    : quotas ? Set.of("plan", "limits", "quotas") : Set.of("plan", "limits"));
            List<Bandwidth> limits = e.getValue().has("limits") ? bandwidths(e.getValue().get("limits"), f + ".limits")
                    : List.of();
            List<CalendarQuota> own = e.getValue().has("quotas") ? quotaList(e.getValue().get("quotas"), f + ".quotas", anchors)
                    : null;
            ZoneId zone;
            try {
                zone = e.getValue().has("zone") ? ZoneId.of(text(e.getValue(), "zone", f + ".")) : null;
            } catch (DateTimeException bad) {
                throw new IllegalArgumentException(f + ".zone: not a time zone");
            }
            out.put(e.getKey(), new TenantContract(text(e.getValue(), "plan", f + "."), limits, own, zone));
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

package io.quotagate.plans;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.quotagate.plans.YamlNode.Mapping;
import io.quotagate.plans.YamlNode.Scalar;
import io.quotagate.plans.YamlNode.Sequence;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Loads and validates a plans file (YAML, format in the README). Every mistake fails the load with
 * one {@link InvalidPlansException} naming the file, the line and the field, so a misconfigured
 * service refuses to start instead of limiting the wrong way.
 */
public final class PlansFile {
    /** Prefix of a location that names a class-path resource rather than a file. */
    public static final String CLASSPATH_PREFIX = "classpath:";
    /**
     * The largest plans file loaded unless another limit is given: 1 MiB. Real plans files are a few
     * kilobytes; a 10 MB one took the YAML parser seconds and most of a core, during a hot reload too.
     */
    public static final long DEFAULT_MAX_BYTES = 1L << 20;

    private static final YAMLFactory YAML = YAMLFactory.builder().build();
    private static final Pattern PERIOD = Pattern.compile("(\\d+)(ms|s|m|h|d)");
    private static final Pattern NAME = Pattern.compile("[a-z][a-z0-9_-]{0,31}");
    private static final Pattern METHOD = Pattern.compile("[A-Z]{1,16}");
    private static final Pattern HEADER_NAME = Pattern.compile("[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}");
    private static final Pattern HOST_SUFFIX = Pattern.compile("(\\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+");
    private static final Pattern PATH_PREFIX = Pattern.compile("/([A-Za-z0-9._~-]+/)*");
    /** Each resolver type and the options it takes. */
    private static final Map<String, Set<String>> RESOLVER_OPTIONS = Map.of(
            "header", Set.of("name"),
            "api-key", Set.of("header"),
            "host", Set.of("suffix"),
            "path", Set.of("prefix"),
            "jwt-claim", Set.of("claim", "header", "secret-env", "secret-file", "public-key-file", "jwks-file",
                    "verify", "issuer", "audience"),
            "principal", Set.of(),
            "attribute", Set.of("name"));
    /**
     * The options of a {@code jwt} resolver that give its verification key, in the order they are
     * tried; a verifying resolver has exactly one of them.
     */
    public static final List<String> JWT_KEY_SOURCES = List.of("secret-env", "secret-file", "public-key-file", "jwks-file");
    /** The largest {@code groups.<g>.queue.size}: each waiting request holds a server thread. */
    static final int MAX_QUEUE_SIZE = 10_000;
    /** The longest {@code groups.<g>.queue.max-wait}. */
    static final Duration MAX_QUEUE_WAIT = Duration.ofMinutes(1);

    private final String source;

    private PlansFile(String source) {
        this.source = source;
    }

    /**
     * Loads plans from {@code classpath:<resource>} or a file path, at most {@link #DEFAULT_MAX_BYTES}.
     *
     * @throws InvalidPlansException if the file is missing, too large or invalid
     */
    public static Plans load(String location) {
        return load(location, DEFAULT_MAX_BYTES);
    }

    /**
     * Loads plans from {@code classpath:<resource>} or a file path, refusing one larger than
     * {@code maxBytes} before it is parsed (a resource is read no further than one byte past it).
     *
     * @throws InvalidPlansException    if the file is missing, larger than {@code maxBytes} or invalid
     * @throws IllegalArgumentException if {@code maxBytes} is not between 1 and {@code Integer.MAX_VALUE - 1}
     */
    public static Plans load(String location, long maxBytes) {
        checkMaxBytes(maxBytes);
        if (location == null || location.isBlank()) {
            throw new InvalidPlansException("<plans>", 0, "", "no plans file given");
        }
        if (location.startsWith(CLASSPATH_PREFIX)) {
            String resource = location.substring(CLASSPATH_PREFIX.length()).replaceFirst("^/", "");
            ClassLoader loader = Thread.currentThread().getContextClassLoader();
            if (loader == null) loader = PlansFile.class.getClassLoader();
            String text;
            try (InputStream in = loader.getResourceAsStream(resource)) {
                if (in == null) throw new InvalidPlansException(location, 0, "", "no such class-path resource");
                text = readAtMost(location, in, maxBytes);
            } catch (IOException e) {
                throw new InvalidPlansException(location, 0, "", "cannot read: " + e.getMessage());
            }
            return parse(location, text);
        }
        return load(Path.of(location), maxBytes);
    }

    /**
     * Loads plans from a file, at most {@link #DEFAULT_MAX_BYTES}.
     *
     * @throws InvalidPlansException if the file is missing, too large or invalid
     */
    public static Plans load(Path file) {
        return load(file, DEFAULT_MAX_BYTES);
    }

    /**
     * Loads plans from a file, refusing one larger than {@code maxBytes} before it is parsed: the size
     * is taken from the file's attributes, and the read stops one byte past the limit (for a file that
     * grows meanwhile, or a pipe whose size is unknown). The refusal names the file, its size and the
     * limit.
     *
     * @throws InvalidPlansException    if the file is missing, larger than {@code maxBytes} or invalid
     * @throws IllegalArgumentException if {@code maxBytes} is not between 1 and {@code Integer.MAX_VALUE - 1}
     */
    public static Plans load(Path file, long maxBytes) {
        checkMaxBytes(maxBytes);
        String source = file.toString();
        String text;
        try {
            long size = Files.size(file);
            if (size > maxBytes) throw tooLarge(source, size, maxBytes);
            try (InputStream in = Files.newInputStream(file)) {
                text = readAtMost(source, in, maxBytes);
            }
        } catch (IOException | UncheckedIOException e) {
            throw new InvalidPlansException(source, 0, "", "cannot read: " + e);
        }
        return parse(source, text);
    }

    /** The text, read no further than one byte past {@code maxBytes} (a size not known before, or grown meanwhile). */
    private static String readAtMost(String source, InputStream in, long maxBytes) throws IOException {
        byte[] bytes = in.readNBytes((int) maxBytes + 1);
        if (bytes.length > maxBytes) throw tooLarge(source, -1, maxBytes);
        return decode(source, bytes);
    }

    private static void checkMaxBytes(long maxBytes) {
        if (maxBytes <= 0 || maxBytes >= Integer.MAX_VALUE) {
            throw new IllegalArgumentException("the plans file size limit must be 1 to " + (Integer.MAX_VALUE - 1)
                    + " bytes, was " + maxBytes);
        }
    }

    /** {@code size} -1: not known (a class-path resource, a file that grew while it was read). */
    private static InvalidPlansException tooLarge(String source, long size, long maxBytes) {
        return new InvalidPlansException(source, 0, "", "the file is " + (size < 0 ? "more than " + maxBytes : size)
                + " bytes, over the limit of " + maxBytes + " bytes; it was not parsed (raise the limit if it is meant to be this large)");
    }

    /** Strict UTF-8, as {@code Files.readString}: a malformed byte fails the load instead of becoming U+FFFD. */
    private static String decode(String source, byte[] bytes) {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            throw new InvalidPlansException(source, 0, "", "cannot read: " + e);
        }
    }

    /**
     * Parses plans from YAML text.
     *
     * @param source the name used in error messages (usually the file name)
     * @throws InvalidPlansException if the text is not a valid plans file
     */
    public static Plans parse(String source, String yaml) {
        PlansFile f = new PlansFile(source);
        return f.plans(f.tree(yaml));
    }

    // ---- YAML text -> tree with lines -------------------------------------------------------

    private YamlNode tree(String yaml) {
        try (JsonParser p = YAML.createParser(yaml)) {
            if (p.nextToken() == null) throw error(0, "", "the file is empty");
            YamlNode root = node(p);
            if (p.nextToken() != null) throw error(line(p), "", "only one YAML document is allowed");
            return root;
        } catch (JsonProcessingException e) {
            int line = e.getLocation() == null ? 0 : e.getLocation().getLineNr();
            throw error(line, "", "not valid YAML: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw error(0, "", "cannot read: " + e.getMessage());
        }
    }

    private YamlNode node(JsonParser p) throws IOException {
        int line = line(p);
        JsonToken t = p.currentToken();
        switch (t) {
            case START_OBJECT -> {
                Mapping m = new Mapping(new LinkedHashMap<>(), new LinkedHashMap<>(), line);
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String key = p.currentName();
                    int keyLine = line(p);
                    if (m.entries().containsKey(key)) throw error(keyLine, key, "duplicate key");
                    p.nextToken();
                    m.keyLines().put(key, keyLine);
                    m.entries().put(key, node(p));
                }
                return m;
            }
            case START_ARRAY -> {
                List<YamlNode> items = new ArrayList<>();
                while (p.nextToken() != JsonToken.END_ARRAY) items.add(node(p));
                return new Sequence(items, line);
            }
            case VALUE_STRING -> {
                return new Scalar(p.getText(), Scalar.Type.STRING, line);
            }
            case VALUE_NUMBER_INT -> {
                return new Scalar(p.getText(), Scalar.Type.INT, line);
            }
            case VALUE_NUMBER_FLOAT -> {
                return new Scalar(p.getText(), Scalar.Type.FLOAT, line);
            }
            case VALUE_TRUE, VALUE_FALSE -> {
                return new Scalar(p.getText(), Scalar.Type.BOOLEAN, line);
            }
            case VALUE_NULL -> {
                return new Scalar("", Scalar.Type.NULL, line);
            }
            default -> throw error(line, "", "unsupported YAML construct " + t);
        }
    }

    private static int line(JsonParser p) {
        return p.currentTokenLocation().getLineNr();
    }

    // ---- tree -> model, with validation ----------------------------------------------------

    private Plans plans(YamlNode root) {
        Mapping top = mapping(root, "", Set.of("global", "plans", "routes", "tenants", "groups", "shadow", "store"));

        Mapping plansNode = mapping(required(top, "plans", ""), "plans", null);
        if (plansNode.entries().isEmpty()) throw error(plansNode.line(), "plans", "at least one plan is required");
        Map<String, Plan> plans = new LinkedHashMap<>();
        plansNode.entries().forEach((name, node) -> {
            String field = "plans." + name;
            if (!NAME.matcher(name).matches()) {
                throw error(plansNode.keyLines().get(name), field, "a plan name must match " + NAME.pattern());
            }
            plans.put(name, plan(name, node, field));
        });

        Optional<GlobalQuota> global = Optional.ofNullable(top.entries().get("global"))
                .map(n -> new GlobalQuota(limits(required(mapping(n, "global", Set.of("limits")), "limits", "global"),
                        "global.limits")));

        List<RouteRule> routes = routes(top.entries().get("routes"), plans, global);
        TenantSettings tenants = tenants(top.entries().get("tenants"), plans, routes);
        Set<String> usedGroups = usedGroups(routes);
        checkGroupsAreUsed(plansNode, usedGroups);
        Map<String, GroupSettings> groups = groups(top.entries().get("groups"), usedGroups);
        boolean shadow = Optional.ofNullable(top.entries().get("shadow")).map(n -> bool(n, "shadow")).orElse(false);
        StoreSettings store = store(top.entries().get("store"));
        return new Plans(source, global, plans, routes, tenants, groups, shadow, store);
    }

    /** A cap on a group no route belongs to is a typo that would silently cap nothing: refuse it. */
    private void checkGroupsAreUsed(Mapping plansNode, Set<String> used) {
        plansNode.entries().forEach((plan, node) -> {
            if (!(node instanceof Mapping pm) || !(pm.entries().get("concurrency") instanceof Mapping cm)) return;
            cm.keyLines().forEach((group, line) ->
                    requireUsedGroup(used, group, line, "plans." + plan + ".concurrency." + group));
        });
    }

    private static Set<String> usedGroups(List<RouteRule> routes) {
        Set<String> used = new java.util.TreeSet<>();
        for (RouteRule r : routes) r.group().ifPresent(used::add);
        return used;
    }

    /** Refuses a setting for {@code group} if no route has that group ({@code used}: the groups routes have). */
    private void requireUsedGroup(Set<String> used, String group, int line, String field) {
        if (!used.contains(group)) {
            throw error(line, field, "no route has group '" + group + "'" + (used.isEmpty() ? "" : ", groups in use: " + used));
        }
    }

    private Map<String, GroupSettings> groups(YamlNode node, Set<String> used) {
        if (node == null) return Map.of();
        Mapping gm = mapping(node, "groups", null);
        Map<String, GroupSettings> out = new LinkedHashMap<>();
        gm.entries().forEach((name, v) -> {
            String f = "groups." + name;
            int line = gm.keyLines().get(name);
            if (!NAME.matcher(name).matches()) throw error(line, f, "a group name must match " + NAME.pattern());
            requireUsedGroup(used, name, line, f);
            Mapping m = mapping(v, f, Set.of("max-inflight", "queue"));
            java.util.OptionalInt maxInflight = Optional.ofNullable(m.entries().get("max-inflight"))
                    .map(n -> java.util.OptionalInt.of((int) positive(n, f + ".max-inflight", Integer.MAX_VALUE)))
                    .orElse(java.util.OptionalInt.empty());
            Optional<GroupSettings.Queue> queue = Optional.empty();
            YamlNode qn = m.entries().get("queue");
            if (qn != null) {
                String qf = f + ".queue";
                Mapping q = mapping(qn, qf, Set.of("size", "max-wait"));
                int size = (int) positive(required(q, "size", qf), qf + ".size", MAX_QUEUE_SIZE);
                YamlNode waitNode = required(q, "max-wait", qf);
                Duration maxWait = period(waitNode, qf + ".max-wait");
                if (maxWait.compareTo(MAX_QUEUE_WAIT) > 0) {
                    throw error(waitNode.line(), qf + ".max-wait", "must be <= " + MAX_QUEUE_WAIT.toSeconds()
                            + "s (a waiting request holds a server thread), was " + maxWait);
                }
                queue = Optional.of(new GroupSettings.Queue(size, maxWait));
            }
            out.put(name, new GroupSettings(name, maxInflight, queue));
        });
        return out;
    }

    private StoreSettings store(YamlNode node) {
        if (node == null) return StoreSettings.local();
        Mapping m = mapping(node, "store", Set.of("type", "uri", "prefix", "timeout", "max-retries", "batching",
                "on-failure", "heartbeat", "instance-ttl", "local-allowance"));
        StoreSettings.Type type = choice(m, "type", "store.type", StoreSettings.Type.LOCAL, StoreSettings.Type.class);
        if (type == StoreSettings.Type.LOCAL) {
            for (Map.Entry<String, Integer> key : m.keyLines().entrySet()) {
                if (!key.getKey().equals("type")) {
                    throw error(key.getValue(), "store." + key.getKey(), "only for a store of type: redis");
                }
            }
            return StoreSettings.local();
        }
        YamlNode uriNode = required(m, "uri", "store");
        String uri = string(uriNode, "store.uri");
        if (!StoreSettings.isRedisUri(uri)) {
            throw error(uriNode.line(), "store.uri", "expected redis://host:port (or rediss://, redis-sentinel://), was '"
                    + StoreSettings.redact(uri) + "'");
        }
        StoreSettings s = StoreSettings.redis(uri);
        YamlNode prefixNode = m.entries().get("prefix");
        String prefix = prefixNode == null ? s.prefix() : string(prefixNode, "store.prefix");
        if (!StoreSettings.PREFIX.matcher(prefix).matches()) {
            throw error(prefixNode.line(), "store.prefix", "must match " + StoreSettings.PREFIX.pattern() + ", was '" + prefix + "'");
        }
        Duration timeout = Optional.ofNullable(m.entries().get("timeout")).map(n -> period(n, "store.timeout")).orElse(s.timeout());
        int maxRetries = s.maxRetries();
        YamlNode retriesNode = m.entries().get("max-retries");
        if (retriesNode != null) maxRetries = (int) positive(retriesNode, "store.max-retries", 100);
        boolean batching = Optional.ofNullable(m.entries().get("batching")).map(n -> bool(n, "store.batching")).orElse(true);
        StoreSettings.OnFailure onFailure = choice(m, "on-failure", "store.on-failure", StoreSettings.OnFailure.OPEN,
                StoreSettings.OnFailure.class);
        Duration heartbeat = Optional.ofNullable(m.entries().get("heartbeat")).map(n -> period(n, "store.heartbeat"))
                .orElse(s.heartbeat());
        YamlNode ttlNode = m.entries().get("instance-ttl");
        Duration ttl = ttlNode == null ? s.instanceTtl() : period(ttlNode, "store.instance-ttl");
        if (ttl.compareTo(heartbeat) <= 0) {
            throw error(ttlNode != null ? ttlNode.line() : m.line(), "store.instance-ttl",
                    "must be longer than store.heartbeat (" + heartbeat + "), was " + ttl);
        }
        YamlNode allowanceNode = m.entries().get("local-allowance");
        StoreSettings.LocalAllowance allowance = allowanceNode == null ? null : localAllowance(allowanceNode);
        if (allowance != null && !batching) {
            throw error(m.entries().get("batching").line(), "store.batching",
                    "cannot be false with store.local-allowance (which always batches)");
        }
        return new StoreSettings(type, uri, prefix, timeout, maxRetries, batching, onFailure, heartbeat, ttl, allowance);
    }

    private StoreSettings.LocalAllowance localAllowance(YamlNode node) {
        String field = "store.local-allowance";
        Mapping m = mapping(node, field, Set.of("units", "max-delay"));
        long units = positive(required(m, "units", field), field + ".units", Integer.MAX_VALUE);
        YamlNode delayNode = required(m, "max-delay", field);
        Duration maxDelay = period(delayNode, field + ".max-delay");
        // period() already refused 0 (and below), so only "above 1m" is left to check here
        if (maxDelay.compareTo(Duration.ofMinutes(1)) > 0) {
            throw error(delayNode.line(), field + ".max-delay", "must be > 0 and at most 1m, was " + maxDelay);
        }
        return new StoreSettings.LocalAllowance(units, maxDelay);
    }

    /** A {@code concurrency:} mapping, group → cap; empty if {@code node} is null. */
    private Map<String, Integer> concurrency(YamlNode node, String field) {
        Map<String, Integer> concurrency = new LinkedHashMap<>();
        if (node == null) return concurrency;
        Mapping cm = mapping(node, field, null);
        cm.entries().forEach((group, v) -> {
            String f = field + "." + group;
            if (!NAME.matcher(group).matches()) {
                throw error(cm.keyLines().get(group), f, "a group name must match " + NAME.pattern());
            }
            concurrency.put(group, (int) positive(v, f, Integer.MAX_VALUE));
        });
        return concurrency;
    }

    private Plan plan(String name, YamlNode node, String field) {
        Mapping m = mapping(node, field, Set.of("limits", "concurrency", "publish", "shadow"));
        List<Bandwidth> limits = limits(required(m, "limits", field), field + ".limits");
        Map<String, Integer> concurrency = concurrency(m.entries().get("concurrency"), field + ".concurrency");
        boolean publish = Optional.ofNullable(m.entries().get("publish")).map(n -> bool(n, field + ".publish")).orElse(false);
        boolean shadow = Optional.ofNullable(m.entries().get("shadow")).map(n -> bool(n, field + ".shadow")).orElse(false);
        return new Plan(name, limits, concurrency, publish, shadow);
    }

    private List<Bandwidth> limits(YamlNode node, String field) {
        Sequence seq = sequence(node, field);
        if (seq.items().isEmpty()) throw error(seq.line(), field, "at least one limit is required");
        List<Bandwidth> out = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (int i = 0; i < seq.items().size(); i++) {
            String f = field + "[" + i + "]";
            Mapping m = mapping(seq.items().get(i), f, Set.of("name", "capacity", "refill", "period"));
            String name = "b" + i;
            YamlNode nameNode = m.entries().get("name");
            if (nameNode != null) {
                name = string(nameNode, f + ".name");
                if (!NAME.matcher(name).matches()) {
                    throw error(nameNode.line(), f + ".name", "must match " + NAME.pattern() + ", was '" + name + "'");
                }
            }
            if (!names.add(name)) throw error(m.line(), f + ".name", "duplicate limit name '" + name + "'");
            long capacity = positive(required(m, "capacity", f), f + ".capacity", Long.MAX_VALUE);
            long refill = positive(required(m, "refill", f), f + ".refill", Long.MAX_VALUE);
            Duration period = period(required(m, "period", f), f + ".period");
            out.add(new Bandwidth(name, capacity, refill, period));
        }
        return out;
    }

    private List<RouteRule> routes(YamlNode node, Map<String, Plan> plans, Optional<GlobalQuota> global) {
        if (node == null) return List.of();
        Sequence seq = sequence(node, "routes");
        List<RouteRule> out = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (int i = 0; i < seq.items().size(); i++) {
            String f = "routes[" + i + "]";
            Mapping m = mapping(seq.items().get(i), f, Set.of("name", "methods", "paths", "cost", "group", "limited"));
            YamlNode nameNode = required(m, "name", f);
            String name = string(nameNode, f + ".name");
            if (!NAME.matcher(name).matches()) {
                throw error(nameNode.line(), f + ".name", "must match " + NAME.pattern() + ", was '" + name + "'");
            }
            if (!names.add(name)) throw error(nameNode.line(), f + ".name", "duplicate route name '" + name + "'");

            Set<String> methods = new LinkedHashSet<>();
            YamlNode methodsNode = m.entries().get("methods");
            if (methodsNode != null) {
                Sequence ms = sequence(methodsNode, f + ".methods");
                for (int j = 0; j < ms.items().size(); j++) {
                    String method = string(ms.items().get(j), f + ".methods[" + j + "]");
                    if (!METHOD.matcher(method).matches()) {
                        throw error(ms.items().get(j).line(), f + ".methods[" + j + "]",
                                "not an HTTP method: '" + method + "' (upper-case letters, e.g. GET)");
                    }
                    methods.add(method);
                }
            }

            Sequence ps = sequence(required(m, "paths", f), f + ".paths");
            if (ps.items().isEmpty()) throw error(ps.line(), f + ".paths", "at least one path is required");
            List<PathPattern> paths = new ArrayList<>();
            for (int j = 0; j < ps.items().size(); j++) {
                YamlNode p = ps.items().get(j);
                try {
                    paths.add(PathPattern.parse(string(p, f + ".paths[" + j + "]")));
                } catch (IllegalArgumentException e) {
                    throw error(p.line(), f + ".paths[" + j + "]", e.getMessage());
                }
            }

            boolean limited = Optional.ofNullable(m.entries().get("limited"))
                    .map(n -> bool(n, f + ".limited")).orElse(true);
            YamlNode costNode = m.entries().get("cost");
            YamlNode groupNode = m.entries().get("group");
            if (!limited && (costNode != null || groupNode != null)) {
                YamlNode offending = costNode != null ? costNode : groupNode;
                throw error(offending.line(), f + (costNode != null ? ".cost" : ".group"),
                        "a route with limited: false takes no cost or group");
            }
            long cost = costNode == null ? 1 : positive(costNode, f + ".cost", Long.MAX_VALUE);
            if (costNode != null) checkCostFits(cost, costNode.line(), f + ".cost", plans, global);
            Optional<String> group = Optional.empty();
            if (groupNode != null) {
                String g = string(groupNode, f + ".group");
                if (!NAME.matcher(g).matches()) {
                    throw error(groupNode.line(), f + ".group", "must match " + NAME.pattern() + ", was '" + g + "'");
                }
                group = Optional.of(g);
            }
            out.add(new RouteRule(name, methods, paths, cost, group, limited));
        }
        return out;
    }

    /** A cost above a bucket's capacity could never be admitted: refuse it at startup. */
    private void checkCostFits(long cost, int line, String field, Map<String, Plan> plans, Optional<GlobalQuota> global) {
        for (Plan plan : plans.values()) {
            int i = Plans.firstLimitBelow(cost, plan.limits());
            if (i >= 0) {
                long capacity = plan.limits().get(i).capacity();
                throw error(line, field, "cost " + cost + " exceeds the capacity " + capacity + " of plans."
                        + plan.name() + ".limits[" + i + "]: such a request could never be admitted");
            }
        }
        if (global.isPresent()) {
            List<Bandwidth> limits = global.get().limits();
            int i = Plans.firstLimitBelow(cost, limits);
            if (i >= 0) {
                throw error(line, field, "cost " + cost + " exceeds the capacity " + limits.get(i).capacity()
                        + " of global.limits[" + i + "]: such a request could never be admitted");
            }
        }
    }

    private TenantSettings tenants(YamlNode node, Map<String, Plan> plans, List<RouteRule> routes) {
        Mapping m = node == null ? new Mapping()
                : mapping(node, "tenants", Set.of("resolvers", "default-plan", "unresolved", "unknown",
                "max-tracked", "assignments", "trusted-proxies", "api-keys", "overrides", "guests"));

        Map<String, String> apiKeys = apiKeys(m.entries().get("api-keys"));
        List<TenantSettings.ResolverSpec> resolvers = new ArrayList<>();
        YamlNode rs = m.entries().get("resolvers");
        if (rs != null) {
            Sequence seq = sequence(rs, "tenants.resolvers");
            for (int i = 0; i < seq.items().size(); i++) {
                resolvers.add(resolver(seq.items().get(i), "tenants.resolvers[" + i + "]", apiKeys));
            }
        }

        String defaultPlan;
        YamlNode dp = m.entries().get("default-plan");
        if (dp != null) {
            defaultPlan = string(dp, "tenants.default-plan");
            if (!plans.containsKey(defaultPlan)) {
                throw error(dp.line(), "tenants.default-plan", "unknown plan '" + defaultPlan + "', defined: " + plans.keySet());
            }
        } else if (plans.size() == 1) {
            defaultPlan = plans.keySet().iterator().next();
        } else {
            throw error(m.line(), "tenants.default-plan", "required when more than one plan is defined");
        }

        TenantSettings.Unresolved unresolved = choice(m, "unresolved", "tenants.unresolved",
                TenantSettings.Unresolved.REJECT, TenantSettings.Unresolved.class);
        TenantSettings.Unknown unknown = choice(m, "unknown", "tenants.unknown",
                TenantSettings.Unknown.DEFAULT, TenantSettings.Unknown.class);
        int maxTracked = Optional.ofNullable(m.entries().get("max-tracked"))
                .map(n -> (int) positive(n, "tenants.max-tracked", Integer.MAX_VALUE))
                .orElse(TenantSettings.DEFAULT_MAX_TRACKED);

        Map<String, String> assignments = new LinkedHashMap<>();
        YamlNode as = m.entries().get("assignments");
        if (as != null) {
            Mapping am = mapping(as, "tenants.assignments", null);
            am.entries().forEach((tenant, v) -> {
                String f = "tenants.assignments." + tenant;
                checkTenantId(tenant, am.keyLines().get(tenant), f);
                String plan = string(v, f);
                if (!plans.containsKey(plan)) throw error(v.line(), f, "unknown plan '" + plan + "', defined: " + plans.keySet());
                assignments.put(tenant, plan);
            });
        }

        Map<String, List<Bandwidth>> overrides = new LinkedHashMap<>();
        YamlNode os = m.entries().get("overrides");
        if (os != null) {
            Mapping om = mapping(os, "tenants.overrides", null);
            om.entries().forEach((tenant, v) -> {
                String f = "tenants.overrides." + tenant;
                checkTenantId(tenant, om.keyLines().get(tenant), f);
                Mapping o = mapping(v, f, Set.of("plan", "limits"));
                YamlNode planNode = o.entries().get("plan");
                if (planNode != null) {
                    String plan = string(planNode, f + ".plan");
                    if (!plans.containsKey(plan)) {
                        throw error(planNode.line(), f + ".plan", "unknown plan '" + plan + "', defined: " + plans.keySet());
                    }
                    String assigned = assignments.get(tenant);
                    if (assigned != null && !assigned.equals(plan)) {
                        throw error(planNode.line(), f + ".plan", "contradicts tenants.assignments." + tenant + ": " + assigned);
                    }
                    assignments.put(tenant, plan);
                }
                // an override makes its tenant known, on the default plan unless assigned another
                assignments.putIfAbsent(tenant, defaultPlan);
                overrides.put(tenant, limitsFittingRoutes(required(o, "limits", f), f, routes));
            });
        }

        List<AddressRange> trustedProxies = new ArrayList<>();
        YamlNode tp = m.entries().get("trusted-proxies");
        if (tp != null) {
            Sequence seq = sequence(tp, "tenants.trusted-proxies");
            for (int i = 0; i < seq.items().size(); i++) {
                String f = "tenants.trusted-proxies[" + i + "]";
                YamlNode item = seq.items().get(i);
                try {
                    trustedProxies.add(AddressRange.parse(string(item, f)));
                } catch (IllegalArgumentException e) {
                    throw error(item.line(), f, e.getMessage() + " (expected an IPv4/IPv6 address or CIDR block such as 10.0.0.0/8)");
                }
            }
        }
        GuestPool guests = guests(m.entries().get("guests"), routes);
        return new TenantSettings(resolvers, defaultPlan, unresolved, unknown, maxTracked, assignments,
                trustedProxies, apiKeys, overrides, guests);
    }

    private void checkTenantId(String tenant, int line, String field) {
        if (!TenantId.isValid(tenant)) {
            throw error(line, field, "not a valid tenant id (1-" + TenantId.MAX_LENGTH
                    + " characters of A-Z a-z 0-9 . _ : -, not only dots)");
        }
    }

    /** {@code tenants.guests}: a shared bucket, shared concurrency caps, or both. */
    private GuestPool guests(YamlNode node, List<RouteRule> routes) {
        if (node == null) return GuestPool.NONE;
        String field = "tenants.guests";
        Mapping gm = mapping(node, field, Set.of("limits", "concurrency"));
        YamlNode limitsNode = gm.entries().get("limits");
        YamlNode concurrencyNode = gm.entries().get("concurrency");
        if (limitsNode == null && concurrencyNode == null) {
            throw error(gm.line(), field, "give limits, concurrency or both (omit tenants.guests for no pool)");
        }
        List<Bandwidth> limits = limitsNode == null ? List.of() : limitsFittingRoutes(limitsNode, field, routes);
        Map<String, Integer> concurrency = concurrency(concurrencyNode, field + ".concurrency");
        if (concurrencyNode instanceof Mapping cm) {
            Set<String> used = usedGroups(routes);
            cm.keyLines().forEach((group, line) -> requireUsedGroup(used, group, line, field + ".concurrency." + group));
        }
        return new GuestPool(limits, concurrency);
    }

    /** The {@code limits} under {@code field}; refused if a limited route's cost exceeds a capacity (it could never run). */
    private List<Bandwidth> limitsFittingRoutes(YamlNode limitsNode, String field, List<RouteRule> routes) {
        List<Bandwidth> limits = limits(limitsNode, field + ".limits");
        for (RouteRule r : routes) {
            if (!r.limited()) continue;
            int i = Plans.firstLimitBelow(r.cost(), limits);
            if (i >= 0) {
                throw error(sequence(limitsNode, field).items().get(i).line(), field + ".limits[" + i + "].capacity",
                        "capacity " + limits.get(i).capacity() + " is below the cost " + r.cost() + " of route "
                                + r.name() + ": such a request could never be admitted");
            }
        }
        return limits;
    }

    /** {@code tenants.api-keys}: SHA-256 hex of a key → tenant. The keys themselves never appear in the file. */
    private Map<String, String> apiKeys(YamlNode node) {
        Map<String, String> out = new LinkedHashMap<>();
        if (node == null) return out;
        Mapping km = mapping(node, "tenants.api-keys", null);
        km.entries().forEach((hash, v) -> {
            String f = "tenants.api-keys." + (hash.length() > 16 ? hash.substring(0, 16) + "..." : hash);
            if (!ApiKeyHash.isSha256Hex(hash)) {
                throw error(km.keyLines().get(hash), f, "expected the SHA-256 of the key as 64 hex digits "
                        + "(e.g. printf %s \"$KEY\" | sha256sum), never the key itself");
            }
            String tenant = string(v, f);
            checkTenantId(tenant, v.line(), f);
            if (out.put(ApiKeyHash.normalize(hash), tenant) != null) {
                throw error(km.keyLines().get(hash), f, "duplicate key hash (differs only in letter case)");
            }
        });
        return out;
    }

    private TenantSettings.ResolverSpec resolver(YamlNode node, String f, Map<String, String> apiKeys) {
        Mapping r = mapping(node, f, null);
        YamlNode typeNode = required(r, "type", f);
        String type = string(typeNode, f + ".type");
        Set<String> allowed = RESOLVER_OPTIONS.get(type);
        if (allowed == null) {
            throw error(typeNode.line(), f + ".type", "unknown resolver type '" + type + "', expected one of "
                    + new java.util.TreeSet<>(RESOLVER_OPTIONS.keySet()));
        }
        Map<String, String> options = new LinkedHashMap<>();
        Map<String, Integer> lines = new LinkedHashMap<>();
        r.entries().forEach((k, v) -> {
            if (k.equals("type")) return;
            if (!allowed.contains(k)) {
                throw error(r.keyLines().get(k), f + "." + k, "unknown key for a " + type + " resolver, expected one of "
                        + new java.util.TreeSet<>(allowed));
            }
            options.put(k, k.equals("verify") ? Boolean.toString(bool(v, f + "." + k)) : string(v, f + "." + k));
            lines.put(k, v.line());
        });
        java.util.function.BiConsumer<String, Pattern> check = (k, p) -> {
            String v = options.get(k);
            if (v != null && !p.matcher(v).matches()) throw error(lines.get(k), f + "." + k, "must match " + p.pattern() + ", was '" + v + "'");
        };
        switch (type) {
            case "header", "attribute" -> {
                if (type.equals("attribute") && !options.containsKey("name")) throw error(r.line(), f + ".name", "required");
                if (type.equals("header")) check.accept("name", HEADER_NAME);
            }
            case "api-key" -> {
                check.accept("header", HEADER_NAME);
                if (apiKeys.isEmpty()) {
                    throw error(typeNode.line(), f + ".type", "an api-key resolver needs tenants.api-keys (SHA-256 of each key → tenant);"
                            + " to look keys up elsewhere, build the resolver in code");
                }
            }
            case "host" -> {
                if (!options.containsKey("suffix")) throw error(r.line(), f + ".suffix", "required (e.g. .api.example.com)");
                options.put("suffix", options.get("suffix").toLowerCase(Locale.ROOT));
                check.accept("suffix", HOST_SUFFIX);
            }
            case "path" -> check.accept("prefix", PATH_PREFIX);
            case "jwt-claim" -> {
                List<String> sources = JWT_KEY_SOURCES.stream().filter(options::containsKey).toList();
                boolean verify = !"false".equals(options.get("verify"));
                if (verify && sources.size() != 1) {
                    throw error(sources.size() > 1 ? lines.get(sources.get(1)) : r.line(), f + (sources.size() > 1 ? "." + sources.get(1) : ""),
                            "give exactly one of " + JWT_KEY_SOURCES + " (or verify: false when an upstream filter already verified the token)");
                }
                if (!verify && !sources.isEmpty()) {
                    throw error(lines.get(sources.get(0)), f + "." + sources.get(0), "verify: false takes no key");
                }
                check.accept("header", HEADER_NAME);
            }
            default -> {
                // principal: no options
            }
        }
        return new TenantSettings.ResolverSpec(type, options, new TenantSettings.Origin(source, r.line(), f, lines));
    }

    // ---- typed accessors -------------------------------------------------------------------

    /** The node as a map; {@code allowed} (when not null) lists the only keys it may have. */
    private Mapping mapping(YamlNode node, String field, Set<String> allowed) {
        if (!(node instanceof Mapping m)) throw error(node.line(), field, "expected a map, found " + node.kind());
        if (allowed != null) {
            for (Map.Entry<String, Integer> key : m.keyLines().entrySet()) {
                if (!allowed.contains(key.getKey())) {
                    throw error(key.getValue(), join(field, key.getKey()), "unknown key, expected one of " + new java.util.TreeSet<>(allowed));
                }
            }
        }
        return m;
    }

    private Sequence sequence(YamlNode node, String field) {
        if (node instanceof Sequence s) return s;
        throw error(node.line(), field, "expected a list, found " + node.kind());
    }

    private YamlNode required(Mapping m, String key, String field) {
        YamlNode n = m.entries().get(key);
        if (n == null) throw error(m.line(), join(field, key), "required");
        return n;
    }

    private String string(YamlNode node, String field) {
        if (node instanceof Scalar s && s.type() != Scalar.Type.NULL && !s.text().isEmpty()) return s.text();
        throw error(node.line(), field, "expected a non-empty string, found " + node.kind());
    }

    private boolean bool(YamlNode node, String field) {
        if (node instanceof Scalar s && s.type() == Scalar.Type.BOOLEAN) return Boolean.parseBoolean(s.text());
        throw error(node.line(), field, "expected true or false, found " + node.kind());
    }

    private long positive(YamlNode node, String field, long max) {
        if (!(node instanceof Scalar s) || s.type() != Scalar.Type.INT) {
            String found = node instanceof Scalar s2 && s2.type() != Scalar.Type.NULL
                    ? node.kind() + " '" + s2.text() + "'" : node.kind();
            throw error(node.line(), field, "expected a whole number > 0, found " + found);
        }
        long v;
        try {
            v = Long.parseLong(s.text());
        } catch (NumberFormatException e) {
            throw error(node.line(), field, "number out of range: " + s.text());
        }
        if (v <= 0) throw error(node.line(), field, "must be > 0, was " + v);
        if (v > max) throw error(node.line(), field, "must be <= " + max + ", was " + v);
        return v;
    }

    private Duration period(YamlNode node, String field) {
        String text = node instanceof Scalar s && s.type() != Scalar.Type.NULL ? s.text() : null;
        if (text == null || !(((Scalar) node).type() == Scalar.Type.STRING)) {
            throw error(node.line(), field, "expected a period such as 10s, 1m, 1d or PT10S, found "
                    + (text == null ? node.kind() : "'" + text + "' (a number needs a unit: ms, s, m, h, d)"));
        }
        try {
            return parsePeriod(text);
        } catch (IllegalArgumentException e) {
            throw error(node.line(), field, e.getMessage());
        }
    }

    /**
     * Parses a period as the plans file writes it: a whole number with a unit ({@code 500ms},
     * {@code 10s}, {@code 1m}, {@code 2h}, {@code 1d}) or ISO-8601 ({@code PT10S}). Also used to read
     * periods given at runtime (an admin API), so both accept exactly the same text.
     *
     * @throws IllegalArgumentException naming the reason, if the text is not a period &gt; 0
     */
    public static Duration parsePeriod(String text) {
        if (text == null || text.isEmpty()) throw new IllegalArgumentException("a period is required, e.g. 10s, 1m, 1d or PT10S");
        Duration d;
        Matcher m = PERIOD.matcher(text);
        if (m.matches()) {
            long n;
            try {
                n = Long.parseLong(m.group(1));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("number out of range: " + text);
            }
            try {
                d = switch (m.group(2)) {
                    case "ms" -> Duration.ofMillis(n);
                    case "s" -> Duration.ofSeconds(n);
                    case "m" -> Duration.ofMinutes(n);
                    case "h" -> Duration.ofHours(n);
                    default -> Duration.ofDays(n);
                };
            } catch (ArithmeticException e) {
                throw new IllegalArgumentException("number out of range: " + text);
            }
        } else if (text.toUpperCase(Locale.ROOT).startsWith("P")) {
            try {
                d = Duration.parse(text);
            } catch (DateTimeParseException e) {
                throw new IllegalArgumentException("not an ISO-8601 duration: '" + text + "'");
            }
        } else {
            throw new IllegalArgumentException("unknown period '" + text + "': use a number with a unit (ms, s, m, h, d) or ISO-8601 like PT10S");
        }
        if (d.isZero() || d.isNegative()) throw new IllegalArgumentException("must be > 0, was '" + text + "'");
        return d;
    }

    private <E extends Enum<E>> E choice(Mapping m, String key, String field, E dflt, Class<E> type) {
        YamlNode n = m.entries().get(key);
        if (n == null) return dflt;
        String text = string(n, field);
        for (E e : type.getEnumConstants()) {
            if (e.name().toLowerCase(Locale.ROOT).equals(text)) return e;
        }
        List<String> allowed = new ArrayList<>();
        for (E e : type.getEnumConstants()) allowed.add(e.name().toLowerCase(Locale.ROOT));
        throw error(n.line(), field, "unknown value '" + text + "', expected one of " + allowed);
    }

    private static String join(String field, String key) {
        return field.isEmpty() ? key : field + "." + key;
    }

    private InvalidPlansException error(int line, String field, String reason) {
        return new InvalidPlansException(source, line, field, reason);
    }

}

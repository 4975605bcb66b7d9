package io.quotagate.spring;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.quotagate.plans.InvalidPlansException;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.boot.origin.Origin;
import org.springframework.boot.origin.PropertySourceOrigin;
import org.springframework.boot.origin.SystemEnvironmentOrigin;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.env.Environment;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.SystemEnvironmentPropertySource;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * The limits written under {@code quotagate.limits} in the application's configuration (application.yml, a
 * .properties file, environment variables, system properties...) instead of a plans file: the same keys, read
 * by the same parser with the same rules. The properties become the document a plans file is (as JSON, which
 * is YAML) and {@link PlansFile#parse} checks it; a refusal names the property
 * ({@code quotagate.limits.plans.free.limits[0].capacity}), not a line of that document, which nobody wrote.
 *
 * <p>Sources are merged as Spring Boot merges them for a bound property: a map key by key, the source of
 * highest precedence winning each; a list whole, from the one source of highest precedence that has it. Two
 * things Spring Boot does to keys outside brackets would silently change a tenant id or a key hash, so they
 * fail instead: dropping characters other than letters, digits, {@code -} and {@code _} ({@code a:b} would be
 * read as {@code ab}, {@code acme.eu} splits at the dot and is refused by the plans rules as a nested map),
 * and ignoring case ({@code Acme} and {@code acme} are one key). In brackets ({@code "[acme.eu]": pro}) a key
 * is kept as written.
 */
final class InlineLimits {
    /** Where the limits are written. */
    static final String PREFIX = "quotagate.limits";

    private static final ConfigurationPropertyName ROOT = ConfigurationPropertyName.of(PREFIX);
    // .properties files and environment variables hold only text: a value is typed as YAML types it unquoted,
    // so capacity=20 is the number a plans file's "capacity: 20" is, and period=10 the number it refuses
    private static final Pattern INTEGER = Pattern.compile("[-+]?[0-9]+");
    private static final Pattern DECIMAL = Pattern.compile("[-+]?([0-9]+\\.[0-9]*|\\.[0-9]+)");
    private static final Pattern BOOLEAN = Pattern.compile("true|True|TRUE|false|False|FALSE");
    /** A key that reads the same with or without brackets. */
    private static final Pattern PLAIN_KEY = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9_-]*");
    private static final JsonFactory JSON = new JsonFactory();

    /** The tree: {@code Map<String, Object>}, {@code List<Object>} and the values as the sources hold them. */
    private final Object root;
    /** The properties the tree was built from, with where each was written. */
    private final List<Entry> entries;

    private InlineLimits(Object root, List<Entry> entries) {
        this.root = root;
        this.entries = List.copyOf(entries);
    }

    /**
     * The limits under {@code quotagate.limits}, if any property is written there.
     *
     * @throws InvalidConfigurationPropertyValueException naming the property whose key Spring Boot would change,
     *         or a list whose items are not numbered 0, 1, 2...
     */
    static Optional<InlineLimits> read(Environment environment) {
        checkKeysKeptAsWritten(environment);
        List<Entry> entries = new ArrayList<>();
        int rank = 0; // 0: the source of highest precedence
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            if (source instanceof IterableConfigurationPropertySource iterable) {
                for (ConfigurationPropertyName name : iterable.stream()
                        .filter(n -> ROOT.equals(n) || ROOT.isAncestorOf(n)).toList()) {
                    ConfigurationProperty property = source.getConfigurationProperty(name);
                    if (property != null) {
                        entries.add(new Entry(rank, name, property.getValue(), property.getOrigin()));
                    }
                }
            }
            rank++;
        }
        if (entries.isEmpty()) return Optional.empty();
        return Optional.of(new InlineLimits(node(ROOT, entries), entries));
    }

    /**
     * The plans these properties describe, checked by the plans file's rules.
     *
     * @throws InvalidConfigurationPropertyValueException naming the property at fault and why
     */
    Plans plans() {
        try {
            return PlansFile.parse(PREFIX, json(root));
        } catch (InvalidPlansException e) {
            throw invalid(e);
        }
    }

    /** A refusal of the plans rules (at parse, or by a resolver type or store provider at build), as the property's. */
    InvalidConfigurationPropertyValueException invalid(InvalidPlansException e) {
        StringBuilder name = new StringBuilder(PREFIX);
        Object node = root;
        String field = e.field();
        int i = 0;
        // the plans rules name a field by its keys joined with dots; a key may hold a dot itself ([acme.eu]), so
        // the walk takes the longest key of the tree that the field goes on with
        while (i < field.length()) {
            if (field.charAt(i) == '.') {
                i++;
                continue;
            }
            if (node instanceof List<?> list && field.charAt(i) == '[') {
                int end = field.indexOf(']', i);
                Integer index = end < 0 ? null : index(field.substring(i + 1, end));
                if (index == null || index >= list.size()) break;
                name.append('[').append(index).append(']');
                node = list.get(index);
                i = end + 1;
                continue;
            }
            if (!(node instanceof Map<?, ?> map)) break;
            String key = null;
            for (Object k : map.keySet()) {
                String s = (String) k;
                int after = i + s.length();
                if (field.startsWith(s, i) && (after == field.length() || field.charAt(after) == '.'
                        || field.charAt(after) == '[') && (key == null || s.length() > key.length())) {
                    key = s;
                }
            }
            if (key == null) break;
            name.append(key(key));
            node = map.get(key);
            i += key.length();
        }
        if (i < field.length()) { // a field the tree does not hold (a required key): named as the rules name it
            node = null;
            name.append(field.charAt(i) == '[' ? "" : ".").append(field.substring(i));
        }
        String reason = e.reason();
        if (node instanceof Map && reason.contains("found a map")) {
            reason += " (outside brackets a dot nests a map: write a key with a dot in brackets, \"[acme.eu]\")";
        }
        if (node instanceof Map || node instanceof List) return invalidBelow(name.toString(), reason);
        return new InvalidConfigurationPropertyValueException(name.toString(), node, reason);
    }

    /**
     * A refusal of the map or list at {@code at}, which no one wrote as such: its properties were. One property
     * below it is named with its value (so Spring Boot's failure report finds where it was written too); and an
     * environment variable among them is named, with the property it is read as: each of its underscores is a
     * dot, so {@code QUOTAGATE_LIMITS_TENANTS_DEFAULT_PLAN} is {@code quotagate.limits.tenants.default.plan}, a map
     * under {@code default}, and its refusal said only "Invalid value 'null' for quotagate.limits.tenants.default".
     */
    private InvalidConfigurationPropertyValueException invalidBelow(String at, String reason) {
        ConfigurationPropertyName path = ConfigurationPropertyName.ofIfValid(at);
        List<Entry> below = path == null ? List.of()
                : entries.stream().filter(e -> path.isAncestorOf(e.name())).toList();
        StringBuilder text = new StringBuilder(reason);
        if (below.size() == 1) text.append(" (at ").append(at).append(')');
        below.stream().filter(e -> variable(e.origin()) != null).limit(3)
                .forEach(e -> text.append("; ").append(readAs(path, e, variable(e.origin()))));
        if (below.size() != 1) return new InvalidConfigurationPropertyValueException(at, null, text.toString());
        Entry only = below.get(0);
        return new InvalidConfigurationPropertyValueException(only.name().toString(), only.value(), text.toString());
    }

    /**
     * The environment variable a property was read from, or null: Spring Boot's own source of the process's
     * environment tells it in a {@link SystemEnvironmentOrigin}, a plain {@link SystemEnvironmentPropertySource}
     * (one an application adds) by its {@link PropertySourceOrigin}.
     */
    private static String variable(Origin origin) {
        if (origin instanceof SystemEnvironmentOrigin environment) return environment.getProperty();
        if (origin instanceof PropertySourceOrigin source
                && source.getPropertySource() instanceof SystemEnvironmentPropertySource) {
            return source.getPropertyName();
        }
        return null;
    }

    /**
     * Names {@code variable}, the property it is read as, and how to write the dashed key that the map at
     * {@code path} may have been meant to be: one variable's underscore fewer.
     */
    private static String readAs(ConfigurationPropertyName path, Entry entry, String variable) {
        String text = "the environment variable " + variable + " is read as " + entry.name()
                + " (each underscore is a dot)";
        int n = path.getNumberOfElements();
        String[] parts = variable.split("_", -1);
        if (parts.length != entry.name().getNumberOfElements() || n >= parts.length) return text;
        String dashed = path + "-" + entry.name().getElement(n, Form.DASHED);
        int underscore = String.join("_", java.util.Arrays.copyOfRange(parts, 0, n)).length(); // the n-th one
        String joined = variable.substring(0, underscore) + variable.substring(underscore + 1);
        return text + ": an environment variable cannot write a dash, so " + dashed + " is " + joined;
    }

    // ---- properties -> tree ---------------------------------------------------------------------------------

    /** One property of one source; {@code rank} 0 is the source of highest precedence; {@code origin} may be null. */
    private record Entry(int rank, ConfigurationPropertyName name, Object value, Origin origin) {
    }

    /** The node at {@code path}, from the entries at or below it. */
    private static Object node(ConfigurationPropertyName path, List<Entry> entries) {
        int depth = path.getNumberOfElements();
        int top = entries.stream().mapToInt(Entry::rank).min().orElseThrow();
        List<Entry> fromTop = entries.stream().filter(e -> e.rank() == top).toList();
        for (Entry e : fromTop) {
            // a value here in the source of highest precedence replaces whatever lower sources nest below it
            if (e.name().getNumberOfElements() == depth) return e.value();
        }
        if (fromTop.stream().anyMatch(e -> e.name().isNumericIndex(depth))) {
            return list(path, fromTop); // as Spring Boot binds a list: from one source, never merged
        }
        // a map, merged key by key; what lower sources have here as a value or as list items, the map replaces
        Map<ConfigurationPropertyName, List<Entry>> children = new LinkedHashMap<>();
        for (Entry e : entries) {
            if (e.name().getNumberOfElements() > depth && !e.name().isNumericIndex(depth)) {
                children.computeIfAbsent(e.name().chop(depth + 1), k -> new ArrayList<>()).add(e);
            }
        }
        Map<String, Object> map = new LinkedHashMap<>();
        for (Map.Entry<ConfigurationPropertyName, List<Entry>> child : children.entrySet()) {
            String key = keyAsWritten(child.getKey(), depth, child.getValue());
            if (map.containsKey(key)) {
                throw new InvalidConfigurationPropertyValueException(name(path) + "[" + key + "]", null,
                        "the key '" + key + "' is written twice, in brackets and without: keep one");
            }
            map.put(key, node(child.getKey(), child.getValue()));
        }
        return map;
    }

    private static List<Object> list(ConfigurationPropertyName path, List<Entry> entries) {
        int depth = path.getNumberOfElements();
        Map<Integer, List<Entry>> items = new TreeMap<>();
        for (Entry e : entries) {
            if (!e.name().isNumericIndex(depth)) {
                throw new InvalidConfigurationPropertyValueException(e.name().chop(depth + 1).toString(), null,
                        "a list's items and a map's keys are both written under " + name(path)
                                + " (Spring Boot reads a key made of digits in brackets, or unquoted in YAML, as"
                                + " a list index; quote it in YAML: \"2\": pro)");
            }
            Integer index = index(e.name().getElement(depth, Form.ORIGINAL));
            if (index == null) {
                throw new InvalidConfigurationPropertyValueException(e.name().chop(depth + 1).toString(), null,
                        "list index out of range");
            }
            items.computeIfAbsent(index, k -> new ArrayList<>()).add(e);
        }
        List<Object> list = new ArrayList<>();
        for (Map.Entry<Integer, List<Entry>> item : items.entrySet()) {
            if (item.getKey() != list.size()) {
                throw new InvalidConfigurationPropertyValueException(name(path) + "[" + list.size() + "]", null,
                        "missing: the items of a list are numbered 0, 1, 2... (" + name(path) + "["
                                + item.getKey() + "] is written)");
            }
            list.add(node(item.getValue().get(0).name().chop(depth + 1), item.getValue()));
        }
        return list;
    }

    /**
     * The key as written where it was first written, the source of lowest precedence (application.yml, not the
     * environment variable that overrides its value and cannot write a dash). Spring Boot ignores case and dashes
     * outside brackets: two spellings in one source are one key to it, and so neither is taken.
     */
    private static String keyAsWritten(ConfigurationPropertyName child, int depth, List<Entry> entries) {
        int bottom = entries.stream().mapToInt(Entry::rank).max().orElseThrow();
        List<String> spellings = entries.stream().filter(e -> e.rank() == bottom)
                .map(e -> e.name().getElement(depth, Form.ORIGINAL)).distinct().toList();
        if (spellings.size() > 1) {
            throw new InvalidConfigurationPropertyValueException(child.toString(), null, "the keys " + spellings
                    + " are one key to Spring Boot, which ignores case and dashes outside brackets; write each in"
                    + " brackets to keep them apart (in YAML \"[" + spellings.get(0) + "]\": ...)");
        }
        return spellings.get(0);
    }

    /**
     * Outside brackets Spring Boot keeps only letters, digits, {@code -} and {@code _} of a key and drops the
     * rest without a word: {@code a:b} would become the tenant {@code ab}. Those keys are refused here, where the
     * property's name is still as written (a .properties file or YAML; environment variables cannot write them).
     */
    private static void checkKeysKeptAsWritten(Environment environment) {
        if (!(environment instanceof ConfigurableEnvironment configurable)) return;
        for (PropertySource<?> source : configurable.getPropertySources()) {
            if (!(source instanceof EnumerablePropertySource<?> enumerable)) continue;
            for (String name : enumerable.getPropertyNames()) {
                if (!name.startsWith(PREFIX)) continue;
                if (name.length() > PREFIX.length() && ".[".indexOf(name.charAt(PREFIX.length())) < 0) continue;
                int depth = 0;
                boolean elementStart = true;
                for (int i = PREFIX.length(); i < name.length(); i++) {
                    char c = name.charAt(i);
                    if (c == '[') {
                        depth++;
                    } else if (c == ']') {
                        depth--;
                    } else if (depth == 0 && c == '.') {
                        elementStart = true;
                    } else if (depth == 0) {
                        boolean kept = c < 128 && (Character.isLetterOrDigit(c) || c == '_' || (c == '-' && !elementStart));
                        if (!kept) {
                            throw new InvalidConfigurationPropertyValueException(name, source.getProperty(name),
                                    "Spring Boot drops '" + c + "' from a key written outside brackets, which would"
                                            + " change it; write the key in brackets to keep it as it is: \"[a:b]\":"
                                            + " in YAML, [a\\:b]= in a .properties file");
                        }
                        elementStart = false;
                    }
                }
            }
        }
    }

    // ---- tree -> the plans file's document ------------------------------------------------------------------

    private static String json(Object root) {
        StringWriter out = new StringWriter();
        try (JsonGenerator g = JSON.createGenerator(out)) {
            write(g, root);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a StringWriter does not fail
        }
        return out.toString();
    }

    private static void write(JsonGenerator g, Object node) throws IOException {
        if (node instanceof Map<?, ?> map) {
            g.writeStartObject();
            for (Map.Entry<?, ?> e : map.entrySet()) {
                g.writeFieldName((String) e.getKey());
                write(g, e.getValue());
            }
            g.writeEndObject();
        } else if (node instanceof List<?> list) {
            g.writeStartArray();
            for (Object item : list) write(g, item);
            g.writeEndArray();
        } else {
            writeValue(g, node);
        }
    }

    private static void writeValue(JsonGenerator g, Object value) throws IOException {
        if (value == null || "".equals(value)) {
            g.writeNull(); // YAML's null and ~, and an empty list, reach Spring Boot as ""
        } else if (value instanceof Boolean b) {
            g.writeBoolean(b);
        } else if (value instanceof Integer || value instanceof Long || value instanceof Short
                || value instanceof Byte || value instanceof BigInteger) {
            g.writeNumber(value.toString());
        } else if (value instanceof BigDecimal d) {
            g.writeNumber(d.toPlainString());
        } else if ((value instanceof Double || value instanceof Float) && Double.isFinite(((Number) value).doubleValue())) {
            g.writeNumber(new BigDecimal(value.toString()).toPlainString());
        } else {
            String text = value.toString();
            if (INTEGER.matcher(text).matches()) {
                g.writeNumber(new BigInteger(text).toString());
            } else if (DECIMAL.matcher(text).matches()) {
                g.writeNumber(new BigDecimal(text).toPlainString());
            } else if (BOOLEAN.matcher(text).matches()) {
                g.writeBoolean(Boolean.parseBoolean(text.toLowerCase(Locale.ROOT)));
            } else {
                g.writeString(text);
            }
        }
    }

    // ---- names ----------------------------------------------------------------------------------------------

    private static String name(ConfigurationPropertyName path) {
        return path.toString();
    }

    /** {@code .key}, or {@code [key]} for a key that Spring Boot reads as written only in brackets. */
    private static String key(String key) {
        return PLAIN_KEY.matcher(key).matches() ? "." + key : "[" + key + "]";
    }

    private static Integer index(String text) {
        try {
            return Integer.valueOf(text);
        } catch (NumberFormatException e) {
            return null;
        }
    }
}

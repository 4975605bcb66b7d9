package io.quotagate.plans;

import io.quotagate.plans.YamlNode.Mapping;
import io.quotagate.plans.YamlNode.Scalar;
import io.quotagate.plans.YamlNode.Sequence;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Where the buckets live ({@code store:} in the plans file), kept as written: a type name
 * ({@code local}, the default, or a shared store such as {@code redis}) and the options under it with
 * their lines. Which options a type takes, and what they must hold, is the knowledge of the module that
 * provides the type (limiter-filter's store providers: {@code redis} is io.quotagate:limiter-redis's), not
 * the plans file's: the plans module knows no backend. A provider reads an option through the typed
 * readers here, which word their errors as every other field does ({@code file:line: store.field: reason}),
 * and refuses a value with {@link #invalid}.
 *
 * <p>Immutable. A spec written in code ({@link #of}) has no file position: its errors name {@code <code>}.
 */
public final class StoreSpec {
    /** The type of the default store: buckets in this JVM. Takes no option. */
    public static final String LOCAL = "local";

    private static final String CODE = "<code>";
    private static final StoreSpec LOCAL_SPEC = new StoreSpec(LOCAL, Map.of(), CODE, 0, "store", Map.of(), true);

    private final String type;
    private final Map<String, YamlNode> options;
    private final String file;
    private final int line;
    private final String field;
    private final Map<String, Integer> optionLines;
    /** True for {@code store:} itself, false for a section under it ({@code store.local-allowance}). */
    private final boolean top;
    private final FieldCursor in;

    private StoreSpec(String type, Map<String, YamlNode> options, String file, int line, String field,
                      Map<String, Integer> optionLines, boolean top) {
        this.type = type;
        this.options = options;
        this.file = file;
        this.line = line;
        this.field = field;
        this.optionLines = optionLines;
        this.top = top;
        this.in = new FieldCursor(file);
    }

    /** {@code store:} of a plans file; {@code m} holds {@code type} (already read) and the options. */
    static StoreSpec fromFile(String type, Mapping m, String file) {
        Map<String, YamlNode> o = new LinkedHashMap<>(m.entries());
        o.remove("type");
        return new StoreSpec(type, ordered(o), file, m.line(), "store", ordered(m.keyLines()), true);
    }

    /** The default: buckets in this JVM ({@code type: local}, no option). */
    public static StoreSpec local() {
        return LOCAL_SPEC;
    }

    /**
     * A spec written in code, with no file position, as a plans file would write it:
     * {@code StoreSpec.of("redis", Map.of("uri", "redis://cache:6379", "prefix", "shop"))}. An option's
     * value is a string, a boolean, a whole number, a {@link Duration} (a period), an enum constant (written
     * in lower case, {@code _} as {@code -}) or a map of these (a section such as {@code local-allowance}).
     * Checked by the type's provider when a store is opened from it, not here.
     *
     * @throws IllegalArgumentException for a value of another kind, or an option named {@code type}
     */
    public static StoreSpec of(String type, Map<String, ?> options) {
        Objects.requireNonNull(type, "type");
        if (options.containsKey("type")) throw new IllegalArgumentException("the type is not an option");
        return new StoreSpec(type, nodes(options), CODE, 0, "store", Map.of(), true);
    }

    /** The type name: {@link #LOCAL} or a shared store's ({@code redis}). */
    public String type() {
        return type;
    }

    /** Whether this is {@link #LOCAL}. */
    public boolean isLocal() {
        return LOCAL.equals(type);
    }

    /** The names of the options written, in file order (in code: the map's order); {@code type} is not one. */
    public Set<String> optionNames() {
        return Collections.unmodifiableSet(new LinkedHashSet<>(options.keySet()));
    }

    /** Whether {@code option} is written. */
    public boolean has(String option) {
        return options.containsKey(option);
    }

    /** The field this spec stands for: {@code store}, or a section's path ({@code store.local-allowance}). */
    public String field() {
        return field;
    }

    /**
     * A copy with {@code option} set to {@code value} (a value as {@link #of} takes them), e.g. a URI given on
     * the command line; the other options keep their lines.
     */
    public StoreSpec with(String option, Object value) {
        Objects.requireNonNull(option, "option");
        if (option.equals("type")) throw new IllegalArgumentException("the type is not an option");
        Map<String, YamlNode> o = new LinkedHashMap<>(options);
        o.put(option, node(option, value));
        Map<String, Integer> lines = new LinkedHashMap<>(optionLines);
        lines.remove(option);
        return new StoreSpec(type, ordered(o), file, line, field, ordered(lines), top);
    }

    /**
     * Refuses an option not in {@code allowed}, at its line: {@code store.pool: unknown key, expected one of
     * [...]} (the list names {@code type} too at the top of {@code store:}).
     *
     * @throws InvalidPlansException naming the file, line and field of the first unknown option
     */
    public void checkOptionNames(Set<String> allowed) {
        for (String option : optionNames()) {
            if (!allowed.contains(option)) {
                Set<String> expected = new TreeSet<>(allowed);
                if (top) expected.add("type");
                throw invalid(option, "unknown key, expected one of " + expected);
            }
        }
    }

    /**
     * The option as a non-empty string, if written.
     *
     * @throws InvalidPlansException naming file, line and field, if it is written but not a string
     */
    public Optional<String> string(String option) {
        YamlNode n = options.get(option);
        return n == null ? Optional.empty() : Optional.of(in.string(n, name(option)));
    }

    /**
     * The option as a string matching {@code pattern}, if written.
     *
     * @throws InvalidPlansException "must match ..., was '...'" naming file, line and field
     */
    public Optional<String> matching(String option, Pattern pattern) {
        YamlNode n = options.get(option);
        return n == null ? Optional.empty() : Optional.of(in.matching(n, name(option), pattern));
    }

    /**
     * The option as {@code true} or {@code false}, if written.
     *
     * @throws InvalidPlansException naming file, line and field, if it is written but not a boolean
     */
    public Optional<Boolean> bool(String option) {
        YamlNode n = options.get(option);
        return n == null ? Optional.empty() : Optional.of(in.bool(n, name(option)));
    }

    /**
     * The option as a whole number from 1 to {@code max}, if written.
     *
     * @throws InvalidPlansException naming file, line and field, for anything else
     */
    public Optional<Long> positive(String option, long max) {
        YamlNode n = options.get(option);
        return n == null ? Optional.empty() : Optional.of(in.positive(n, name(option), max));
    }

    /**
     * The option as a period ({@code 50ms}, {@code 2s}, {@code PT10S}; a bare number is refused), if written.
     *
     * @throws InvalidPlansException naming file, line and field, for anything else
     */
    public Optional<Duration> period(String option) {
        YamlNode n = options.get(option);
        return n == null ? Optional.empty() : Optional.of(in.period(n, name(option)));
    }

    /**
     * The option as one of {@code type}'s constants, written in lower case with {@code -} for {@code _},
     * if written.
     *
     * @throws InvalidPlansException "unknown value '...', expected one of [...]" naming file, line and field
     */
    public <E extends Enum<E>> Optional<E> choice(String option, Class<E> type) {
        if (!options.containsKey(option)) return Optional.empty();
        Mapping m = new Mapping(options, optionLines, line);
        return Optional.of(in.choice(m, option, name(option), null, type));
    }

    /**
     * The option as a section of its own (a map, such as {@code store.local-allowance}), read the same way,
     * if written.
     *
     * @throws InvalidPlansException naming file, line and field, if it is written but not a map
     */
    public Optional<StoreSpec> section(String option) {
        YamlNode n = options.get(option);
        if (n == null) return Optional.empty();
        Mapping m = in.mapping(n, name(option), null);
        return Optional.of(new StoreSpec(type, ordered(m.entries()), file, m.line(), name(option),
                ordered(m.keyLines()), false));
    }

    /**
     * The error for a bad value of {@code option} (a missing one: at the line of {@code store:}'s first key),
     * naming the file, the line and the field: {@code plans.yml:7: store.uri: required}.
     */
    public InvalidPlansException invalid(String option, String reason) {
        return new InvalidPlansException(file, optionLines.getOrDefault(option, line), name(option), reason);
    }

    private String name(String option) {
        return option.isEmpty() ? field : field + "." + option;
    }

    /** Same type and the same options with the same values, wherever they are written. */
    @Override
    public boolean equals(Object o) {
        return o instanceof StoreSpec s && type.equals(s.type) && field.equals(s.field)
                && plain(options).equals(plain(s.options));
    }

    @Override
    public int hashCode() {
        return Objects.hash(type, field, plain(options));
    }

    /** Type and option names: never the values (a URI may hold a password). */
    @Override
    public String toString() {
        return "StoreSpec[type=" + type + ", options=" + optionNames() + (line > 0 ? ", at " + file + ":" + line : "")
                + "]";
    }

    private static Object plain(Map<String, YamlNode> options) {
        Map<String, Object> out = new LinkedHashMap<>();
        options.forEach((k, v) -> out.put(k, plain(v)));
        return out;
    }

    private static Object plain(YamlNode node) {
        if (node instanceof Scalar s) return List.of(s.type(), s.text());
        if (node instanceof Mapping m) return plain(m.entries());
        return ((Sequence) node).items().stream().map(StoreSpec::plain).toList();
    }

    private static Map<String, YamlNode> nodes(Map<String, ?> options) {
        Map<String, YamlNode> o = new LinkedHashMap<>();
        options.forEach((k, v) -> o.put(Objects.requireNonNull(k, "option"), node(k, v)));
        return ordered(o);
    }

    /** An unmodifiable copy in the same order (file order, for messages that name the first bad option). */
    private static <V> Map<String, V> ordered(Map<String, V> map) {
        return Collections.unmodifiableMap(new LinkedHashMap<>(map));
    }

    private static YamlNode node(String option, Object v) {
        Objects.requireNonNull(v, option);
        if (v instanceof Boolean) return new Scalar(v.toString(), Scalar.Type.BOOLEAN, 0);
        if (v instanceof Integer || v instanceof Long || v instanceof Short) {
            return new Scalar(v.toString(), Scalar.Type.INT, 0);
        }
        if (v instanceof String s) return new Scalar(s, Scalar.Type.STRING, 0);
        if (v instanceof Duration d) {
            boolean millis = d.getNano() % 1_000_000 == 0;
            return new Scalar(millis ? d.toMillis() + "ms" : d.toString(), Scalar.Type.STRING, 0);
        }
        if (v instanceof Enum<?> e) {
            return new Scalar(e.name().toLowerCase(Locale.ROOT).replace('_', '-'), Scalar.Type.STRING, 0);
        }
        if (v instanceof Map<?, ?> map) {
            Map<String, Object> section = new LinkedHashMap<>();
            map.forEach((k, x) -> section.put(String.valueOf(k), x));
            return new Mapping(new LinkedHashMap<>(nodes(section)), new LinkedHashMap<>(), 0);
        }
        throw new IllegalArgumentException(option + ": a string, boolean, whole number, Duration, enum constant"
                + " or map is expected, was " + v.getClass().getName());
    }
}

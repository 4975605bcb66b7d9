package io.quotagate.plans;

import io.quotagate.plans.YamlNode.Mapping;
import io.quotagate.plans.YamlNode.Scalar;
import io.quotagate.plans.YamlNode.Sequence;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Reads one field of a plans file as the type it must have (map, list, string, whole number, period,
 * enum), refusing anything else with one {@link InvalidPlansException} that names the file, the
 * line and the field. The one place that words "expected a number" and its kin, so every section
 * (and every resolver option) says it the same way.
 */
final class FieldCursor {
    /** What a plan, group, route or limit name may be. */
    static final Pattern NAME = Pattern.compile("[a-z][a-z0-9_-]{0,31}");

    private final String source;

    FieldCursor(String source) {
        this.source = source;
    }

    /** The file (or resource) the fields are read from. */
    String source() {
        return source;
    }

    InvalidPlansException error(int line, String field, String reason) {
        return new InvalidPlansException(source, line, field, reason);
    }

    /** The node as a map; {@code allowed} (when not null) lists the only keys it may have. */
    Mapping mapping(YamlNode node, String field, Set<String> allowed) {
        if (!(node instanceof Mapping m)) throw error(node.line(), field, "expected a map, found " + node.kind());
        if (allowed != null) {
            for (Map.Entry<String, Integer> key : m.keyLines().entrySet()) {
                if (!allowed.contains(key.getKey())) {
                    throw error(key.getValue(), join(field, key.getKey()), "unknown key, expected one of "
                            + new TreeSet<>(allowed));
                }
            }
        }
        return m;
    }

    Sequence sequence(YamlNode node, String field) {
        if (node instanceof Sequence s) return s;
        throw error(node.line(), field, "expected a list, found " + node.kind());
    }

    YamlNode required(Mapping m, String key, String field) {
        YamlNode n = m.entries().get(key);
        if (n == null) throw error(m.line(), join(field, key), "required");
        return n;
    }

    String string(YamlNode node, String field) {
        if (node instanceof Scalar s && s.type() != Scalar.Type.NULL && !s.text().isEmpty()) return s.text();
        throw error(node.line(), field, "expected a non-empty string, found " + node.kind());
    }

    /** A string that must match {@code pattern} (a name, a header): "must match ..., was '...'". */
    String matching(YamlNode node, String field, Pattern pattern) {
        String text = string(node, field);
        if (!pattern.matcher(text).matches()) {
            throw error(node.line(), field, "must match " + pattern.pattern() + ", was '" + text + "'");
        }
        return text;
    }

    boolean bool(YamlNode node, String field) {
        if (node instanceof Scalar s && s.type() == Scalar.Type.BOOLEAN) return Boolean.parseBoolean(s.text());
        throw error(node.line(), field, "expected true or false, found " + node.kind());
    }

    /** {@code m.key} as a boolean, {@code absent} if it is not written. */
    boolean bool(Mapping m, String key, String field, boolean absent) {
        YamlNode n = m.entries().get(key);
        return n == null ? absent : bool(n, field);
    }

    /** A whole number from 1 to {@code max}. */
    long positive(YamlNode node, String field, long max) {
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

    /** A whole number from 1 to {@code max} that fits an int. */
    int positiveInt(YamlNode node, String field, int max) {
        return (int) positive(node, field, max);
    }

    /** A period as {@link PlansFile#parsePeriod} reads it; a bare number is refused (which unit?). */
    Duration period(YamlNode node, String field) {
        String text = node instanceof Scalar s && s.type() != Scalar.Type.NULL ? s.text() : null;
        if (text == null || ((Scalar) node).type() != Scalar.Type.STRING) {
            throw error(node.line(), field, "expected a period such as 10s, 1m, 1d or PT10S, found "
                    + (text == null ? node.kind() : "'" + text + "' (a number needs a unit: ms, s, m, h, d)"));
        }
        try {
            return PlansFile.parsePeriod(text);
        } catch (IllegalArgumentException e) {
            throw error(node.line(), field, e.getMessage());
        }
    }

    /** {@code m.key} as one of {@code type}'s constants, written in lower case; {@code absent} if not written. */
    <E extends Enum<E>> E choice(Mapping m, String key, String field, E absent, Class<E> type) {
        YamlNode n = m.entries().get(key);
        if (n == null) return absent;
        String text = string(n, field);
        List<String> allowed = new ArrayList<>();
        for (E e : type.getEnumConstants()) {
            String name = e.name().toLowerCase(Locale.ROOT).replace('_', '-'); // CLIENT_ADDRESS: client-address
            if (name.equals(text)) return e;
            allowed.add(name);
        }
        throw error(n.line(), field, "unknown value '" + text + "', expected one of " + allowed);
    }

    static String join(String field, String key) {
        return field.isEmpty() ? key : field + "." + key;
    }
}

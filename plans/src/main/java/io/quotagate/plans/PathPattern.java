package io.quotagate.plans;

import java.util.Arrays;
import java.util.Objects;

/**
 * A request path pattern made of {@code /}-separated segments: a literal segment matches itself,
 * {@code *} matches exactly one non-empty segment, and a final {@code **} matches any rest
 * (including nothing). {@code /reports/*} matches {@code /reports/42} but not {@code /reports}
 * nor {@code /reports/42/pdf}; {@code /v1/**} matches {@code /v1} and everything below it.
 */
public final class PathPattern {
    /** The one-segment wildcard, held as this very instance so matching tells it apart by identity. */
    private static final String ANY = "*";

    private final String text;
    private final String[] segments;
    private final boolean anyRest;

    private PathPattern(String text, String[] segments, boolean anyRest) {
        this.text = text;
        this.segments = segments;
        this.anyRest = anyRest;
    }

    /**
     * Parses a pattern.
     *
     * @throws IllegalArgumentException if it does not start with {@code /}, has an empty segment,
     *                                  or a {@code **} anywhere but last
     */
    public static PathPattern parse(String text) {
        Objects.requireNonNull(text, "text");
        if (!text.startsWith("/")) throw new IllegalArgumentException("must start with '/': " + text);
        if (text.equals("/")) return new PathPattern(text, new String[0], false);
        String[] parts = text.substring(1).split("/", -1);
        boolean anyRest = parts[parts.length - 1].equals("**");
        String[] fixed = anyRest ? Arrays.copyOf(parts, parts.length - 1) : parts;
        for (String s : fixed) {
            if (s.isEmpty()) throw new IllegalArgumentException("empty segment in " + text);
            if (s.equals("**")) throw new IllegalArgumentException("'**' is only allowed as the last segment: " + text);
            if (!s.equals("*") && s.contains("*")) {
                throw new IllegalArgumentException("'*' must be a whole segment: " + text);
            }
        }
        for (int i = 0; i < fixed.length; i++) {
            if (fixed[i].equals(ANY)) fixed[i] = ANY;
        }
        return new PathPattern(text, fixed, anyRest);
    }

    /**
     * True if the (decoded, query-less) request path matches. Allocation-free, one pass over the
     * path, each literal segment compared in place: it runs for every request.
     */
    public boolean matches(String path) {
        if (path == null) return false;
        int n = path.length();
        if (n == 0 || path.charAt(0) != '/') return false;
        int pos = 1;
        for (String seg : segments) {
            if (pos >= n) return false; // no segment left (or only an empty one) for this one
            int end;
            if (seg == ANY) {
                end = pos;
                while (end < n && path.charAt(end) != '/') end++;
                if (end == pos) return false;
            } else {
                end = pos + seg.length();
                if (end > n || (end < n && path.charAt(end) != '/') || !path.startsWith(seg, pos)) return false;
            }
            pos = end + 1;
        }
        if (anyRest) return true;
        // everything consumed: either exactly at the end, or a single trailing slash
        return pos >= n;
    }

    @Override
    public String toString() {
        return text;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PathPattern p && p.text.equals(text);
    }

    @Override
    public int hashCode() {
        return text.hashCode();
    }
}

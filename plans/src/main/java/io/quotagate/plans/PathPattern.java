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
        return new PathPattern(text, fixed, anyRest);
    }

    /** True if the (decoded, query-less) request path matches. Allocation-free. */
    public boolean matches(String path) {
        if (path == null || path.isEmpty() || path.charAt(0) != '/') return false;
        int pos = 1;
        int n = path.length();
        for (String seg : segments) {
            if (pos > n) return false;
            int end = path.indexOf('/', pos);
            if (end < 0) end = n;
            int len = end - pos;
            if (len == 0) return false;
            if (!seg.equals("*") && (len != seg.length() || !path.regionMatches(pos, seg, 0, len))) return false;
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

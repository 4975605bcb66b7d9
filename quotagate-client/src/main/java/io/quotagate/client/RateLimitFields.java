package io.quotagate.client;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The IETF {@code RateLimit} and {@code RateLimit-Policy} fields
 * (draft-ietf-httpapi-ratelimit-headers-11): lists of Structured Field items (RFC 9651) naming a
 * policy, with parameters.
 *
 * <pre>
 * RateLimit-Policy: "burst";q=100;w=60;pk=:YWNtZQ==:, "daily";q=1000;w=86400;pk=:YWNtZQ==:
 * RateLimit: "burst";r=37;t=1;pk=:YWNtZQ==:
 * </pre>
 *
 * <p>{@code RateLimit} parameters: {@code r} available units, {@code t} the effective window (-11
 * §4.1.2: seconds within which the client can use no more than {@code r}; quotagate sends the wait for
 * the next unit, see its README), {@code pk} partition key. {@code RateLimit-Policy} parameters:
 * {@code q} quota, {@code w} window in seconds, {@code qu} quota unit (a string), {@code pk} (a byte
 * sequence, kept as its base64 text). On a 429, {@code RateLimit} may list only the exhausted
 * policies. Unknown parameters are kept and ignored; a malformed field is refused (callers ignore it).
 */
public final class RateLimitFields {
    private RateLimitFields() {
    }

    /** One item of the {@code RateLimit} field: the state of a policy. */
    public record Limit(String policy, long remaining, Optional<Long> resetSeconds, Map<String, Object> parameters) {
        public Limit {
            Objects.requireNonNull(policy, "policy");
            parameters = Map.copyOf(parameters);
        }
    }

    /** One item of the {@code RateLimit-Policy} field. */
    public record Policy(String name, long quota, Optional<Long> windowSeconds, Map<String, Object> parameters) {
        public Policy {
            Objects.requireNonNull(name, "name");
            parameters = Map.copyOf(parameters);
        }
    }

    /** Parses a {@code RateLimit} field value; every item needs a non-negative integer {@code r}. */
    public static List<Limit> parseRateLimit(String value) {
        List<Limit> limits = new ArrayList<>();
        for (Item item : parseList(value)) {
            long r = nonNegative(item, "r", true);
            Long t = item.params.containsKey("t") ? nonNegative(item, "t", true) : null;
            limits.add(new Limit(item.name, r, Optional.ofNullable(t), item.params));
        }
        return limits;
    }

    /** Parses a {@code RateLimit-Policy} field value; every item needs a non-negative integer {@code q}. */
    public static List<Policy> parsePolicy(String value) {
        List<Policy> policies = new ArrayList<>();
        for (Item item : parseList(value)) {
            long q = nonNegative(item, "q", true);
            Long w = item.params.containsKey("w") ? nonNegative(item, "w", true) : null;
            if (w != null && w == 0) throw new IllegalArgumentException("policy " + item.name + ": w must be > 0");
            if (item.params.containsKey("qu") && !(item.params.get("qu") instanceof String)) {
                throw new IllegalArgumentException("policy " + item.name + ": qu must be a string (not a number or a boolean)");
            }
            policies.add(new Policy(item.name, q, Optional.ofNullable(w), item.params));
        }
        return policies;
    }

    private static long nonNegative(Item item, String key, boolean required) {
        Object v = item.params.get(key);
        if (v == null) {
            if (required) throw new IllegalArgumentException("item " + item.name + ": missing parameter " + key);
            return -1;
        }
        if (!(v instanceof Long n) || n < 0) {
            throw new IllegalArgumentException("item " + item.name + ": " + key + " must be a non-negative integer, was " + v);
        }
        return n;
    }

    private record Item(String name, Map<String, Object> params) {
    }

    /** RFC 8941 §4.2.1 list of items whose bare item is a string or a token. */
    private static List<Item> parseList(String input) {
        Objects.requireNonNull(input, "field value");
        Cursor c = new Cursor(input);
        List<Item> items = new ArrayList<>();
        c.skipSpaces();
        if (c.done()) throw new IllegalArgumentException("empty field value");
        while (true) {
            String name = c.bareName();
            Map<String, Object> params = new LinkedHashMap<>();
            while (c.peek() == ';') {
                c.pos++;
                c.skipSpaces();
                String key = c.key();
                Object v = Boolean.TRUE;
                if (c.peek() == '=') {
                    c.pos++;
                    v = c.bareValue();
                }
                params.put(key, v);
            }
            items.add(new Item(name, params));
            c.skipOws();
            if (c.done()) return items;
            c.expect(',');
            c.skipOws();
            if (c.done()) throw new IllegalArgumentException("trailing comma at " + c.pos);
        }
    }

    private static final class Cursor {
        final String s;
        int pos;

        Cursor(String s) {
            this.s = s;
        }

        boolean done() {
            return pos >= s.length();
        }

        char peek() {
            return done() ? '\0' : s.charAt(pos);
        }

        void expect(char ch) {
            if (peek() != ch) throw new IllegalArgumentException("expected '" + ch + "' at " + pos + " in: " + s);
            pos++;
        }

        void skipSpaces() {
            while (peek() == ' ') pos++;
        }

        void skipOws() {
            while (peek() == ' ' || peek() == '\t') pos++;
        }

        String bareName() {
            char ch = peek();
            if (ch == '"') return string();
            if (Character.isLetter(ch) || ch == '*') return token();
            throw new IllegalArgumentException("expected a string or a token at " + pos + " in: " + s);
        }

        Object bareValue() {
            char ch = peek();
            if (ch == '"') return string();
            if (ch == '-' || Character.isDigit(ch)) return number();
            if (ch == ':') {
                // byte sequence (RFC 8941 §3.3.5), kept as its base64 text
                int end = s.indexOf(':', pos + 1);
                if (end < 0) throw new IllegalArgumentException("unterminated byte sequence at " + pos + " in: " + s);
                String b64 = s.substring(pos + 1, end);
                pos = end + 1;
                return b64;
            }
            if (ch == '?') {
                pos++;
                char b = peek();
                if (b != '0' && b != '1') throw new IllegalArgumentException("bad boolean at " + pos + " in: " + s);
                pos++;
                return b == '1';
            }
            if (Character.isLetter(ch) || ch == '*') return token();
            throw new IllegalArgumentException("bad parameter value at " + pos + " in: " + s);
        }

        String key() {
            char ch = peek();
            if (!((ch >= 'a' && ch <= 'z') || ch == '*')) {
                throw new IllegalArgumentException("bad parameter key at " + pos + " in: " + s);
            }
            int start = pos;
            while (!done()) {
                ch = peek();
                if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.' || ch == '*') pos++;
                else break;
            }
            return s.substring(start, pos);
        }

        String token() {
            int start = pos;
            pos++;
            while (!done()) {
                char ch = peek();
                if (ch > 0x20 && ch < 0x7f && "\"(),;<=>?@[\\]{} ".indexOf(ch) < 0) pos++;
                else break;
            }
            return s.substring(start, pos);
        }

        String string() {
            expect('"');
            StringBuilder out = new StringBuilder();
            while (true) {
                if (done()) throw new IllegalArgumentException("unterminated string in: " + s);
                char ch = s.charAt(pos++);
                if (ch == '\\') {
                    char next = peek();
                    if (next != '"' && next != '\\') throw new IllegalArgumentException("bad escape at " + pos + " in: " + s);
                    out.append(next);
                    pos++;
                } else if (ch == '"') {
                    return out.toString();
                } else if (ch < 0x20 || ch > 0x7e) {
                    throw new IllegalArgumentException("bad character in string at " + (pos - 1) + " in: " + s);
                } else {
                    out.append(ch);
                }
            }
        }

        Object number() {
            int start = pos;
            if (peek() == '-') pos++;
            int digitsStart = pos;
            while (Character.isDigit(peek())) pos++;
            if (pos == digitsStart) throw new IllegalArgumentException("bad number at " + start + " in: " + s);
            if (peek() == '.') {
                pos++;
                int frac = pos;
                while (Character.isDigit(peek())) pos++;
                if (pos == frac || pos - frac > 3 || frac - 1 - digitsStart > 12) {
                    throw new IllegalArgumentException("bad decimal at " + start + " in: " + s);
                }
                return Double.parseDouble(s.substring(start, pos));
            }
            if (pos - digitsStart > 15) throw new IllegalArgumentException("integer too long at " + start + " in: " + s);
            return Long.parseLong(s.substring(start, pos));
        }
    }
}

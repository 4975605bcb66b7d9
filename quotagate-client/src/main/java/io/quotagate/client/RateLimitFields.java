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
 * the next unit, see its docs/response-contract.md), {@code pk} partition key. {@code RateLimit-Policy} parameters:
 * {@code q} quota, {@code w} window in seconds, {@code qu} quota unit (a string), {@code pk} (a byte
 * sequence, kept as its base64 text). On a 429, {@code RateLimit} may list only the exhausted
 * policies. Unknown parameters are kept and ignored; a malformed field is refused (callers ignore it).
 *
 * <p>A field is read in one pass, and refused ({@link IllegalArgumentException}) beyond the sizes RFC
 * 9651 §3.1 asks a parser to support: {@value #MAX_MEMBERS} members, {@value #MAX_PARAMETERS}
 * parameters per member, integers of 15 digits. So a hostile field costs time in its length only,
 * and a client compares at most {@value #MAX_MEMBERS} policies.
 */
public final class RateLimitFields {
    /** The most members (policies) a field may list. */
    public static final int MAX_MEMBERS = 1024;
    /** The most parameters a member may carry. */
    public static final int MAX_PARAMETERS = 256;

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
            if (w != null && w == 0) throw new IllegalArgumentException("policy " + shown(item.name) + ": w must be > 0");
            if (item.params.containsKey("qu") && !(item.params.get("qu") instanceof String)) {
                throw new IllegalArgumentException("policy " + shown(item.name) + ": qu must be a string (not a number or a boolean)");
            }
            policies.add(new Policy(item.name, q, Optional.ofNullable(w), item.params));
        }
        return policies;
    }

    private static long nonNegative(Item item, String key, boolean required) {
        Object v = item.params.get(key);
        if (v == null) {
            if (required) throw new IllegalArgumentException("item " + shown(item.name) + ": missing parameter " + key);
            return -1;
        }
        if (!(v instanceof Long n) || n < 0) {
            throw new IllegalArgumentException("item " + shown(item.name) + ": " + key + " must be a non-negative integer, was " + shown(String.valueOf(v)));
        }
        return n;
    }

    private record Item(String name, Map<String, Object> params) {
    }

    // a message quotes the start of a value, never a megabyte of it
    private static String shown(String value) {
        return value.length() <= 100 ? value : value.substring(0, 100) + "... (" + value.length() + " chars)";
    }

    /** RFC 8941 §4.2.1 list of items whose bare item is a string or a token. */
    private static List<Item> parseList(String input) {
        Objects.requireNonNull(input, "field value");
        Cursor c = new Cursor(input);
        List<Item> items = new ArrayList<>();
        c.skipSpaces();
        if (c.done()) throw new IllegalArgumentException("empty field value");
        while (true) {
            if (items.size() == MAX_MEMBERS) throw new IllegalArgumentException("more than " + MAX_MEMBERS + " members");
            String name = c.bareName();
            Map<String, Object> params = new LinkedHashMap<>();
            while (c.peek() == ';') {
                if (params.size() == MAX_PARAMETERS) {
                    throw new IllegalArgumentException("item " + shown(name) + ": more than " + MAX_PARAMETERS + " parameters");
                }
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
            if (peek() != ch) throw new IllegalArgumentException("expected '" + ch + "' at " + pos + " in: " + shown(s));
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
            if (isAlpha(ch) || ch == '*') return token();
            throw new IllegalArgumentException("expected a string or a token at " + pos + " in: " + shown(s));
        }

        Object bareValue() {
            char ch = peek();
            if (ch == '"') return string();
            if (ch == '-' || isDigit(ch)) return number();
            if (ch == ':') {
                // byte sequence (RFC 8941 §3.3.5), kept as its base64 text
                int end = s.indexOf(':', pos + 1);
                if (end < 0) throw new IllegalArgumentException("unterminated byte sequence at " + pos + " in: " + shown(s));
                String b64 = s.substring(pos + 1, end);
                pos = end + 1;
                return b64;
            }
            if (ch == '?') {
                pos++;
                char b = peek();
                if (b != '0' && b != '1') throw new IllegalArgumentException("bad boolean at " + pos + " in: " + shown(s));
                pos++;
                return b == '1';
            }
            if (isAlpha(ch) || ch == '*') return token();
            throw new IllegalArgumentException("bad parameter value at " + pos + " in: " + shown(s));
        }

        String key() {
            char ch = peek();
            if (!((ch >= 'a' && ch <= 'z') || ch == '*')) {
                throw new IllegalArgumentException("bad parameter key at " + pos + " in: " + shown(s));
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
                if (done()) throw new IllegalArgumentException("unterminated string in: " + shown(s));
                char ch = s.charAt(pos++);
                if (ch == '\\') {
                    char next = peek();
                    if (next != '"' && next != '\\') throw new IllegalArgumentException("bad escape at " + pos + " in: " + shown(s));
                    out.append(next);
                    pos++;
                } else if (ch == '"') {
                    return out.toString();
                } else if (ch < 0x20 || ch > 0x7e) {
                    throw new IllegalArgumentException("bad character in string at " + (pos - 1) + " in: " + shown(s));
                } else {
                    out.append(ch);
                }
            }
        }

        // DIGIT and ALPHA are ASCII (RFC 9651 §4.2.4, §4.2.6); Character.isDigit would take any
        // script's digits, and Long.parseLong would read them
        static boolean isDigit(char ch) {
            return ch >= '0' && ch <= '9';
        }

        static boolean isAlpha(char ch) {
            return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
        }

        Object number() {
            int start = pos;
            if (peek() == '-') pos++;
            int digitsStart = pos;
            while (isDigit(peek())) pos++;
            if (pos == digitsStart) throw new IllegalArgumentException("bad number at " + start + " in: " + shown(s));
            if (peek() == '.') {
                pos++;
                int frac = pos;
                while (isDigit(peek())) pos++;
                if (pos == frac || pos - frac > 3 || frac - 1 - digitsStart > 12) {
                    throw new IllegalArgumentException("bad decimal at " + start + " in: " + shown(s));
                }
                return Double.parseDouble(s.substring(start, pos));
            }
            if (pos - digitsStart > 15) throw new IllegalArgumentException("integer too long at " + start + " in: " + shown(s));
            return Long.parseLong(s.substring(start, pos));
        }
    }
}

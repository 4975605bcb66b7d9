package io.quotagate.filter;

import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * An RFC 9457 problem answer: {@code application/problem+json} with {@code type}, {@code title},
 * {@code status}, {@code detail}, and the members {@code tenant}, {@code reason} and (for 429)
 * {@code retryAfterSeconds}. The type is {@code about:blank} (the {@code reason} member says why),
 * except for a 429 that names the published policies it exhausted: then it is draft-11's
 * {@value #QUOTA_EXCEEDED} with the member {@code violated-policies}.
 *
 * @param status            HTTP status
 * @param reason            machine-readable reason ({@code tenant_rate}, {@code invalid_tenant}...)
 * @param detail            human-readable explanation; never echoes unvalidated client input
 * @param tenant            the (valid) tenant id, or null when there is none to name
 * @param retryAfterSeconds the Retry-After delay, or 0 for none
 * @param violatedPolicies  the published policies the request exceeded; empty for {@code about:blank}
 */
record Problem(int status, String reason, String detail, String tenant, long retryAfterSeconds,
               List<String> violatedPolicies) {
    static final String CONTENT_TYPE = "application/problem+json";
    /** draft-ietf-httpapi-ratelimit-headers-11 §5.1. */
    static final String QUOTA_EXCEEDED = "https://iana.org/assignments/http-problem-types#quota-exceeded";

    Problem {
        violatedPolicies = List.copyOf(violatedPolicies);
    }

    Problem(int status, String reason, String detail, String tenant, long retryAfterSeconds) {
        this(status, reason, detail, tenant, retryAfterSeconds, List.of());
    }

    /** This problem naming {@code tenant} (null for none). */
    Problem withTenant(String tenant) {
        return new Problem(status, reason, detail, tenant, retryAfterSeconds, violatedPolicies);
    }

    void write(HttpServletResponse response) throws IOException {
        response.setStatus(status);
        response.setContentType(CONTENT_TYPE);
        response.setHeader("Cache-Control", "no-store");
        if (retryAfterSeconds > 0) response.setHeader("Retry-After", Long.toString(retryAfterSeconds));
        byte[] body = json().getBytes(StandardCharsets.UTF_8);
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
    }

    String json() {
        StringBuilder b = new StringBuilder(256);
        boolean quota = !violatedPolicies.isEmpty();
        b.append("{\"type\":");
        quote(b, quota ? QUOTA_EXCEEDED : "about:blank");
        b.append(",\"title\":");
        quote(b, quota ? "Quota Exceeded" : title(status));
        b.append(",\"status\":").append(status).append(",\"detail\":");
        quote(b, detail);
        if (tenant != null) {
            b.append(",\"tenant\":");
            quote(b, tenant);
        }
        b.append(",\"reason\":");
        quote(b, reason);
        if (retryAfterSeconds > 0) b.append(",\"retryAfterSeconds\":").append(retryAfterSeconds);
        if (quota) {
            b.append(",\"violated-policies\":[");
            for (int i = 0; i < violatedPolicies.size(); i++) {
                if (i > 0) b.append(',');
                quote(b, violatedPolicies.get(i));
            }
            b.append(']');
        }
        return b.append('}').toString();
    }

    static String title(int status) {
        return switch (status) {
            case 400 -> "Bad Request";
            case 401 -> "Unauthorized";
            case 403 -> "Forbidden";
            case 413 -> "Content Too Large";
            case 429 -> "Too Many Requests";
            case 503 -> "Service Unavailable";
            default -> status >= 500 ? "Internal Server Error" : "Client Error";
        };
    }

    private static void quote(StringBuilder b, String s) {
        b.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                    else b.append(c);
                }
            }
        }
        b.append('"');
    }
}

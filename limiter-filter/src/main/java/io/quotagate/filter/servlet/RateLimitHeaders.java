package io.quotagate.filter.servlet;

import io.quotagate.filter.admission.LimitStatus;
import jakarta.servlet.http.HttpServletResponse;

import java.util.List;

/**
 * Publishes a plan's limits in the fields of draft-ietf-httpapi-ratelimit-headers-10, one list item
 * per bandwidth of the tenant's bucket (the global quota is never included):
 * <pre>
 * RateLimit-Policy: "burst";q=200;w=20, "daily";q=5000;w=86400
 * RateLimit: "burst";r=37;t=17, "daily";r=4837;t=2817
 * </pre>
 * {@code q} is the bandwidth's capacity and {@code w} the whole seconds an empty bandwidth needs to
 * be full again, so {@code q} units per {@code w} seconds is the sustained rate and {@code q} the
 * burst. {@code r} is the units available now (0 while in debt) and {@code t} the whole seconds,
 * rounded up, until the bandwidth is full again. On a response that also carries
 * {@code Retry-After}, each {@code t} is capped at it, so a client reading either field never waits
 * past the moment the refused request would be admitted.
 *
 * <p>The optional legacy fields {@code X-RateLimit-Limit/-Remaining/-Reset} describe the bandwidth
 * with the fewest units left.
 */
final class RateLimitHeaders {
    static final String POLICY = "RateLimit-Policy";
    static final String RATE_LIMIT = "RateLimit";

    private RateLimitHeaders() {
    }

    /**
     * @param retryAfterSeconds the response's Retry-After, or 0 when it has none
     * @param legacy            also send {@code X-RateLimit-Limit}, {@code -Remaining}, {@code -Reset}
     */
    static void write(HttpServletResponse response, List<LimitStatus> limits, long retryAfterSeconds, boolean legacy) {
        if (limits.isEmpty()) return;
        StringBuilder policy = new StringBuilder(48 * limits.size());
        StringBuilder state = new StringBuilder(48 * limits.size());
        LimitStatus tightest = null;
        long tightestReset = 0;
        for (LimitStatus s : limits) {
            long reset = resetSeconds(s, retryAfterSeconds);
            if (policy.length() > 0) {
                policy.append(", ");
                state.append(", ");
            }
            policy.append('"').append(s.name()).append("\";q=").append(s.capacity()).append(";w=").append(s.windowSeconds());
            state.append('"').append(s.name()).append("\";r=").append(s.remaining()).append(";t=").append(reset);
            if (tightest == null || s.remaining() < tightest.remaining()) {
                tightest = s;
                tightestReset = reset;
            }
        }
        response.setHeader(POLICY, policy.toString());
        response.setHeader(RATE_LIMIT, state.toString());
        if (legacy) {
            response.setHeader("X-RateLimit-Limit", Long.toString(tightest.capacity()));
            response.setHeader("X-RateLimit-Remaining", Long.toString(tightest.remaining()));
            response.setHeader("X-RateLimit-Reset", Long.toString(tightestReset));
        }
    }

    static long resetSeconds(LimitStatus s, long retryAfterSeconds) {
        long seconds = s.secondsToFull();
        return retryAfterSeconds > 0 ? Math.min(seconds, retryAfterSeconds) : seconds;
    }
}

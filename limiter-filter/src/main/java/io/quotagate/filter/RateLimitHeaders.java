package io.quotagate.filter;

import io.quotagate.filter.status.BandwidthStatus;
import jakarta.servlet.http.HttpServletResponse;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Objects;

/**
 * Publishes a plan's limits in the fields of draft-ietf-httpapi-ratelimit-headers-11, one list item
 * per bandwidth of the tenant's bucket (the global quota is never included), then one per bandwidth of
 * the request's buckets beside it (per user, the route's own), each named by its scope:
 * <pre>
 * RateLimit-Policy: "burst";q=200;w=20;pk=:YWNtZQ==:, "daily";q=5000;w=86400;pk=:YWNtZQ==:
 * RateLimit: "burst";r=37;t=1;pk=:YWNtZQ==:, "daily";r=4837;t=18;pk=:YWNtZQ==:
 * </pre>
 * {@code q} is the bandwidth's capacity and {@code w} the whole seconds an empty bandwidth needs to
 * be full again, so {@code q} units per {@code w} seconds is the sustained rate and {@code q} the
 * burst. {@code r} is the units available now (0 while in debt) and {@code t} (§4.1.2, the effective
 * window) the whole seconds, rounded up, until the bandwidth holds a unit more than {@code r}: within
 * that time the client can count on no more than {@code r}. {@code pk} (§3.1.4, §4.1.3) is the
 * partition the quota is kept for ({@link BandwidthStatus#partitionKey()}: the tenant id, or
 * {@code <tenant>/<user>}), as a byte sequence; a bucket keyed by a client address (an anonymous
 * client's, a route's per client address) gets none. {@code qu} is left out: a unit is a request when
 * every route costs 1 (the draft's default), and otherwise an application-defined cost the quota-unit
 * registry has no name for.
 *
 * <p>On a 429 (§6, Appendix B.1.2), {@code RateLimit} lists only the exhausted policies (fewer units
 * than the refused request's cost: the one that refused it, a per-user or route limit's included), each
 * {@code t} at most {@code Retry-After}; a refusal by a quota that is not published (the global quota,
 * the guest pool) lists every policy, each {@code t} capped the same way. {@code RateLimit-Policy} always
 * lists them all.
 *
 * <p>The optional legacy fields {@code X-RateLimit-Limit/-Remaining/-Reset} describe the bandwidth
 * with the fewest units left ({@code -Reset}: seconds until it is full).
 */
final class RateLimitHeaders {
    static final String POLICY = "RateLimit-Policy";
    static final String RATE_LIMIT = "RateLimit";

    private RateLimitHeaders() {
    }

    /** The fields of an admitted request. */
    static void write(HttpServletResponse response, List<BandwidthStatus> limits, boolean legacy) {
        write(response, limits, 0, 0, legacy);
    }

    /**
     * Writes the fields, each item with its {@link BandwidthStatus#partitionKey()} as {@code pk} (none if null).
     *
     * @param retryAfterSeconds the response's Retry-After, or 0 when it has none (admitted)
     * @param refusedCost       on a 429, the cost of the refused request (a policy with fewer units is exhausted)
     * @param legacy            also send {@code X-RateLimit-Limit}, {@code -Remaining}, {@code -Reset}
     * @return the names of the exhausted policies (empty when admitted, or refused by a quota not published)
     */
    static List<String> write(HttpServletResponse response, List<BandwidthStatus> limits, long retryAfterSeconds,
                              long refusedCost, boolean legacy) {
        if (limits.isEmpty()) return List.of();
        List<String> exhausted = retryAfterSeconds > 0 ? exhausted(limits, refusedCost) : List.of();
        StringBuilder policy = new StringBuilder(48 * limits.size());
        StringBuilder state = new StringBuilder(48 * limits.size());
        BandwidthStatus tightest = null;
        String partition = null;
        String pk = "";
        for (BandwidthStatus s : limits) {
            if (!Objects.equals(s.partitionKey(), partition)) { // the same key for most items: encoded once
                partition = s.partitionKey();
                pk = partition == null ? "" : ";pk=:"
                        + Base64.getEncoder().encodeToString(partition.getBytes(StandardCharsets.UTF_8)) + ':';
            }
            if (policy.length() > 0) policy.append(", ");
            policy.append('"').append(s.name()).append("\";q=").append(s.capacity()).append(";w=").append(s.windowSeconds())
                    .append(pk);
            if (exhausted.isEmpty() || exhausted.contains(s.name())) {
                if (state.length() > 0) state.append(", ");
                state.append('"').append(s.name()).append("\";r=").append(s.remaining()).append(";t=")
                        .append(effectiveWindow(s, retryAfterSeconds)).append(pk);
            }
            if (tightest == null || s.remaining() < tightest.remaining()) tightest = s;
        }
        response.setHeader(POLICY, policy.toString());
        response.setHeader(RATE_LIMIT, state.toString());
        if (legacy) {
            long reset = tightest.secondsToFull();
            if (retryAfterSeconds > 0) reset = Math.min(reset, retryAfterSeconds);
            response.setHeader("X-RateLimit-Limit", Long.toString(tightest.capacity()));
            response.setHeader("X-RateLimit-Remaining", Long.toString(tightest.remaining()));
            response.setHeader("X-RateLimit-Reset", Long.toString(reset));
        }
        return exhausted;
    }

    /** {@code t}: until the next unit, never past Retry-After (§6: Retry-After is not earlier than the window's end). */
    static long effectiveWindow(BandwidthStatus s, long retryAfterSeconds) {
        long seconds = s.secondsToNextUnit();
        return retryAfterSeconds > 0 ? Math.min(seconds, retryAfterSeconds) : seconds;
    }

    /** The policies with fewer units than the refused cost: the ones that refused it. */
    private static List<String> exhausted(List<BandwidthStatus> limits, long cost) {
        List<String> names = new ArrayList<>(1);
        for (BandwidthStatus s : limits) {
            if (s.remaining() < Math.max(1, cost)) names.add(s.name());
        }
        return names;
    }
}

package io.quotagate.loadtest.bench;

import io.github.resilience4j.ratelimiter.RateLimiter;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import io.github.resilience4j.ratelimiter.RateLimiterRegistry;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.ConsumptionProbe;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The per-tenant limiters a Java team would write instead of using QuotaFilter, built the way their
 * tutorials build them, with a limit nothing reaches (so every request is admitted and only the
 * cost of deciding shows). Both key by {@code X-Tenant-Id}, keep one limiter per tenant for ever
 * (no expiry, no bound), and answer 429 with {@code Retry-After} when the limit is reached.
 */
final class PeerFilters {
    /** The bench plans' bandwidth ({@link BenchPlans}): 10^12 units a day. */
    static final long CAPACITY = 1_000_000_000_000L;
    /** resilience4j counts permissions in an {@code int}: 10^9 a second is as unreachable here. */
    static final int PERMITS_PER_SECOND = 1_000_000_000;

    private PeerFilters() {
    }

    /** One tenant's bucket4j bucket, as the tutorials build it (lock-free, bucket4j's default). */
    static Bucket newBucket() {
        return Bucket.builder().addLimit(limit -> limit.capacity(CAPACITY).refillGreedy(CAPACITY, Duration.ofDays(1))).build();
    }

    /** A registry handing out one resilience4j {@code RateLimiter} per name, never waiting for a permission. */
    static RateLimiterRegistry newRegistry() {
        return RateLimiterRegistry.of(RateLimiterConfig.custom()
                .limitForPeriod(PERMITS_PER_SECOND)
                .limitRefreshPeriod(Duration.ofSeconds(1))
                .timeoutDuration(Duration.ZERO)
                .build());
    }

    /**
     * A {@code ConcurrentHashMap<String, Bucket>}: {@code computeIfAbsent} by tenant, then
     * {@code tryConsumeAndReturnRemaining(1)}, whose probe gives Retry-After on a refusal.
     */
    static final class Bucket4jMap extends HttpFilter {
        private static final long serialVersionUID = 1L;
        private final transient ConcurrentHashMap<String, Bucket> buckets = new ConcurrentHashMap<>();

        @Override
        protected void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
                throws IOException, ServletException {
            String tenant = request.getHeader("X-Tenant-Id");
            if (tenant == null) {
                chain.doFilter(request, response);
                return;
            }
            ConsumptionProbe probe = buckets.computeIfAbsent(tenant, t -> newBucket()).tryConsumeAndReturnRemaining(1);
            if (probe.isConsumed()) {
                chain.doFilter(request, response);
                return;
            }
            long seconds = Math.max(1, TimeUnit.NANOSECONDS.toSeconds(probe.getNanosToWaitForRefill() + 999_999_999L));
            response.setHeader("Retry-After", Long.toString(seconds));
            response.sendError(429);
        }
    }

    /** resilience4j's {@code RateLimiterRegistry}: {@code rateLimiter(tenant)}, then {@code acquirePermission()}. */
    static final class Resilience4jRegistry extends HttpFilter {
        private static final long serialVersionUID = 1L;
        private final transient RateLimiterRegistry registry = newRegistry();

        @Override
        protected void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
                throws IOException, ServletException {
            String tenant = request.getHeader("X-Tenant-Id");
            if (tenant == null) {
                chain.doFilter(request, response);
                return;
            }
            RateLimiter limiter = registry.rateLimiter(tenant);
            if (limiter.acquirePermission()) {
                chain.doFilter(request, response);
                return;
            }
            response.setHeader("Retry-After", "1");   // the limit refreshes every second
            response.sendError(429);
        }
    }
}

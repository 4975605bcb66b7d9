package io.quotagate.filter.internal.admission;

import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.limit.Gradient2Limit;
import com.netflix.concurrency.limits.limit.VegasLimit;
import com.netflix.concurrency.limits.limit.WindowedLimit;
import com.netflix.concurrency.limits.limit.functions.Log10RootIntFunction;
import io.quotagate.plans.GroupSettings;

import java.util.function.IntUnaryOperator;

/**
 * The adaptive cap of a group across tenants ({@code groups.<g>.adaptive}): Netflix's
 * concurrency-limits {@link Limit} fed with the group's completed requests, read on every acquire.
 * The Netflix types stay in this class.
 *
 * <p>What a sample is: every permit that is {@linkplain Permit#release() released} (the request ran)
 * gives one, with its start on the group's clock, its run time and the group's requests in flight when
 * it started (itself included). {@code didDrop} is always false: a refusal by this filter says the
 * limit is reached, not that the backend failed, and feeding it back would cut the limit harder the
 * more clients ask (a request that timed out in the application still counts with its long run
 * time). Cancelled permits (the token buckets refused the request) never ran: no sample.
 *
 * <p>Gradient2 is fed through Netflix's {@link WindowedLimit} (windows of 1 s and at least 10 requests,
 * the average duration of each), as its authors use it, with their defaults: it recalculates once per
 * window, taking at most 10 % off per window under a slowdown (smoothing 0.2 of a gradient of at
 * least 0.5), so it halves in 10-15 s; and its long-term average spans 600 windows (10 minutes). Fed every request instead, that average spans
 * 600 requests, and under a lasting slowdown it soon takes the slow durations for the norm: in the
 * {@code slow-backend} scenario the limit was back at its maximum within the slow minute, and the
 * p99 worse than a fixed cap's. Vegas is fed every request (Netflix's default limiter does so): a
 * step of about log10(limit) per request, so it falls within a few dozen requests; it re-probes its
 * base duration every 15-30 × limit requests, after which a lasting slowdown is its new norm.
 *
 * <p>The limit stays within {@code [min, max]}: Gradient2 is built with both; Vegas knows no minimum,
 * so its decrease stops at {@code min} and the value read is clamped to it.
 */
final class AdaptiveLimit {
    private final Limit limit;
    private final int min;
    private final int max;

    private AdaptiveLimit(Limit limit, int min, int max) {
        this.limit = limit;
        this.min = min;
        this.max = max;
    }

    static AdaptiveLimit of(GroupSettings.Adaptive settings) {
        int min = settings.min();
        int max = settings.max();
        Limit limit = switch (settings.algorithm()) {
            case GRADIENT2 -> WindowedLimit.newBuilder().build(Gradient2Limit.newBuilder()
                    .initialLimit(settings.initial())
                    .minLimit(min)
                    .maxConcurrency(max)
                    .build());
            case VEGAS -> {
                // Vegas' own decrease: limit - log10(limit), here never below min
                IntUnaryOperator log10 = Log10RootIntFunction.create(0);
                yield VegasLimit.newBuilder()
                        .initialLimit(settings.initial())
                        .maxConcurrency(max)
                        .decreaseFunction(l -> Math.max(min, l - log10.applyAsInt((int) l)))
                        .build();
            }
        };
        return new AdaptiveLimit(limit, min, max);
    }

    /** The limit now, within {@code [min, max]}: a volatile read. */
    int current() {
        return Math.max(min, Math.min(max, limit.getLimit()));
    }

    /**
     * One completed request: started at {@code startNanos} (group clock), ran {@code runNanos}, and
     * {@code inflightAtStart} requests of the group (itself included) were in flight when it started.
     */
    void completed(long startNanos, long runNanos, int inflightAtStart) {
        // Vegas refuses an rtt of 0 (a coarse clock can measure one)
        limit.onSample(startNanos, Math.max(1, runNanos), inflightAtStart, false);
    }
}

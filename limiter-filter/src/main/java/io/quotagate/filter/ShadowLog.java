package io.quotagate.filter;

import io.quotagate.filter.internal.admission.Outcome;
import io.quotagate.filter.store.QuotaClock;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Logs the requests shadow mode let through although the limits would have refused them, at most
 * one line per second (the others are summed into the next line), so a limit that would refuse
 * thousands of requests does not flood the log. The exact totals are
 * {@link QuotaControl#shadowRejections}.
 */
final class ShadowLog {
    private static final System.Logger LOG = System.getLogger(QuotaFilter.class.getName());
    private static final long INTERVAL_NANOS = 1_000_000_000L;

    private final QuotaClock clock;
    private final AtomicLong nextLogAt;
    private final AtomicLong suppressed = new AtomicLong();

    ShadowLog(QuotaClock clock) {
        this.clock = clock;
        this.nextLogAt = new AtomicLong(clock.nanoTime());
    }

    void wouldReject(String tenant, String plan, String route, Outcome.Refused r) {
        long now = clock.nanoTime();
        long next = nextLogAt.get();
        if (now - next < 0 || !nextLogAt.compareAndSet(next, now + INTERVAL_NANOS)) {
            suppressed.incrementAndGet();
            return;
        }
        long others = suppressed.getAndSet(0);
        LOG.log(System.Logger.Level.INFO, "shadow: would reject tenant " + tenant
                + " plan " + plan + " route " + route + " with " + r.status() + " " + r.reason()
                + ", Retry-After " + r.retryAfterSeconds() + " s; let through"
                + (others > 0 ? " (+" + others + " more since the last line)" : ""));
    }
}

package io.quotagate.filter;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import io.quotagate.filter.store.QuotaClock;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One structured (logfmt) line per rejection, rate-limited so a flood of 429s cannot flood the log:
 * per tenant, the first rejection of each second is logged with the count suppressed since the
 * previous line; a tenant that goes quiet gets a final summary line when its entry expires. A global
 * ceiling of {@value #MAX_LINES_PER_SECOND} lines per second also holds against floods of distinct
 * (spoofed) tenant ids; what it drops is counted in the next line that passes, so every rejection
 * is either logged or counted in a later line.
 */
final class RejectionLog {
    static final int MAX_LINES_PER_SECOND = 50;
    private static final long SECOND = 1_000_000_000L;

    /** Per-tenant window; guarded by its own monitor. */
    private static final class Window {
        long lastLogged = Long.MIN_VALUE / 2;
        long suppressed;
    }

    private final System.Logger log;
    private final QuotaClock clock;
    private final Cache<String, Window> windows;
    private final AtomicLong globalSecond = new AtomicLong(Long.MIN_VALUE);
    private final AtomicLong globalLines = new AtomicLong();
    private final AtomicLong globalDropped = new AtomicLong();

    RejectionLog(System.Logger log, QuotaClock clock) {
        this.log = log;
        this.clock = clock;
        this.windows = Caffeine.newBuilder()
                .maximumSize(10_000)
                .expireAfterAccess(Duration.ofSeconds(30))
                .ticker(clock::nanoTime)
                // summaries are written by the thread doing the maintenance: no hidden pool, deterministic tests
                .executor(Runnable::run)
                .removalListener((String tenant, Window w, RemovalCause cause) -> {
                    if (w == null) return;
                    long pending;
                    synchronized (w) {
                        pending = w.suppressed;
                        w.suppressed = 0;
                    }
                    if (pending == 0) return;
                    if (globalBudget(clock.nanoTime())) {
                        emit("quotagate rejections-summary tenant=" + tenant + " suppressed=" + pending + dropped());
                    } else {
                        globalDropped.addAndGet(pending);
                    }
                })
                .build();
    }

    void rejected(String tenant, String plan, String route, String reason, int status, long retryAfterSeconds) {
        if (!log.isLoggable(System.Logger.Level.INFO)) return;
        String key = tenant == null ? "-" : tenant;
        long now = clock.nanoTime();
        Window w = windows.get(key, k -> new Window());
        long suppressed;
        synchronized (w) {
            if (now - w.lastLogged < SECOND) {
                w.suppressed++;
                return;
            }
            suppressed = w.suppressed;
            w.suppressed = 0;
            w.lastLogged = now;
        }
        if (!globalBudget(now)) {
            globalDropped.addAndGet(suppressed + 1);
            return;
        }
        emit("quotagate rejected tenant=" + key + " plan=" + (plan == null ? "-" : plan) + " route=" + route
                + " status=" + status + " reason=" + reason + " retry_after=" + retryAfterSeconds
                + " suppressed=" + suppressed + dropped());
    }

    /** Lets expired windows emit their summaries now (tests; Caffeine also does it on access). */
    void flush() {
        windows.cleanUp();
    }

    /** Rejections no line reported because of the global ceiling, as a suffix for the next line. */
    private String dropped() {
        long n = globalDropped.getAndSet(0);
        return n > 0 ? " unlogged_other_tenants=" + n : "";
    }

    private boolean globalBudget(long now) {
        long second = now / SECOND;
        long seen = globalSecond.get();
        if (seen != second && globalSecond.compareAndSet(seen, second)) globalLines.set(0);
        return globalLines.incrementAndGet() <= MAX_LINES_PER_SECOND;
    }

    private void emit(String line) {
        log.log(System.Logger.Level.INFO, line);
    }
}

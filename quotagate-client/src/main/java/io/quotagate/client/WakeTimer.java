package io.quotagate.client;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * When an {@link AdaptiveLimiter} next looks at its queue: one timer task at a time, moved earlier when the
 * next event comes sooner (a rate raised, a request queued); a task that fires early simply finds nothing
 * to grant and is scheduled again. Times are the limiter's clock, turned into real delays by its speed. Not
 * thread-safe: used under the limiter's lock.
 */
final class WakeTimer {
    private final ScheduledExecutorService scheduler;
    private final LimiterClock clock;
    private final Runnable onWake;
    private ScheduledFuture<?> wake;
    private long wakeAt = Long.MAX_VALUE;

    /** @param onWake what the task runs (outside the lock): it calls {@link #fired()} under it first */
    WakeTimer(ScheduledExecutorService scheduler, LimiterClock clock, Runnable onWake) {
        this.scheduler = scheduler;
        this.clock = clock;
        this.onWake = onWake;
    }

    /** Wakes the limiter at {@code at} (its clock), unless a task comes at or before then already. */
    void wakeAt(long at, long now) {
        if (at == Long.MAX_VALUE || (wake != null && wakeAt <= at)) return;
        if (wake != null) wake.cancel(false);
        wakeAt = at;
        long realDelay = (long) Math.ceil(Math.max(0, at - now) / clock.speed());
        try {
            wake = scheduler.schedule(onWake, realDelay, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // a scheduler shut down by its owner: waiters time out in acquire(); async ones stay queued
            wake = null;
            wakeAt = Long.MAX_VALUE;
        }
    }

    /** The task ran: the next wake-up is scheduled anew. */
    void fired() {
        wake = null;
        wakeAt = Long.MAX_VALUE;
    }

    /** The default timer: one daemon thread for every limiter that is given no scheduler, made at first use. */
    static ScheduledExecutorService shared() {
        return Shared.EXECUTOR;
    }

    private static final class Shared {
        static final ScheduledExecutorService EXECUTOR = executor();
    }

    private static ScheduledExecutorService executor() {
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "quotagate-client-limiter-timer");
            t.setDaemon(true);
            return t;
        });
        // wake-ups moved earlier cancel the later task: do not keep thousands of dead ones queued
        executor.setRemoveOnCancelPolicy(true);
        return executor;
    }
}

package io.quotagate.filter;

import io.quotagate.filter.internal.admission.Ticket;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The delayed requests of one filter ({@code throttle:}): where they wait (a scheduler, no request thread),
 * and their bounds, per tenant and in all, so that one tenant cannot fill the room of the others.
 *
 * <p>A slot is taken with {@link #enter} before a request is delayed and given back with {@link #leave}
 * exactly once, when it resumes or is dropped. The two counters are taken in order (the total first) and
 * given back when the second refuses, so a refused {@code enter} leaves both as they were.
 *
 * <p>Guests (unknown tenants under {@code unknown: default}, anonymous clients) count as one tenant here, as
 * they share one guest pool: their ids are made up at will, and were each its own tenant, a few hundred ids
 * would fill the room of every assigned tenant, whose delays would all become {@code throttle_full}.
 */
final class Throttling {
    /** Default of {@link QuotaFilter.Builder#maxDelayedRequests}. */
    static final int DEFAULT_MAX_DELAYED = 10_000;
    /** Default of the grace a late scheduler gets (see the constructor). */
    static final java.time.Duration DEFAULT_GRACE = java.time.Duration.ofSeconds(10);

    private final ScheduledExecutorService scheduler;
    private final boolean ownsScheduler;
    private final int maxDelayed;
    private final long graceMillis;
    private final AtomicInteger delayed = new AtomicInteger();
    /** The key under which all guests' delayed requests count; no tenant id contains '@'. */
    static final String GUESTS = "@guests";
    /** Delayed requests per tenant key; a key leaves the map when its count is back to 0. */
    private final ConcurrentHashMap<String, AtomicInteger> perTenant = new ConcurrentHashMap<>();

    /**
     * @param scheduler  resumes delayed requests; null for one of its own (one daemon thread: resuming is a
     *                   dispatch, the request runs on a container thread)
     * @param maxDelayed the most requests delayed at once over every tenant
     * @param grace      beyond its delay, how long a request waits for the scheduler before its async
     *                   timeout drops it (refunded, 503): a scheduler this late is stuck or stopped
     */
    Throttling(ScheduledExecutorService scheduler, int maxDelayed, java.time.Duration grace) {
        this.graceMillis = grace.toMillis();
        this.ownsScheduler = scheduler == null;
        this.scheduler = scheduler != null ? scheduler : ownScheduler();
        this.maxDelayed = maxDelayed;
    }

    private static ScheduledExecutorService ownScheduler() {
        ScheduledThreadPoolExecutor s = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "quotagate-throttle");
            t.setDaemon(true);
            return t;
        });
        s.setRemoveOnCancelPolicy(true); // a dropped request's task does not stay queued until its time
        return s;
    }

    /** See the constructor's {@code grace}. */
    long graceMillis() {
        return graceMillis;
    }

    ScheduledExecutorService scheduler() {
        return scheduler;
    }

    /** The key a request's delayed requests count under: its tenant's, or {@link #GUESTS} for any guest. */
    private static String key(Ticket ticket) {
        return ticket.known() ? ticket.key() : GUESTS;
    }

    /** Takes a place for the request of {@code ticket}, its tenant allowed {@code tenantQueue} at once; false if one bound is full. */
    boolean enter(Ticket ticket, int tenantQueue) {
        String key = key(ticket);
        if (delayed.incrementAndGet() > maxDelayed) {
            delayed.decrementAndGet();
            return false;
        }
        // compute: the count and the map change together, so a key removed at 0 never loses a newcomer's place
        boolean[] entered = {false};
        perTenant.compute(key, (k, count) -> {
            AtomicInteger c = count != null ? count : new AtomicInteger();
            if (c.get() < tenantQueue) {
                c.incrementAndGet();
                entered[0] = true;
            }
            return c.get() == 0 ? null : c;
        });
        if (!entered[0]) delayed.decrementAndGet();
        return entered[0];
    }

    /** Gives back the place {@link #enter} took for {@code ticket}. */
    void leave(Ticket ticket) {
        perTenant.computeIfPresent(key(ticket), (k, c) -> c.decrementAndGet() == 0 ? null : c);
        delayed.decrementAndGet();
    }

    /** Requests delayed now. */
    int delayed() {
        return delayed.get();
    }

    /** Stops the scheduler if the filter made it; delayed requests then end by their async timeout (refunded). */
    void close() {
        if (ownsScheduler) scheduler.shutdownNow();
    }
}

package io.quotagate.filter;

import io.quotagate.filter.internal.admission.Outcome;
import io.quotagate.filter.internal.admission.Ticket;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A request a throttle delays ({@link Outcome.Delayed}): its units are reserved; it waits in async mode,
 * holding no request thread, until the scheduler resumes it with a dispatch to its own path, where it
 * runs as any admitted request (it is not charged again). Dropped before that (the client went away and
 * the container reports an async error, the async timeout, the filter stopping), it gives its
 * reservation back.
 *
 * <p>Resuming and dropping race: the scheduler's thread against the container's listener calls. Whichever
 * moves {@link #state} from {@code WAITING} first does its work, once; the other does nothing. So a request
 * is never both run and refunded, and its place in {@link Throttling} is given back once.
 *
 * <p>Resuming is {@link AsyncContext#dispatch()}, not a call of the filter chain from the scheduler: a
 * container may release a request's chain when its first dispatch returns (Tomcat does). The filter sees
 * that dispatch as {@code ASYNC} and lets it pass; the request already holds its ticket.
 */
final class DelayedRequest implements AsyncListener, Runnable {
    private static final System.Logger LOG = System.getLogger(DelayedRequest.class.getName());
    /** Response field telling a client its request was delayed, and how long (whole milliseconds, rounded up). */
    static final String DELAY_HEADER = "Quota-Delay";

    private static final int WAITING = 0;
    private static final int RESUMED = 1;
    private static final int DROPPED = 2;

    private final FilterRuntime rt;
    private final Ticket ticket;
    private final long delayNanos;
    private final HttpServletRequest request;
    private final HttpServletResponse response;
    private final AsyncContext async;
    private final AtomicInteger state = new AtomicInteger(WAITING);
    private volatile Future<?> resumption;

    private DelayedRequest(FilterRuntime rt, Outcome.Delayed delayed, HttpServletRequest request,
                           HttpServletResponse response, AsyncContext async) {
        this.rt = rt;
        this.ticket = delayed.ticket();
        this.delayNanos = delayed.delayNanos();
        this.request = request;
        this.response = response;
        this.async = async;
    }

    /**
     * Puts the request in async mode and schedules its resumption; its place in {@link Throttling} is taken
     * already and is given back when it resumes or is dropped.
     */
    static void start(FilterRuntime rt, Outcome.Delayed delayed, HttpServletRequest request,
                      HttpServletResponse response) {
        AsyncContext async = request.startAsync();
        rt.statistics.delayStarted();
        async.setTimeout(TimeUnit.NANOSECONDS.toMillis(delayed.delayNanos()) + rt.throttling.graceMillis());
        DelayedRequest d = new DelayedRequest(rt, delayed, request, response, async);
        // listening before scheduling: a resumption cannot come before the listener that may drop it
        async.addListener(d);
        try {
            d.resumption = rt.throttling.scheduler().schedule(d, d.delayNanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException stopped) {
            d.drop(true); // the filter is stopping
        }
    }

    /** The scheduler's call: the units have arrived. */
    @Override
    public void run() {
        if (!state.compareAndSet(WAITING, RESUMED)) return; // dropped first
        rt.throttling.leave(ticket);
        rt.statistics.delayEnded(ticket.route().name(), delayNanos, true);
        try {
            response.setHeader(DELAY_HEADER, Long.toString(Math.max(1, -Math.floorDiv(-delayNanos, 1_000_000L))));
            if (!Answers.admitted(rt, ticket, response)) {
                async.complete(); // answered 500, its ticket closed
                return;
            }
            // from here on the admitted request releases its slot and settles its units when it ends,
            // heard on this async context (the dispatch below ends this cycle, not the request)
            AdmittedRequest admitted = new AdmittedRequest(request, ticket, rt.gate, rt.statistics);
            admitted.listenTo(async);
            request.setAttribute(ActualCost.RESERVATION_ATTRIBUTE, ticket);
            async.dispatch();
        } catch (IOException | RuntimeException gone) {
            // the container ended the request meanwhile (an error it reported after this resumption won):
            // its onComplete ends the ticket
            LOG.log(System.Logger.Level.DEBUG, "delayed request could not be resumed: " + gone);
        }
    }

    /** Gives the reservation back; with {@code answer}, a 503 (the resumption did not come in time). */
    private void drop(boolean answer) {
        if (!state.compareAndSet(WAITING, DROPPED)) return;
        Future<?> r = resumption;
        if (r != null) r.cancel(false);
        rt.throttling.leave(ticket);
        try {
            rt.gate.release(ticket); // its units back (and a capped route's slot) before the counters say it has ended
        } finally {
            rt.statistics.delayEnded(ticket.route().name(), delayNanos, false);
        }
        try {
            if (answer && !response.isCommitted()) {
                new Problem(503, "delay_overrun", "The delayed request could not be resumed in time; retry after 1 s.",
                        ticket.tenant(), 1).write(response);
            }
            async.complete();
        } catch (IOException | RuntimeException gone) {
            // the client is gone: nothing to answer
        }
    }

    @Override
    public void onTimeout(AsyncEvent event) {
        drop(true);
    }

    @Override
    public void onError(AsyncEvent event) {
        drop(false); // the client went away: its reservation comes back
    }

    @Override
    public void onComplete(AsyncEvent event) {
        drop(false); // completed before it resumed (by the container): nothing runs for it
    }

    @Override
    public void onStartAsync(AsyncEvent event) {
        // a new cycle is the application's, after the resumption: nothing to do
    }
}

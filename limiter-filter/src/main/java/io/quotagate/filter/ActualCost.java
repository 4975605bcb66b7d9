package io.quotagate.filter;

import io.quotagate.filter.internal.admission.Ticket;
import jakarta.servlet.ServletRequest;

import java.util.OptionalLong;

/**
 * A request's actual cost, as the application behind {@link QuotaFilter} reports it while the request runs
 * ({@link #report}), and the cost reserved for it ({@link #reserved}).
 *
 * <p>The cost taken before a request runs is a reservation (a route's static cost, or a
 * {@link CostEstimator}'s estimate). When the application knows what the request really cost (the
 * tokens an LLM call used), it reports it; after the request ends (the filter chain returns, or the
 * {@code AsyncListener} of an async request sees it complete, fail or time out) the filter gives
 * {@code reserved − actual} back to every bucket charged, or charges the excess.
 */
public final class ActualCost {
    /**
     * The request attribute holding the actual cost: a whole {@link Number} or a decimal string,
     * &gt;= 0. {@link #report} sets it; an application may also set it directly. Any other
     * value is ignored with a warning when the request ends.
     */
    public static final String ATTRIBUTE = "io.quotagate.actualCost";

    /** Attribute holding the request's {@link Ticket} (what was charged), answered by {@link AdmittedRequest}. */
    static final String RESERVATION_ATTRIBUTE = "io.quotagate.reservation";

    /**
     * The reservation of the request this thread is running through a {@link QuotaFilter}'s chain (slot 0), for
     * code that reports through the container's own request rather than the one the filter passed on
     * (an injected request, one saved by an earlier filter): that request carries no reservation.
     */
    private static final ThreadLocal<Object[]> RUNNING = ThreadLocal.withInitial(() -> new Object[1]);

    /**
     * This thread's slot for the running reservation: one thread-local lookup per request, and no
     * set/remove churn in the thread's map. An {@code Object[]} (a JDK type) so a pooled thread keeps
     * no class of the application alive once the slot is cleared.
     */
    static Object[] runningSlot() {
        return RUNNING.get();
    }

    private static final System.Logger LOG = System.getLogger(ActualCost.class.getName());

    private ActualCost() {
    }

    /**
     * Reports the request's actual cost in units, settled against the reservation when the request
     * ends. A later report replaces an earlier one. Report before the request ends: before the chain
     * returns, or for an async request before {@code AsyncContext.complete()} (or in its
     * {@code onTimeout}/{@code onError}); a report after that is too late and changes nothing.
     *
     * @return true if it will be settled; false (with a warning logged, nothing changed) if the
     *         request was never admitted by a {@link QuotaFilter} (an unlimited route, a refused
     *         request, no filter), has already ended (a report racing its end may then still be
     *         settled), or the cost is negative
     */
    public static boolean report(ServletRequest request, long actualCost) {
        Ticket ticket;
        try {
            ticket = reservation(request);
        } catch (RuntimeException recycled) {
            return late(); // the container's request after its end: Jetty 12 throws NPE, Tomcat ISE
        }
        if (ticket == null) {
            LOG.log(System.Logger.Level.WARNING, "actual cost reported for a request QuotaFilter did not admit; ignored");
            return false;
        }
        if (actualCost < 0) {
            LOG.log(System.Logger.Level.WARNING, "negative actual cost " + actualCost + " reported; ignored");
            return false;
        }
        if (ticket.ended()) return late(); // settled already (Undertow would even take the attribute)
        try {
            request.setAttribute(ATTRIBUTE, actualCost);
        } catch (RuntimeException recycled) {
            return late();
        }
        // it ended meanwhile: its settlement may have read the attribute before it was set; if it ends
        // from now on, the settlement (which ends the ticket, then reads) finds the attribute
        return !ticket.ended() || late();
    }

    /** A report after the request ended: ignored. */
    private static boolean late() {
        LOG.log(System.Logger.Level.WARNING, "actual cost reported after the request ended; ignored");
        return false;
    }

    /** The units reserved for this request when it was admitted; empty if it was not admitted by a {@link QuotaFilter}. */
    public static OptionalLong reserved(ServletRequest request) {
        Ticket a;
        try {
            a = reservation(request);
        } catch (RuntimeException recycled) {
            return OptionalLong.empty(); // the container's request after its end
        }
        return a != null ? OptionalLong.of(a.charged()) : OptionalLong.empty();
    }

    /**
     * The request's reservation: its own (the filter's wrapper, or stored when async started), or the running one.
     * A container's request used after its end may throw.
     */
    private static Ticket reservation(ServletRequest request) {
        if (request.getAttribute(RESERVATION_ATTRIBUTE) instanceof Ticket a) return a;
        return runningSlot()[0] instanceof Ticket running ? running : null;
    }
}

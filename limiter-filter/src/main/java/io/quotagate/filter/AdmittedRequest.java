package io.quotagate.filter;

import io.quotagate.filter.internal.admission.Permit;
import io.quotagate.filter.internal.admission.Gate;
import io.quotagate.filter.internal.admission.Ticket;
import io.quotagate.filter.internal.metrics.RequestStatistics;
import io.quotagate.filter.store.StoreUnavailableException;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;

import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;

/**
 * An admitted request, from the moment it runs until it really ends: the request as the application
 * sees it, and the one listener for its end. One object per admitted request does all of it.
 *
 * <h2>While it runs</h2>
 * It answers {@link ActualCost#RESERVATION_ATTRIBUTE} itself instead of storing it, because a container
 * allocates a request's attribute map on its first attribute (Jetty: a map, its table and a listener
 * list, about 200 bytes per request), and most requests never look at the reservation. During the
 * dispatch it is also this thread's running reservation ({@link ActualCost#runningSlot()}), for code that
 * holds the container's own request (an injected request). Async work may go on with the container's
 * request ({@link AsyncContext#getRequest()} after a plain {@link #startAsync()} is the unwrapped one),
 * so starting async stores the reservation as a real attribute first: {@link ActualCost#report}
 * then finds it on either request.
 *
 * <h2>When it ends</h2>
 * Its end does three things, in this order: the running slot goes back to what it was (when the
 * dispatch returns, on the dispatching thread), then, once, when the request really ends, the
 * concurrency {@link Permit} is released and the units are settled with the actual cost the
 * application reported ({@link ActualCost#ATTRIBUTE}). The request really ends:
 * <ul>
 *   <li>for a synchronous request, when the chain returns or throws (a client that disconnected makes
 *       the application's write throw, or the chain simply returns);</li>
 *   <li>for an asynchronous one, at the {@link AsyncListener#onComplete} that ends every async cycle.
 *       A timeout or an error is always followed by {@code onComplete} (the container completes the
 *       request when no listener does), so ending there, after the application's own timeout and error
 *       listeners ran, means a slot is never free while the application still counts the request as
 *       running, and a cost reported from its timeout or error handling is still settled. A new async
 *       cycle (startAsync after an async dispatch) drops listeners that do not re-register, so this one
 *       re-registers itself.</li>
 * </ul>
 * It listens from inside {@code startAsync()} itself, before the application can call {@code complete()}
 * or {@code dispatch()} from another thread, so no completion can slip between starting async mode and
 * listening for its end. If async mode was started on an object it does not wrap (an outer wrapper the
 * application kept), it starts listening when the dispatch returns. It ends once, whichever path comes
 * first: the permit and the settlement are never given twice.
 */
final class AdmittedRequest extends HttpServletRequestWrapper implements AsyncListener {
    private static final System.Logger LOG = System.getLogger(AdmittedRequest.class.getName());

    /** What was charged, and whether the request has ended ({@link Ticket#end()}: once, whichever path comes first). */
    private final Ticket ticket;
    /** Settles the reported cost (by the policy that admitted the request). */
    private final Gate gate;
    /** Told of a settled cost (the meter binder's cost summaries). */
    private final RequestStatistics.Recorder statistics;

    /**
     * The request {@code ticket} admitted, handed over to run ({@link Ticket#run()}).
     *
     * @param gate       settles the cost the application reports, if it reports one
     * @param statistics told of the settled cost, if the application reports one
     */
    AdmittedRequest(HttpServletRequest request, Ticket ticket, Gate gate, RequestStatistics.Recorder statistics) {
        super(request);
        this.ticket = ticket;
        this.gate = gate;
        this.statistics = statistics;
        ticket.run();
    }

    /**
     * Runs {@code chain} with this request as this thread's running one, then, when the dispatch returns
     * or throws, clears the running slot and ends the request unless async mode holds it (see the class
     * comment).
     */
    void chain(ServletResponse response, FilterChain chain) throws IOException, ServletException {
        Object[] running = ActualCost.runningSlot();
        Object outer = running[0]; // another QuotaFilter's further out, if any
        running[0] = ticket;
        try {
            chain.doFilter(this, response);
        } finally {
            running[0] = outer;
            dispatchReturned();
        }
    }

    /** The dispatch that admitted the request has returned or thrown: end now, unless async mode holds it. */
    private void dispatchReturned() {
        if (!ticket.runningUnheard()) return; // listening: onComplete ends it
        if (isAsyncStarted()) {
            // async was started on an object we did not wrap (an outer wrapper kept by the application)
            try {
                listenTo(getAsyncContext());
                return;
            } catch (IllegalStateException completedMeanwhile) {
                // another thread completed or dispatched it between the two calls: it has ended here
            }
            ended();
            return;
        }
        // synchronous, and nothing listens: no other thread ends it, so it ends here without a
        // compare-and-set, the common request's only end
        if (ticket.endAlone()) end();
    }

    /** Registers this listener with the request's async context (on {@code startAsync()}, or a delayed request's). */
    void listenTo(AsyncContext context) {
        context.addListener(this);
        ticket.listening();
    }

    /** The request has really ended: release the slot, settle the cost; once, whichever path calls first. */
    private void ended() {
        if (ticket.end()) end();
    }

    /** Releases the slot, then settles the cost: what ending means, done by whichever path ended it. */
    private void end() {
        try {
            Permit permit = ticket.permit();
            if (permit != null) permit.release();
        } finally {
            settle();
        }
    }

    /** Settles the actual cost, if the application reported one (most do not: nothing to do then). */
    private void settle() {
        long charged = ticket.charged();
        if (charged == 0) return; // nothing reserved (shadow mode): nothing to settle
        Object reported;
        try {
            reported = getAttribute(ActualCost.ATTRIBUTE);
        } catch (IllegalStateException recycled) {
            return; // the container already recycled the request: too late to read it
        }
        if (reported == null) return;
        long actual = parse(reported);
        if (actual < 0) {
            LOG.log(System.Logger.Level.WARNING, "ignored actual cost for tenant " + ticket.key()
                    + ": not a whole number >= 0 (" + reported.getClass().getSimpleName() + ")");
            return;
        }
        try {
            gate.settle(ticket, actual);
        } catch (StoreUnavailableException unavailable) {
            // on-failure: closed and Redis went away during the request: the response is out already
            LOG.log(System.Logger.Level.WARNING, "actual cost of tenant " + ticket.key()
                    + " not reconciled: " + unavailable.getMessage());
            return;
        }
        statistics.costSettled(ticket.route().name(), charged, actual);
    }

    /** The reported value as a whole number of units, or -1 if it is not one. */
    static long parse(Object value) {
        try {
            BigInteger n;
            if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte) {
                return ((Number) value).longValue() < 0 ? -1 : ((Number) value).longValue();
            } else if (value instanceof BigInteger b) {
                n = b;
            } else if (value instanceof Number num) {
                n = new BigDecimal(num.toString()).toBigIntegerExact();
            } else if (value instanceof CharSequence s) {
                String text = s.toString().trim();
                if (text.isEmpty() || text.length() > 40) return -1;
                n = new BigInteger(text);
            } else {
                return -1;
            }
            if (n.signum() < 0) return -1;
            return n.bitLength() < 64 ? n.longValue() : Long.MAX_VALUE;
        } catch (NumberFormatException | ArithmeticException e) {
            return -1;
        }
    }

    @Override
    public Object getAttribute(String name) {
        return ActualCost.RESERVATION_ATTRIBUTE.equals(name) ? ticket : super.getAttribute(name);
    }

    @Override
    public Enumeration<String> getAttributeNames() {
        List<String> names = Collections.list(super.getAttributeNames());
        if (!names.contains(ActualCost.RESERVATION_ATTRIBUTE)) names.add(ActualCost.RESERVATION_ATTRIBUTE);
        return Collections.enumeration(names);
    }

    @Override
    public AsyncContext startAsync() {
        storeReservation();
        return listened(super.startAsync());
    }

    @Override
    public AsyncContext startAsync(ServletRequest request, ServletResponse response) {
        storeReservation();
        return listened(super.startAsync(request, response));
    }

    private AsyncContext listened(AsyncContext context) {
        if (ticket.runningUnheard()) listenTo(context);
        return context;
    }

    private void storeReservation() {
        getRequest().setAttribute(ActualCost.RESERVATION_ATTRIBUTE, ticket);
    }

    // AsyncListener: the end of an async request

    @Override
    public void onComplete(AsyncEvent event) {
        ended();
    }

    @Override
    public void onTimeout(AsyncEvent event) {
        // onComplete follows once the application's listeners (or the container) end the request
    }

    @Override
    public void onError(AsyncEvent event) {
        // onComplete follows once the application's listeners (or the container) end the request
    }

    @Override
    public void onStartAsync(AsyncEvent event) {
        event.getAsyncContext().addListener(this); // a new async cycle keeps only listeners that re-register
    }
}

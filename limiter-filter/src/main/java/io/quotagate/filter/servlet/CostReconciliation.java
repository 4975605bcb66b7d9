package io.quotagate.filter.servlet;

import io.quotagate.filter.admission.Ticket;
import io.quotagate.filter.metrics.RequestStatistics;
import jakarta.servlet.http.HttpServletRequest;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Settles an admitted request's actual cost ({@link QuotaGate#ACTUAL_COST_ATTRIBUTE}) when it really
 * ends: at once for a synchronous request, on the async listener's {@code onComplete} for an async
 * one (the container completes an async request after a timeout or an error too, so the application
 * can still report from its error or timeout handling). Exactly once.
 */
final class CostReconciliation extends RequestEndListener {
    private static final System.Logger LOG = System.getLogger(CostReconciliation.class.getName());

    private final HttpServletRequest request;
    private final Ticket ticket;
    private final RequestStatistics statistics;
    private final String route;
    private final AtomicBoolean settled = new AtomicBoolean();

    private CostReconciliation(HttpServletRequest request, Ticket ticket, RequestStatistics statistics, String route) {
        this.request = request;
        this.ticket = ticket;
        this.statistics = statistics;
        this.route = route;
    }

    /** Called when the filter chain has returned. */
    static void whenDone(HttpServletRequest request, Ticket ticket, RequestStatistics statistics, String route) {
        if (ticket.decision().charged() == 0) return; // nothing reserved (shadow mode): nothing to settle
        if (request.isAsyncStarted()) {
            request.getAsyncContext().addListener(new CostReconciliation(request, ticket, statistics, route));
        } else if (request.getAttribute(QuotaGate.ACTUAL_COST_ATTRIBUTE) != null) {
            // most requests report nothing: only those that do pay for a settlement object
            new CostReconciliation(request, ticket, statistics, route).settle();
        }
    }

    private void settle() {
        if (!settled.compareAndSet(false, true)) return;
        Object reported;
        try {
            reported = request.getAttribute(QuotaGate.ACTUAL_COST_ATTRIBUTE);
        } catch (IllegalStateException recycled) {
            return; // the container already recycled the request: too late to read it
        }
        if (reported == null) return;
        long actual = parse(reported);
        if (actual < 0) {
            LOG.log(System.Logger.Level.WARNING, "ignored actual cost for tenant " + ticket.caller().key()
                    + ": not a whole number >= 0 (" + reported.getClass().getSimpleName() + ")");
            return;
        }
        try {
            ticket.settle(actual);
        } catch (io.quotagate.filter.store.StoreUnavailableException unavailable) {
            // on-failure: closed and Redis went away during the request: the response is out already
            LOG.log(System.Logger.Level.WARNING, "actual cost of tenant " + ticket.caller().key()
                    + " not reconciled: " + unavailable.getMessage());
            return;
        }
        statistics.costSettled(route, ticket.decision().charged(), actual);
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
    void ended() {
        settle();
    }
}

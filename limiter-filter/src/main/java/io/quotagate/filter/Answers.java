package io.quotagate.filter;

import io.quotagate.filter.internal.admission.Caller;
import io.quotagate.filter.internal.admission.Outcome;
import io.quotagate.filter.internal.admission.Ticket;
import io.quotagate.filter.internal.route.Route;
import io.quotagate.filter.metrics.StatisticsView;
import io.quotagate.filter.status.BandwidthStatus;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
import java.util.List;

/**
 * How a decided request is answered and counted: an admission's published fields, counters and event; a
 * refusal's problem answer, fields, counters, rate-limited log line and event. One place, so a request
 * admitted at once, after a delay, or refused at any step of {@link QuotaFilter} is counted the same way.
 */
final class Answers {
    private static final System.Logger LOG = System.getLogger(QuotaFilter.class.getName());

    private Answers() {
    }

    /**
     * Counts an admitted request and writes its published fields: true if it may run; false if that failed
     * (its ticket closed, a 500 answered).
     */
    static boolean admitted(FilterRuntime rt, Ticket ticket, HttpServletResponse response) throws IOException {
        String route = ticket.route().name();
        try {
            String tenant = ticket.anonymous() ? StatisticsView.ANONYMOUS : ticket.tenant();
            Outcome.Refused escaped = ticket.shadowRejection();
            if (escaped != null) rt.setup.shadowLog().wouldReject(tenant, ticket.plan(), route, escaped);
            rt.statistics.record(tenant, ticket.known(), ticket.plan(), route, StatisticsView.Result.ALLOWED, null);
            if (ticket.known()) rt.signals.admitted(ticket.tenant(), ticket.plan());
            List<BandwidthStatus> published = ticket.published();
            if (published != null) RateLimitHeaders.write(response, published, rt.setup.legacyHeaders());
        } catch (RuntimeException failure) {
            // the request will not run: closing the ticket gives back its slot and every unit it was charged
            rt.gate.release(ticket);
            LOG.log(System.Logger.Level.ERROR, "quota filter failed after admitting a request", failure);
            if (!response.isCommitted()) {
                response.reset();
                new Problem(500, "internal_error", "The request could not be processed.", ticket.tenant(), 0)
                        .write(response);
            }
            return false;
        }
        return true;
    }

    /**
     * Answers a refused request, counts it and logs it (rate-limited). With {@code unreadBody} the
     * answer also says {@code Connection: close}: the container cannot reuse a connection whose
     * request body was left unread, and one that closes it after a response already committed
     * (Jetty 12 does, when the rest of the body has not arrived yet) leaves a keep-alive client to
     * send its next request into a closed socket.
     */
    static void refuse(FilterRuntime rt, HttpServletResponse response, Route route, Outcome.Refused refused,
                       boolean unreadBody) throws IOException {
        refuse(rt, response, route, refused, unreadBody, route.cost());
    }

    /** As above; {@code cost}: the refused request's cost (a published policy with fewer units is exhausted). */
    static void refuse(FilterRuntime rt, HttpServletResponse response, Route route, Outcome.Refused refused,
                       boolean unreadBody, long cost) throws IOException {
        Caller caller = refused.caller();
        String tenant = caller == null ? null : tenantTag(caller);
        String plan = caller == null ? null : caller.plan();
        rt.statistics.record(tenant, caller != null && caller.known(), plan, route.name(),
                StatisticsView.Result.REJECTED, refused.reason());
        rt.rejections.rejected(tenant, plan, route.name(), refused.reason(), refused.status(),
                refused.retryAfterSeconds());
        if (refused.byScopedBucket()) rt.statistics.scopedRefused(route.name(), refused.rate().scope());
        // a user's share or a route's own bucket refusing is not the tenant's limit reached: no tenant event
        if (refused.status() == 429 && caller != null && caller.known() && !refused.byScopedBucket()) {
            rt.signals.refused(caller.tenant(), plan, refused.reason());
        }
        // the fields come with the refusal, from its own store operation: no bucket is read again
        List<String> violated = refused.status() == 429
                ? RateLimitHeaders.write(response, refused.limits(), refused.retryAfterSeconds(), cost,
                rt.setup.legacyHeaders())
                : List.of();
        if (unreadBody) response.setHeader("Connection", "close");
        // quota-exceeded names published policies only: a hidden plan, or a refusal by the global quota or the
        // guest pool while the published policies hold enough, leaves the type about:blank
        new Problem(refused.status(), refused.reason(), refused.detail(), caller == null ? null : caller.tenant(),
                refused.retryAfterSeconds(), violated).write(response);
    }

    /**
     * Whether the request comes over HTTP/1 with a body (a length above 0, or chunked). Over HTTP/2 and
     * 3 a refused stream ends by itself, and {@code Connection} is a field their messages must not carry.
     */
    static boolean hasHttp1Body(HttpServletRequest request) {
        return request.getProtocol().startsWith("HTTP/1.")
                && (request.getContentLengthLong() > 0 || request.getHeader("Transfer-Encoding") != null);
    }

    /** The tenant as counted in metrics and logs: anonymous clients under one marker. */
    private static String tenantTag(Caller caller) {
        return caller.anonymous() ? StatisticsView.ANONYMOUS : caller.tenant();
    }
}

package io.quotagate.filter.servlet;

import io.quotagate.filter.admission.Decision;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;

import java.util.Collections;
import java.util.Enumeration;
import java.util.List;

/**
 * The request as the application sees it once admitted: it answers {@link QuotaGate#RESERVATION_ATTRIBUTE}
 * itself instead of storing it, because a container allocates a request's attribute map on its first
 * attribute (Jetty: a map, its table and a listener list, about 200 bytes per request), and most
 * requests never look at the reservation.
 *
 * <p>Async work may go on with the container's own request ({@link AsyncContext#getRequest()} after a
 * plain {@link #startAsync()} is the unwrapped one), so starting async stores the reservation as a
 * real attribute first: {@link QuotaGate#reportActualCost} then finds it on either request. Code that
 * holds the container's request during the synchronous part (an injected request) is served by
 * {@link QuotaGate#runningSlot()}.
 *
 * <p>A request holding a concurrency permit also registers its {@link PermitRelease} the moment the
 * application enters async mode, so one wrapper serves both.
 */
final class AdmittedRequest extends HttpServletRequestWrapper {
    private final Decision.Admitted admitted;
    /** Listens for the end of an async request holding a concurrency permit; null without a permit. */
    private final PermitRelease release;

    AdmittedRequest(HttpServletRequest request, Decision.Admitted admitted, PermitRelease release) {
        super(request);
        this.admitted = admitted;
        this.release = release;
    }

    @Override
    public Object getAttribute(String name) {
        return QuotaGate.RESERVATION_ATTRIBUTE.equals(name) ? admitted : super.getAttribute(name);
    }

    @Override
    public Enumeration<String> getAttributeNames() {
        List<String> names = Collections.list(super.getAttributeNames());
        if (!names.contains(QuotaGate.RESERVATION_ATTRIBUTE)) names.add(QuotaGate.RESERVATION_ATTRIBUTE);
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
        if (release != null) release.listenTo(context);
        return context;
    }

    private void storeReservation() {
        getRequest().setAttribute(QuotaGate.RESERVATION_ATTRIBUTE, admitted);
    }
}

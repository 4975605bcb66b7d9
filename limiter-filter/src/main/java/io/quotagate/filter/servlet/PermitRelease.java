package io.quotagate.filter.servlet;

import io.quotagate.filter.admission.Permit;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;

import java.io.IOException;

/**
 * Runs the rest of the chain while a request holds a concurrency {@link Permit}, and gives the permit
 * back exactly once when the request really ends:
 * <ul>
 *   <li>a synchronous request: when the chain returns or throws (a client that disconnected makes
 *       the application's write throw, or the chain simply returns);</li>
 *   <li>an asynchronous one: the permit is held across {@code startAsync()} and released by the
 *       {@link AsyncListener#onComplete} that ends every async cycle. A timeout or an error is
 *       always followed by {@code onComplete} (the container completes the request when no listener
 *       does), so releasing there, after the application's own timeout/error listeners ran, means a
 *       slot is never free while the application still counts the request as running.</li>
 * </ul>
 * The listener is registered inside {@code startAsync()} itself (by {@link AdmittedRequest}), before the
 * application can call {@code complete()} or {@code dispatch()} from another thread, so no completion
 * can slip between starting async mode and listening for its end. Every path may release: the permit
 * is idempotent, so a path that runs twice frees one slot.
 */
final class PermitRelease extends RequestEndListener {
    private final Permit permit;
    /** True once this listener is registered with the request's async context. */
    private volatile boolean listening;

    PermitRelease(Permit permit) {
        this.permit = permit;
    }

    /**
     * Runs {@code chain} holding the permit, releasing it when the request ends; {@code request} is the
     * {@link AdmittedRequest} built with this release.
     */
    void chain(HttpServletRequest request, ServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        try {
            chain.doFilter(request, response);
        } finally {
            afterDispatch(request);
        }
    }

    /** The dispatch that took the permit has returned or thrown: release now, unless async mode holds it. */
    private void afterDispatch(HttpServletRequest request) {
        if (listening) return; // onComplete releases
        if (request.isAsyncStarted()) {
            // async was started on an object we did not wrap (an outer wrapper kept by the application)
            try {
                listenTo(request.getAsyncContext());
                return;
            } catch (IllegalStateException completedMeanwhile) {
                // another thread completed or dispatched it between the two calls: it has ended here
            }
        }
        permit.release();
    }

    /** Registers this listener with the request's async context (on {@code startAsync()}). */
    void listenTo(AsyncContext context) {
        context.addListener(this);
        listening = true;
    }

    @Override
    void ended() {
        permit.release();
    }
}

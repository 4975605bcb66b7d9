package io.quotagate.filter.servlet;

import io.quotagate.filter.admission.Permit;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;

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
 * The listener is registered inside {@code startAsync()} itself (the request is wrapped), before the
 * application can call {@code complete()} or {@code dispatch()} from another thread, so no completion
 * can slip between starting async mode and listening for its end. Every path may release: the permit
 * is idempotent, so a path that runs twice frees one slot.
 */
final class PermitRelease extends RequestEndListener {
    private final Permit permit;
    /** True once this listener is registered with the request's async context. */
    private volatile boolean listening;

    private PermitRelease(Permit permit) {
        this.permit = permit;
    }

    /** Runs {@code chain} holding {@code permit}, releasing it when the request ends. */
    static void chain(Permit permit, HttpServletRequest request, ServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        PermitRelease release = new PermitRelease(permit);
        try {
            chain.doFilter(new PermitHoldingRequest(request, release), response);
        } finally {
            release.afterDispatch(request);
        }
    }

    /** The dispatch that took the permit has returned or thrown: release now, unless async mode holds it. */
    private void afterDispatch(HttpServletRequest request) {
        if (listening) return; // onComplete releases
        if (request.isAsyncStarted()) {
            // async was started on an object we did not wrap (an outer wrapper kept by the application)
            try {
                request.getAsyncContext().addListener(this);
                listening = true;
                return;
            } catch (IllegalStateException completedMeanwhile) {
                // another thread completed or dispatched it between the two calls: it has ended here
            }
        }
        permit.release();
    }

    private void listenTo(AsyncContext context) {
        context.addListener(this);
        listening = true;
    }

    @Override
    void ended() {
        permit.release();
    }

    /** Registers the release listener the moment the application enters async mode. */
    private static final class PermitHoldingRequest extends HttpServletRequestWrapper {
        private final PermitRelease release;

        PermitHoldingRequest(HttpServletRequest request, PermitRelease release) {
            super(request);
            this.release = release;
        }

        @Override
        public AsyncContext startAsync() {
            AsyncContext context = super.startAsync();
            release.listenTo(context);
            return context;
        }

        @Override
        public AsyncContext startAsync(ServletRequest request, ServletResponse response) {
            AsyncContext context = super.startAsync(request, response);
            release.listenTo(context);
            return context;
        }
    }
}

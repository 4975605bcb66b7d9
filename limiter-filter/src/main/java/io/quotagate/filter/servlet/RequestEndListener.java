package io.quotagate.filter.servlet;

import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;

/**
 * An async listener that acts once, when an asynchronous request really ends. A timeout or an error
 * is always followed by {@code onComplete} (the container completes the request when no listener
 * does), so acting there, after the application's own timeout and error listeners ran, covers every
 * path; and a new async cycle (startAsync after an async dispatch) drops listeners that do not
 * re-register, so this one re-registers itself.
 */
abstract class RequestEndListener implements AsyncListener {

    /** The request has ended; called once per async cycle's completion. */
    abstract void ended();

    @Override
    public final void onComplete(AsyncEvent event) {
        ended();
    }

    @Override
    public final void onTimeout(AsyncEvent event) {
        // onComplete follows once the application's listeners (or the container) end the request
    }

    @Override
    public final void onError(AsyncEvent event) {
        // onComplete follows once the application's listeners (or the container) end the request
    }

    @Override
    public final void onStartAsync(AsyncEvent event) {
        event.getAsyncContext().addListener(this);
    }
}

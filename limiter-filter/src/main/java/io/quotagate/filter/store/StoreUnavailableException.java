package io.quotagate.filter.store;

/**
 * Thrown by a bucket of a shared store that cannot reach its backend and is configured to fail
 * closed ({@code store.on-failure: closed}), or that could not count a request against a calendar quota
 * in time (a slow backend: a count that bills is never decided without it): the filter answers
 * {@code 503 Service Unavailable} with {@code Retry-After} instead of admitting the request unchecked.
 */
public final class StoreUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final long retryAfterSeconds;

    /**
     * @param message           why the store is unavailable (no secrets: it may be logged)
     * @param retryAfterSeconds when the store will next try to reach its backend, in whole seconds (at least 1)
     */
    public StoreUnavailableException(String message, long retryAfterSeconds) {
        super(message, null, false, false);
        this.retryAfterSeconds = Math.max(1, retryAfterSeconds);
    }

    /** Whole seconds after which a retry may find the store available again; at least 1. */
    public long retryAfterSeconds() {
        return retryAfterSeconds;
    }
}

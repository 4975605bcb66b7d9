package io.quotagate.filter.admission;

/**
 * What the {@link Gate} decided for a request: it may run, holding a {@link Ticket}, or it is
 * {@link Refused}, with nothing taken.
 */
public sealed interface Outcome permits Outcome.Refused, Ticket {

    /**
     * The request must not run; nothing is held for it.
     *
     * @param status            the HTTP status to answer (400, 401, 403, 408, 413, 429, 500, 503)
     * @param reason            the machine-readable reason ({@code tenant_rate}, {@code unknown_tenant}...)
     * @param detail            a sentence for the client; never echoes unvalidated input
     * @param caller            who was refused; null before a valid tenant or client key was known
     * @param retryAfterSeconds the {@code Retry-After} delay in whole seconds, or 0 for none
     */
    record Refused(int status, String reason, String detail, Caller caller, long retryAfterSeconds)
            implements Outcome {
    }
}

package io.quotagate.tenant;

/**
 * Thrown by a {@link TenantResolver} that recognises a credential and refuses it, such as an unknown
 * API key (401) or a token with a bad signature (401). The filter answers with {@link #status()} and
 * a problem body carrying {@link #reason()}; the message is safe to show the client.
 */
public final class TenantRejectedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int status;
    private final String reason;

    /**
     * @param status HTTP status to answer (4xx)
     * @param reason short machine-readable reason ({@code unknown_api_key})
     * @param detail human-readable detail, shown to the client
     */
    public TenantRejectedException(int status, String reason, String detail) {
        // no stack trace: these are routine outcomes of hostile or broken clients, not bugs
        super(detail, null, false, false);
        if (status < 400 || status > 499) throw new IllegalArgumentException("status must be 4xx, was " + status);
        this.status = status;
        this.reason = reason;
    }

    /** HTTP status to answer. */
    public int status() {
        return status;
    }

    /** Machine-readable reason for the problem body. */
    public String reason() {
        return reason;
    }
}

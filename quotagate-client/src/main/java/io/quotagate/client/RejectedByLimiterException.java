package io.quotagate.client;

import java.io.IOException;

/**
 * An {@link AdaptiveLimiter} refused a request: it was never sent, so it cost no quota. An
 * {@link IOException}, so that HTTP code (and a retry policy around it) handles it where it handles a
 * failed exchange; {@link #reason()} says why.
 */
public final class RejectedByLimiterException extends IOException {
    private static final long serialVersionUID = 1L;

    /** Why a request was refused. */
    public enum Reason {
        /** as many requests as the limiter's maximum queue were already waiting */
        QUEUE_FULL,
        /**
         * its estimated wait for units was longer than the maximum wait: when it arrived, or when a
         * pause (Retry-After) that began while it waited would outlast its maximum wait
         */
        WAIT_TOO_LONG,
        /** it waited the maximum wait without getting its units (the rate dropped meanwhile) */
        TIMED_OUT
    }

    private final Reason reason;

    RejectedByLimiterException(String limiter, Reason reason) {
        super("limiter " + limiter + " rejected the request without sending it: " + switch (reason) {
            case QUEUE_FULL -> "its queue is full";
            case WAIT_TOO_LONG -> "the wait for units would exceed the maximum wait";
            case TIMED_OUT -> "it waited the maximum wait for units";
        });
        this.reason = reason;
    }

    /** Why the request was refused. */
    public Reason reason() {
        return reason;
    }
}

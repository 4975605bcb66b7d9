package io.quotagate.filter;

/**
 * Thrown by a {@link CostEstimator} when a request cannot be priced because its input is wrong. The
 * client gets {@code 400} ({@code reason: invalid_request}) with this exception's message as the
 * problem's {@code detail}, so the message must describe the rule broken (e.g. "max_tokens must be
 * a whole number from 1 to 4096") and must not echo the client's input.
 */
public final class InvalidCostInputException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** @param message what is wrong with the request, for the client */
    public InvalidCostInputException(String message) {
        super(message);
    }

    /**
     * @param message what is wrong with the request, for the client
     * @param cause   the parser's exception (logged, never sent)
     */
    public InvalidCostInputException(String message, Throwable cause) {
        super(message, cause);
    }
}

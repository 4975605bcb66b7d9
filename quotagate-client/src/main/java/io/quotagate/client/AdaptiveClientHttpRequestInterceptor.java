package io.quotagate.client;

import org.springframework.http.HttpRequest;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.Objects;
import java.util.function.ToLongFunction;

/**
 * Puts Spring's {@code RestClient} and {@code RestTemplate} behind an {@link AdaptiveLimiter} (needs
 * spring-web on the class path): each request waits for its units, is executed, and its answer moves
 * the limiter's rate. A request the limiter rejects is not sent: the call fails with a
 * {@link RejectedByLimiterException} (an {@link IOException}, which RestClient wraps in its
 * {@code ResourceAccessException}). Interrupted while waiting, the request leaves the queue unsent and
 * the call fails with an {@link InterruptedIOException}, the thread's interrupt flag set again.
 *
 * <pre>{@code
 * RestClient api = RestClient.builder()
 *         .baseUrl("https://api.example.com")
 *         .requestInterceptor(new AdaptiveClientHttpRequestInterceptor(limiter))
 *         .build();
 * }</pre>
 *
 * <p>Retry around the whole call (e.g. a {@code RetryTemplate} around {@code restClient.get()…}),
 * so that each attempt goes through this interceptor and waits for units: an interceptor that calls
 * {@code execution.execute} twice skips the interceptors after it on the second call.
 *
 * <p>The response's body is read after this interceptor has returned, so the request factory bounds
 * the exchange, not the limiter: {@code JdkClientHttpRequestFactory.setReadTimeout} bounds it whole,
 * body included (Spring 6.2 closes the body when it passes); the read timeouts of
 * {@code SimpleClientHttpRequestFactory} and Apache HttpClient apply to each read, so a server that
 * drips a byte within each is not stopped by them.
 */
public final class AdaptiveClientHttpRequestInterceptor implements ClientHttpRequestInterceptor {
    private final AdaptiveLimiter limiter;
    private final ToLongFunction<HttpRequest> cost;

    /** Every request costs one unit. */
    public AdaptiveClientHttpRequestInterceptor(AdaptiveLimiter limiter) {
        this(limiter, request -> 1);
    }

    /** A request costs {@code cost.applyAsLong(request)} units (&ge; 0). */
    public AdaptiveClientHttpRequestInterceptor(AdaptiveLimiter limiter, ToLongFunction<HttpRequest> cost) {
        this.limiter = Objects.requireNonNull(limiter, "limiter");
        this.cost = Objects.requireNonNull(cost, "cost");
    }

    @Override
    public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution) throws IOException {
        AdaptiveLimiter.Permit permit;
        try {
            permit = limiter.acquire(cost.applyAsLong(request));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            InterruptedIOException io = new InterruptedIOException("interrupted while waiting for units of limiter " + limiter.name());
            io.initCause(e);
            throw io;
        }
        ClientHttpResponse response = execution.execute(request, body);
        permit.complete(response.getStatusCode().value(), response.getHeaders()::get);
        return response;
    }
}

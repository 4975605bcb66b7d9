package io.quotagate.client;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.ToLongFunction;

/**
 * A {@link HttpClient} whose requests go through an {@link AdaptiveLimiter}: each request waits for
 * its units (its cost, from a function of the request), is sent, and its answer moves the limiter's
 * rate. A request the limiter rejects is not sent ({@link RejectedByLimiterException}, an
 * {@link IOException}) and costs no quota.
 *
 * <pre>{@code
 * AdaptiveHttpClient api = AdaptiveHttpClient.of(HttpClient.newHttpClient(), limiter);
 * HttpResponse<String> r = api.send(HttpRequest.newBuilder(uri).build(), BodyHandlers.ofString());
 * }</pre>
 *
 * <p>{@link #send} honours interruption while it waits for units (the request leaves the queue,
 * unsent) and while it is sent. Cancelling the future of {@link #sendAsync} takes the request out of
 * the queue if it is still waiting, and cancels the exchange if it is under way. Retries are the
 * caller's: put them around this client, so that each attempt waits for units. A 429 is returned as
 * the response, never retried here.
 *
 * <p>The request's {@link HttpRequest.Builder#timeout timeout} bounds its whole exchange here, body
 * included, counted from the sending (the JDK's own bounds only the wait for the headers): when it
 * passes first, {@link #send} throws an {@link java.net.http.HttpTimeoutException} (so does the
 * future of {@link #sendAsync}), or, for a streamed body ({@code ofInputStream}, {@code ofLines},
 * {@code ofPublisher}), its next read fails with one. So {@link #send} returns or throws within the
 * limiter's {@link AdaptiveLimiter.Builder#maxWait} (and a second for a late timer) plus the
 * request's timeout, whatever the server does. A request without a timeout has no such bound.
 */
public final class AdaptiveHttpClient {
    private final HttpClient http;
    private final AdaptiveLimiter limiter;
    private final ToLongFunction<HttpRequest> cost;

    private AdaptiveHttpClient(HttpClient http, AdaptiveLimiter limiter, ToLongFunction<HttpRequest> cost) {
        this.http = Objects.requireNonNull(http, "http");
        this.limiter = Objects.requireNonNull(limiter, "limiter");
        this.cost = Objects.requireNonNull(cost, "cost");
    }

    /** Every request costs one unit. */
    public static AdaptiveHttpClient of(HttpClient http, AdaptiveLimiter limiter) {
        return new AdaptiveHttpClient(http, limiter, request -> 1);
    }

    /** A request costs {@code cost.applyAsLong(request)} units (&ge; 0), e.g. from its path or a header. */
    public static AdaptiveHttpClient of(HttpClient http, AdaptiveLimiter limiter, ToLongFunction<HttpRequest> cost) {
        return new AdaptiveHttpClient(http, limiter, cost);
    }

    /** The wrapped client. */
    public HttpClient httpClient() {
        return http;
    }

    /** The limiter every request goes through. */
    public AdaptiveLimiter limiter() {
        return limiter;
    }

    /**
     * Waits for the request's units, sends it, reports the answer to the limiter.
     *
     * @throws RejectedByLimiterException the limiter refused it: not sent
     * @throws InterruptedException       interrupted while waiting (not sent) or while being sent
     */
    public <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler)
            throws IOException, InterruptedException {
        AdaptiveLimiter.Permit permit = limiter.acquire(cost.applyAsLong(request));
        ExchangeDeadline.Bound<T> bound = ExchangeDeadline.start(request, handler, WakeTimer.shared());
        HttpResponse<T> response;
        try {
            response = http.send(request, bound.handler());
        } catch (IOException | InterruptedException | RuntimeException e) {
            bound.disarm();
            throw e;
        }
        permit.complete(response.statusCode(), response.headers()::allValues);
        return response;
    }

    /**
     * Sends the request once its units are granted. The future fails with a
     * {@link RejectedByLimiterException} when the limiter refuses it (not sent), or with the
     * exchange's own failure. The exchange starts on the limiter's timer thread (asynchronously, as
     * {@link HttpClient#sendAsync} does).
     */
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler) {
        CompletableFuture<AdaptiveLimiter.Permit> acquisition = limiter.acquireAsync(cost.applyAsLong(request));
        Exchange<T> exchange = new Exchange<>(acquisition);
        acquisition.whenComplete((permit, refused) -> {
            if (refused != null) {
                exchange.completeExceptionally(unwrap(refused));
                return;
            }
            if (exchange.isDone()) {   // cancelled between the grant and here
                permit.release();
                return;
            }
            ExchangeDeadline.Bound<T> bound = ExchangeDeadline.start(request, handler, WakeTimer.shared());
            CompletableFuture<HttpResponse<T>> sending = http.sendAsync(request, bound.handler());
            exchange.sending = sending;
            if (exchange.isCancelled()) sending.cancel(true);
            sending.whenComplete((response, failed) -> {
                if (failed != null) {
                    bound.disarm();
                    exchange.completeExceptionally(unwrap(failed));
                    return;
                }
                permit.complete(response.statusCode(), response.headers()::allValues);
                exchange.complete(response);
            });
        });
        return exchange;
    }

    private static Throwable unwrap(Throwable t) {
        return t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
    }

    /** The caller's future: cancelling it withdraws the waiting request or cancels the exchange. */
    private static final class Exchange<T> extends CompletableFuture<HttpResponse<T>> {
        private final CompletableFuture<AdaptiveLimiter.Permit> acquisition;
        volatile CompletableFuture<HttpResponse<T>> sending;

        Exchange(CompletableFuture<AdaptiveLimiter.Permit> acquisition) {
            this.acquisition = acquisition;
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            boolean cancelled = super.cancel(mayInterruptIfRunning);
            if (cancelled) {
                acquisition.cancel(false);
                CompletableFuture<HttpResponse<T>> s = sending;
                if (s != null) s.cancel(true);
            }
            return cancelled;
        }
    }
}

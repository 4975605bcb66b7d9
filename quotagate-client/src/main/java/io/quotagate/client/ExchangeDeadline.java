package io.quotagate.client;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The request's timeout over its whole exchange, body included. {@link HttpRequest#timeout()} bounds
 * only the wait for the response's headers: a server that sends them and then drips the body (one
 * byte every 400 ms of a 100-byte body) held {@code HttpClient.send} for 40 s under a 2 s timeout.
 * Here the timeout counts from the sending; when it passes before the body has ended, the body's
 * subscriber is cancelled upstream (the JDK drops the connection) and fails with an
 * {@link HttpTimeoutException}: {@code send} throws it for a body read into memory
 * ({@code ofString}, {@code ofByteArray}, {@code discarding}…), and a streamed body
 * ({@code ofInputStream}, {@code ofLines}, {@code ofPublisher}) fails with it at its next read, whoever
 * reads it and whenever. Up to the headers the JDK's own timeout, the same duration, answers first.
 * Time is real time: a server's drip is not on the limiter's clock.
 */
final class ExchangeDeadline {
    private final URI uri;
    private final Duration timeout;
    private final ScheduledFuture<?> task;
    private volatile boolean expired;
    private volatile Bounded<?> body;

    private ExchangeDeadline(HttpRequest request, Duration timeout, ScheduledExecutorService timer) {
        this.uri = request.uri();
        this.timeout = timeout;
        ScheduledFuture<?> t;
        try {
            t = timer.schedule(this::expire, timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            t = null;   // a timer shut down by its owner: the JDK's timeout still bounds the headers
        }
        this.task = t;
    }

    /**
     * Starts the request's deadline now and returns the handler that keeps to it; a request without a
     * timeout gets {@code handler} itself (and nothing bounds its exchange, as with the JDK alone).
     */
    static <T> Bound<T> start(HttpRequest request, HttpResponse.BodyHandler<T> handler, ScheduledExecutorService timer) {
        if (request.timeout().isEmpty()) return new Bound<>(handler, null);
        ExchangeDeadline deadline = new ExchangeDeadline(request, request.timeout().get(), timer);
        return new Bound<>(info -> deadline.watch(handler.apply(info)), deadline);
    }

    /** A handler bound to a deadline, and the deadline (null without a timeout). */
    record Bound<T>(HttpResponse.BodyHandler<T> handler, ExchangeDeadline deadline) {
        /** The exchange failed before a body: the timer need not fire. */
        void disarm() {
            if (deadline != null) deadline.disarm();
        }
    }

    private <T> HttpResponse.BodySubscriber<T> watch(HttpResponse.BodySubscriber<T> subscriber) {
        Bounded<T> b = new Bounded<>(subscriber);
        body = b;
        if (expired) b.expire();   // the deadline passed while the headers were read
        return b;
    }

    private void expire() {
        expired = true;
        Bounded<?> b = body;
        if (b != null) b.expire();
    }

    void disarm() {
        if (task != null) task.cancel(false);
    }

    private HttpTimeoutException timedOut() {
        return new HttpTimeoutException("no complete answer from " + uri + " within the request's timeout of "
                + timeout.toMillis() + " ms, its body included");
    }

    /**
     * The body's subscriber, ended by the deadline. Reactive Streams wants its signals one at a time:
     * the HTTP client's (under {@code lock}) and the timer's error must not overlap, and the timer
     * thread must never block on a subscriber busy in {@code onNext}. So the timer marks the deadline
     * passed, cancels upstream and delivers the error only if it gets the lock at once; otherwise the
     * thread that holds it delivers it as it leaves (it looks at {@code expired} after unlocking, and
     * the timer set it before trying: one of the two always sees the other).
     */
    private final class Bounded<T> implements HttpResponse.BodySubscriber<T> {
        private final HttpResponse.BodySubscriber<T> delegate;
        private final ReentrantLock lock = new ReentrantLock();
        private volatile Flow.Subscription upstream;
        private volatile boolean timedOut;
        private boolean done;          // under lock: the delegate had its terminal signal

        Bounded(HttpResponse.BodySubscriber<T> delegate) {
            this.delegate = delegate;
        }

        @Override
        public CompletionStage<T> getBody() {
            return delegate.getBody();
        }

        @Override
        public void onSubscribe(Flow.Subscription subscription) {
            lock.lock();
            try {
                delegate.onSubscribe(subscription);
                upstream = subscription;
            } finally {
                lock.unlock();
            }
            if (timedOut) subscription.cancel();
            deliverTimeout();
        }

        @Override
        public void onNext(List<ByteBuffer> item) {
            lock.lock();
            try {
                if (!done) delegate.onNext(item);
            } finally {
                lock.unlock();
            }
            deliverTimeout();
        }

        @Override
        public void onError(Throwable throwable) {
            // after the deadline, upstream's error is the cancellation's echo: the caller is told why
            end(timedOut ? timedOut() : throwable);
        }

        @Override
        public void onComplete() {
            if (timedOut) {
                end(timedOut());
                return;
            }
            lock.lock();
            try {
                if (done) return;
                done = true;
                delegate.onComplete();
            } finally {
                lock.unlock();
            }
            disarm();
        }

        private void end(Throwable error) {
            lock.lock();
            try {
                if (done) return;
                done = true;
                delegate.onError(error);
            } finally {
                lock.unlock();
            }
            disarm();
        }

        void expire() {
            timedOut = true;
            Flow.Subscription s = upstream;
            if (s != null) s.cancel();
            deliverTimeout();
        }

        private void deliverTimeout() {
            if (!timedOut || upstream == null || !lock.tryLock()) return;
            try {
                if (done) return;
                done = true;
                delegate.onError(timedOut());
            } finally {
                lock.unlock();
            }
        }
    }
}

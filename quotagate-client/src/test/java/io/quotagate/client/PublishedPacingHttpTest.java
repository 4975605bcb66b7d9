package io.quotagate.client;

import com.sun.net.httpserver.HttpServer;
import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.ManualClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RateController#publishedPacing()} against a real HTTP server on 127.0.0.1 that publishes no
 * {@code RateLimit} field at all: 200s, then a phase of 429s, then 200s again. Requests go through a
 * real {@link AdaptiveHttpClient}; the limiter runs on a clock the test advances in steps of 100 ms and
 * has no timer, so the test grants the queue itself and waits for every exchange it granted before
 * the next step: each run sees the same answers at the same clock readings.
 */
class PublishedPacingHttpTest {
    private static final Duration STEP = Duration.ofMillis(100);
    private static final int CALLERS_PER_STEP = 3;     // 1,800/min: above maxRate, so requests wait
    private final ManualClock clock = new ManualClock();
    private final AtomicBoolean throttling = new AtomicBoolean();
    private final AtomicInteger answered429 = new AtomicInteger();
    private final List<CompletableFuture<HttpResponse<Void>>> inFlight = new ArrayList<>();
    private HttpServer server;
    private ExecutorService handlers;

    @AfterEach
    void stop() {
        if (server != null) server.stop(0);
        if (handlers != null) handlers.shutdownNow();
    }

    /** 204 without any field, or while {@link #throttling}: 429 with {@code Retry-After: 1} and no field. */
    private URI serverWithoutFields() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        handlers = Executors.newFixedThreadPool(4);
        server.setExecutor(handlers);
        server.createContext("/", exchange -> {
            exchange.getRequestBody().readAllBytes();
            if (throttling.get()) {
                answered429.incrementAndGet();
                exchange.getResponseHeaders().add("Retry-After", "1");
                exchange.sendResponseHeaders(429, -1);
            } else {
                exchange.sendResponseHeaders(204, -1);
            }
            exchange.close();
        });
        server.start();
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/items/1");
    }

    private static ScheduledExecutorService noTimer() {
        ScheduledExecutorService s = Executors.newSingleThreadScheduledExecutor();
        s.shutdown();
        return s;
    }

    /** One step: callers ask, the clock moves, the queue is granted, every granted exchange is answered. */
    private void step(AdaptiveHttpClient client, URI uri, AdaptiveLimiter limiter) throws InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30)).build();
        for (int i = 0; i < CALLERS_PER_STEP; i++) inFlight.add(client.sendAsync(request, HttpResponse.BodyHandlers.discarding()));
        clock.advance(STEP);
        limiter.poll();
        // what is not done now is queued (no timer grants it) or on the wire to the server
        Await.until("every granted request answered", () -> {
            inFlight.removeIf(CompletableFuture::isDone);
            return inFlight.size() == limiter.queued();
        });
    }

    private void seconds(int seconds, AdaptiveHttpClient client, URI uri, AdaptiveLimiter limiter) throws InterruptedException {
        for (int i = 0; i < seconds * 10; i++) step(client, uri, limiter);
    }

    @Test
    void withoutFieldsTheRateClimbsBackOn2xxAfterAPhaseOf429s() throws Exception {
        URI uri = serverWithoutFields();
        AdaptiveLimiter limiter = AdaptiveLimiter.builder().name("no-fields").clock(clock::nanoTime).scheduler(noTimer())
                .controller(RateController.publishedPacing())
                .initialRate(600).minRate(60).maxRate(1200).maxWait(Duration.ofSeconds(5)).maxQueue(10).build();
        AdaptiveHttpClient client = AdaptiveHttpClient.of(HttpClient.newHttpClient(), limiter);

        seconds(5, client, uri, limiter);
        double before = limiter.appUnitsPerMinute();
        assertThat(before).as("200s that waited raise the rate (slow start, to maxRate)").isEqualTo(1200);

        throttling.set(true);
        seconds(15, client, uri, limiter);
        assertThat(answered429.get()).as("the 429s reached the limiter").isPositive();
        assertThat(limiter.appUnitsPerMinute()).as("a phase of 429s brings the rate down to minRate").isEqualTo(60);

        throttling.set(false);
        clock.advance(Duration.ofSeconds(1));                        // the last Retry-After is over
        // doubling at most once a second: after one second of 200s at most twice the minimum
        seconds(1, client, uri, limiter);
        assertThat(limiter.appUnitsPerMinute()).isBetween(60.0, 120.0);
        // and within ten, back at the ceiling of before the 429s: 0.9 × the rate the first 429 came at
        // (60 → 1,080 is five doublings)
        seconds(9, client, uri, limiter);
        assertThat(limiter.appUnitsPerMinute()).as("climbed back from minRate").isEqualTo(0.9 * before);
    }
}

package io.quotagate.client;

import io.quotagate.filter.testing.Await;
import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.HttpClientErrorException;
import org.springframework.web.client.ResourceAccessException;
import org.springframework.web.client.RestClient;

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
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * A real {@link HttpClient} and a real {@link RestClient} through the limiter against a real HTTP
 * server on 127.0.0.1 that answers 429 to everything, with every hostile Retry-After and RateLimit
 * field in turn, and later recovers. Every call returns: the 429 itself, or a refusal, never a hang
 * and never another exception. Timeouts here are safety nets, not measures.
 */
class HostileHttpServerTest {
    private static final List<List<String>> RETRY_AFTER = List.of(
            List.of("999999999999"), List.of("99999999999999999999999"), List.of("1e30"), List.of("-1"),
            List.of("soon"), List.of("1.5"), List.of(""), List.of("Thu, 01 Jan 1970 00:00:00 GMT"),
            List.of("Fri, 31 Dec 2100 23:59:59 GMT"), List.of("Fri, 31 Dec 9999 23:59:59 GMT"), List.of("120", "3"), List.of());
    private static final List<String[]> RATE_LIMIT = List.of(
            new String[]{"garbage;;;\"", "\"p\";q=-1"},
            new String[]{"\"p\";r=999999999999999;t=999999999999999", "\"p\";q=999999999999999;w=1"},
            new String[]{"\"p\";r=-1;t=-1", "\"p\";q=10;w=0"},
            new String[]{"\"" + "x".repeat(10_000) + "\";r=1", "\"p\";q=10;w=60"},
            new String[]{"\"p\";t=1", ""});
    private final List<AutoCloseable> closing = new ArrayList<>();
    private final AtomicBoolean healthy = new AtomicBoolean();
    private final AtomicLong arrived = new AtomicLong();

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable c : closing) c.close();
    }

    private URI hostileServer() throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        ExecutorService handlers = Executors.newFixedThreadPool(4);
        server.setExecutor(handlers);
        server.createContext("/", exchange -> {
            long n = arrived.getAndIncrement();
            exchange.getRequestBody().readAllBytes();
            if (healthy.get()) {
                exchange.sendResponseHeaders(204, -1);
            } else {
                Headers h = exchange.getResponseHeaders();
                for (String v : RETRY_AFTER.get((int) (n % RETRY_AFTER.size()))) h.add("Retry-After", v);
                String[] fields = RATE_LIMIT.get((int) (n % RATE_LIMIT.size()));
                h.add("RateLimit", fields[0]);
                h.add("RateLimit-Policy", fields[1]);
                exchange.sendResponseHeaders(429, -1);
            }
            exchange.close();
        });
        server.start();
        closing.add(() -> {
            server.stop(0);
            handlers.shutdownNow();
        });
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/items/1");
    }

    private static HttpRequest get(URI uri) {
        return HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30)).build();
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)   // a safety net: each call below has its own
    void everyCallReturnsWhileTheServerAnswers429ForeverAndTheLimiterComesBackWithIt() throws Exception {
        URI uri = hostileServer();
        AdaptiveLimiter limiter = AdaptiveLimiter.builder().name("hostile")
                .controller(RateController.aimd(0.5, 60, Duration.ofSeconds(1)))
                .initialRate(600).minRate(60).maxRate(6000)
                .maxWait(Duration.ofMillis(500)).maxQueue(4).maxRetryAfter(Duration.ofSeconds(1))
                .build();
        HttpClient http = HttpClient.newHttpClient();
        AdaptiveHttpClient client = AdaptiveHttpClient.of(http, limiter);
        RestClient rest = RestClient.builder().requestFactory(new JdkClientHttpRequestFactory(http))
                .requestInterceptor(new AdaptiveClientHttpRequestInterceptor(limiter)).build();
        AtomicInteger throttled = new AtomicInteger(), refused = new AtomicInteger();

        // 6 callers, synchronous, as fast as they can: HttpClient.send and RestClient in turn
        ExecutorService callers = Executors.newFixedThreadPool(6);
        closing.add(callers::shutdownNow);
        List<Future<?>> running = new ArrayList<>();
        for (int c = 0; c < 6; c++) {
            boolean spring = c % 2 == 1;
            running.add(callers.submit(() -> {
                for (int i = 0; i < 40; i++) {
                    try {
                        if (spring) {
                            rest.get().uri(uri).retrieve().toBodilessEntity();
                            fail("a 429 is no success");
                        } else {
                            assertThat(client.send(get(uri), HttpResponse.BodyHandlers.discarding()).statusCode()).isEqualTo(429);
                        }
                        throttled.incrementAndGet();
                    } catch (HttpClientErrorException.TooManyRequests e) {
                        throttled.incrementAndGet();
                    } catch (RejectedByLimiterException e) {
                        refused.incrementAndGet();
                    } catch (ResourceAccessException e) {
                        assertThat(e.getCause()).isInstanceOf(RejectedByLimiterException.class);
                        refused.incrementAndGet();
                    }
                    assertThat(limiter.queued()).isLessThanOrEqualTo(4);
                }
                return null;
            }));
        }
        // and a burst of asynchronous ones: each future completes, with the 429 or a refusal
        List<CompletableFuture<HttpResponse<Void>>> async = new ArrayList<>();
        for (int i = 0; i < 50; i++) async.add(client.sendAsync(get(uri), HttpResponse.BodyHandlers.discarding()));
        for (CompletableFuture<HttpResponse<Void>> f : async) {
            try {
                assertThat(f.get(60, TimeUnit.SECONDS).statusCode()).isEqualTo(429);
                throttled.incrementAndGet();
            } catch (ExecutionException e) {
                assertThat(e.getCause()).isInstanceOf(RejectedByLimiterException.class);
                refused.incrementAndGet();
            }
        }
        for (Future<?> f : running) f.get(2, TimeUnit.MINUTES);

        assertThat(throttled.get() + refused.get()).isEqualTo(6 * 40 + 50);
        assertThat(throttled.get()).as("requests reached the server").isPositive();
        assertThat(refused.get()).as("the rest were refused unsent, not parked").isPositive();
        assertThat(arrived.get()).isEqualTo(throttled.get());
        assertThat(limiter.appUnitsPerMinute()).as("the rate collapsed").isLessThan(600);
        assertThat(limiter.queued()).isZero();

        // the server recovers: within maxRetryAfter the limiter lets a request through, and it succeeds
        healthy.set(true);
        int status = Await.until("a request let through and answered 204", () -> {
            try {
                return client.send(get(uri), HttpResponse.BodyHandlers.discarding()).statusCode();
            } catch (RejectedByLimiterException e) {
                return 0; // still paused: try later, as a caller's retry would
            }
        }, s -> s == 204);
        assertThat(status).isEqualTo(204);
    }
}

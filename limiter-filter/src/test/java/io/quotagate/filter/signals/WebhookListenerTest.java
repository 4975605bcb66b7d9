package io.quotagate.filter.signals;



import io.quotagate.filter.testing.Await;

import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** The webhook against a real HTTP server (the JDK's) started by the test. */
class WebhookListenerTest {
    private static final byte[] SECRET = "s3cret".getBytes(StandardCharsets.UTF_8);

    record Received(String body, String signature, String delivery, String type, long atNanos) {
    }

    private final BlockingQueue<Received> received = new LinkedBlockingQueue<>();
    private final AtomicInteger answered = new AtomicInteger();
    private HttpServer server;
    private java.util.concurrent.ExecutorService serverThreads;
    private WebhookListener webhook;

    /** A server whose first {@code failures} answers are {@code failStatus} (or a hang of {@code hang}), then 204. */
    private URI serve(int failures, int failStatus, Duration hang) throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        serverThreads = java.util.concurrent.Executors.newCachedThreadPool();
        server.setExecutor(serverThreads);
        server.createContext("/hook", exchange -> {
            String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            received.add(new Received(body, exchange.getRequestHeaders().getFirst("X-Quotagate-Signature"),
                    exchange.getRequestHeaders().getFirst("X-Quotagate-Delivery"),
                    exchange.getRequestHeaders().getFirst("X-Quotagate-Event"), System.nanoTime()));
            int n = answered.incrementAndGet();
            if (n <= failures) {
                if (hang != null) {
                    try {
                        Thread.sleep(hang.toMillis());
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                exchange.sendResponseHeaders(failStatus, -1);
            } else {
                exchange.sendResponseHeaders(204, -1);
            }
            exchange.close();
        });
        server.start();
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/hook");
    }

    @AfterEach
    void stop() {
        if (webhook != null) webhook.close();
        if (server != null) server.stop(0);
        if (serverThreads != null) serverThreads.shutdownNow();
    }

    private static QuotaEvent near() {
        return new QuotaEvent.NearLimit(Instant.parse("2026-12-01T10:00:00Z"), "acme", "pro", "daily", 80, 4000, 5000);
    }

    @Test
    void postsTheEventAsJsonSignedWithHmacSha256OfTheBody() throws Exception {
        webhook = WebhookListener.builder(serve(0, 0, null), SECRET).instance("i-1").build();
        webhook.onEvent(near());
        Received r = received.poll(5, TimeUnit.SECONDS);
        assertThat(r).isNotNull();
        assertThat(r.body()).isEqualTo("{\"type\":\"near_limit\",\"at\":\"2026-12-01T10:00:00Z\",\"tenant\":\"acme\","
                + "\"plan\":\"pro\",\"limit\":\"daily\",\"threshold\":80,\"used\":4000,\"capacity\":5000,\"instance\":\"i-1\"}");
        assertThat(r.type()).isEqualTo("near_limit");
        // the receiver recomputes the HMAC with its copy of the secret
        javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
        mac.init(new javax.crypto.spec.SecretKeySpec(SECRET, "HmacSHA256"));
        String expected = "sha256=" + java.util.HexFormat.of().formatHex(mac.doFinal(r.body().getBytes(StandardCharsets.UTF_8)));
        assertThat(r.signature()).isEqualTo(expected);
        assertThat(WebhookListener.sign("other".getBytes(StandardCharsets.UTF_8), r.body().getBytes(StandardCharsets.UTF_8)))
                .isNotEqualTo(r.signature());
        Await.until("the event delivered", () -> webhook.delivered() > 0);
        assertThat(webhook.delivered()).isEqualTo(1);
    }

    @Test
    void retriesA5xxWithDoublingBackOffAndTheSameDeliveryId() throws Exception {
        webhook = WebhookListener.builder(serve(2, 503, null), SECRET).backoff(Duration.ofMillis(200)).retries(3).build();
        webhook.onEvent(near());
        Received a = received.poll(5, TimeUnit.SECONDS);
        Received b = received.poll(5, TimeUnit.SECONDS);
        Received c = received.poll(5, TimeUnit.SECONDS);
        assertThat(List.of(a.delivery(), b.delivery(), c.delivery())).as("one delivery, three attempts").containsOnly(a.delivery());
        assertThat(Duration.ofNanos(b.atNanos() - a.atNanos())).isGreaterThanOrEqualTo(Duration.ofMillis(200));
        assertThat(Duration.ofNanos(c.atNanos() - b.atNanos())).as("doubled").isGreaterThanOrEqualTo(Duration.ofMillis(400));
        Await.until("the event delivered", () -> webhook.delivered() > 0);
        assertThat(webhook.delivered()).isEqualTo(1);
        assertThat(webhook.failed()).isZero();
    }

    @Test
    void aReceiverThatHangsTimesOutAndIsRetriedThenGivenUp() throws Exception {
        webhook = WebhookListener.builder(serve(10, 500, Duration.ofSeconds(3)), SECRET)
                .timeout(Duration.ofMillis(300)).backoff(Duration.ZERO).retries(1).build();
        webhook.onEvent(near());
        assertThat(received.poll(5, TimeUnit.SECONDS)).isNotNull();
        assertThat(received.poll(5, TimeUnit.SECONDS)).as("retried after the timeout").isNotNull();
        Await.until("the delivery failed", () -> webhook.failed() > 0);
        assertThat(webhook.failed()).isEqualTo(1);
        assertThat(webhook.gaveUp()).as("given up, not refused").isEqualTo(1);
        assertThat(webhook.refused()).isZero();
        assertThat(webhook.delivered()).isZero();
    }

    @Test
    void aClientErrorIsNotRetried() throws Exception {
        webhook = WebhookListener.builder(serve(10, 400, null), SECRET).backoff(Duration.ZERO).retries(3).build();
        webhook.onEvent(near());
        assertThat(received.poll(5, TimeUnit.SECONDS)).isNotNull();
        Await.until("the delivery failed", () -> webhook.failed() > 0);
        assertThat(webhook.failed()).isEqualTo(1);
        assertThat(webhook.refused()).as("refused, not given up").isEqualTo(1);
        assertThat(webhook.gaveUp()).isZero();
        assertThat(received.poll(300, TimeUnit.MILLISECONDS)).isNull();
    }

    @Test
    void withoutAnInstanceNameTheBodyNamesThisProcessTheWayARedisStoreDoes() throws Exception {
        webhook = WebhookListener.builder(serve(0, 0, null), SECRET).build();
        webhook.onEvent(near());
        webhook.onEvent(near());
        Received a = received.poll(5, TimeUnit.SECONDS);
        Received b = received.poll(5, TimeUnit.SECONDS);
        assertThat(b).isNotNull();
        // host:pid:random, as the Redis store's heartbeat names an instance
        assertThat(a.body()).containsPattern("\"instance\":\"[^\"]+:" + ProcessHandle.current().pid() + ":[0-9a-f]{8}\"}$");
        assertThat(b.body()).isEqualTo(a.body());
    }

    @Test
    void aFullQueueDropsNewEventsWithoutBlockingTheCaller() throws Exception {
        webhook = WebhookListener.builder(serve(1000, 500, Duration.ofSeconds(2)), SECRET)
                .timeout(Duration.ofSeconds(5)).retries(0).queue(2).build();
        long started = System.nanoTime();
        for (int i = 0; i < 50; i++) webhook.onEvent(near());
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(1));
        assertThat(webhook.dropped()).isGreaterThanOrEqualTo(47);
    }
}

package io.quotagate.client;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.RestClientException;
import org.springframework.web.client.RestClient;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A server that answers {@code 200} with {@code Content-Length: 100} at once, then drips the body one
 * byte every 400 ms: 40 s for the whole body. The request's timeout is 1 s. Whatever reads the body,
 * the caller is let go long before the drip would end. The bounds asserted are generous on purpose
 * (15 s against a drip of 40 s and a timeout of 1 s): they tell a bounded call from an unbounded one
 * on a loaded machine, they measure nothing.
 */
class DrippingServerTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(1);
    private static final long LET_GO_WITHIN_NANOS = TimeUnit.SECONDS.toNanos(15);
    private final List<Socket> connections = new CopyOnWriteArrayList<>();
    private final AtomicInteger dripping = new AtomicInteger();
    private volatile int bodyBytes = 100;
    private ServerSocket server;

    @AfterEach
    void stop() throws IOException {
        if (server != null) server.close();
        for (Socket s : connections) s.close();
    }

    /** A raw server on 127.0.0.1: reads each request's head, sends the head of a {@code bodyBytes} answer, drips the body. */
    private URI drippingServer() throws IOException {
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(() -> {
            while (!server.isClosed()) {
                try {
                    Socket s = server.accept();
                    connections.add(s);
                    Thread drip = new Thread(() -> drip(s), "drip");
                    drip.setDaemon(true);
                    drip.start();
                } catch (IOException e) {
                    return;   // closed
                }
            }
        }, "dripping-server");
        acceptor.setDaemon(true);
        acceptor.start();
        return URI.create("http://127.0.0.1:" + server.getLocalPort() + "/items/1");
    }

    private void drip(Socket s) {
        try (s) {
            InputStream in = s.getInputStream();
            // the request's head ends with an empty line; a GET has no body
            int matched = 0;
            for (int b; matched < 4 && (b = in.read()) >= 0; ) matched = b == "\r\n\r\n".charAt(matched) ? matched + 1 : (b == '\r' ? 1 : 0);
            OutputStream out = s.getOutputStream();
            out.write(("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " + bodyBytes + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            dripping.incrementAndGet();
            for (int i = 0; i < bodyBytes; i++) {
                Thread.sleep(400);
                out.write('x');
                out.flush();
            }
        } catch (IOException | InterruptedException e) {
            // the client hung up: what a bounded client does
        }
    }

    private static AdaptiveLimiter limiter() {
        return AdaptiveLimiter.builder().name("drip").controller(RateController.fixed(6000)).initialRate(6000)
                .maxWait(Duration.ofSeconds(2)).build();
    }

    private static HttpRequest get(URI uri) {
        return HttpRequest.newBuilder(uri).timeout(TIMEOUT).build();
    }

    /** How each body handler reads the body, to the end. */
    static Stream<Arguments> bodies() {
        return Stream.of(
                Arguments.of("ofString", (Reader) (client, uri) -> client.send(get(uri), HttpResponse.BodyHandlers.ofString()).body()),
                Arguments.of("ofByteArray", (Reader) (client, uri) -> client.send(get(uri), HttpResponse.BodyHandlers.ofByteArray()).body()),
                Arguments.of("discarding", (Reader) (client, uri) -> client.send(get(uri), HttpResponse.BodyHandlers.discarding()).body()),
                Arguments.of("ofInputStream", (Reader) (client, uri) -> {
                    try (InputStream in = client.send(get(uri), HttpResponse.BodyHandlers.ofInputStream()).body()) {
                        return in.readAllBytes();
                    }
                }),
                Arguments.of("ofLines", (Reader) (client, uri) -> {
                    try (Stream<String> lines = client.send(get(uri), HttpResponse.BodyHandlers.ofLines()).body()) {
                        return lines.collect(Collectors.joining());
                    }
                }),
                Arguments.of("sendAsync ofString", (Reader) (client, uri) -> {
                    try {
                        return client.sendAsync(get(uri), HttpResponse.BodyHandlers.ofString()).get(60, TimeUnit.SECONDS).body();
                    } catch (ExecutionException e) {
                        throw e.getCause();
                    }
                }));
    }

    @FunctionalInterface
    interface Reader {
        Object read(AdaptiveHttpClient client, URI uri) throws Throwable;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("bodies")
    @Timeout(value = 60, unit = TimeUnit.SECONDS)   // a safety net far above the bound asserted
    void aDrippedBodyEndsWithinTheRequestsTimeoutNotWhenTheServerIsDone(String name, Reader reader) throws Exception {
        URI uri = drippingServer();
        AdaptiveHttpClient client = AdaptiveHttpClient.of(HttpClient.newHttpClient(), limiter());
        long start = System.nanoTime();
        Throwable thrown = null;
        try {
            reader.read(client, uri);
        } catch (Throwable t) {
            thrown = t;
        }
        long took = System.nanoTime() - start;
        assertThat(dripping.get()).as("the server sent the head and began to drip").isPositive();
        assertThat(thrown).as(name + ": the body of 40 s is not read to its end").isNotNull();
        assertThat(causes(thrown)).as(name + ": the caller is told it timed out").anyMatch(HttpTimeoutException.class::isInstance);
        assertThat(took).as(name + ": let go long before the drip's 40 s").isLessThan(LET_GO_WITHIN_NANOS);
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aBodyThatEndsWithinTheTimeoutIsReadWhole() throws Exception {
        bodyBytes = 5;                                               // 2 s of drip, under a timeout of 30 s
        URI uri = drippingServer();
        AdaptiveHttpClient client = AdaptiveHttpClient.of(HttpClient.newHttpClient(), limiter());
        HttpRequest request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30)).build();
        assertThat(client.send(request, HttpResponse.BodyHandlers.ofString()).body()).isEqualTo("xxxxx");
        try (InputStream in = client.send(request, HttpResponse.BodyHandlers.ofInputStream()).body()) {
            assertThat(in.readAllBytes()).hasSize(5);
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void springsJdkRequestFactoryBoundsTheBodyByItsReadTimeout() throws Exception {
        // Spring 6.2's JdkClientHttpRequestFactory: its read timeout closes the body when it passes
        URI uri = drippingServer();
        JdkClientHttpRequestFactory factory = new JdkClientHttpRequestFactory(HttpClient.newHttpClient());
        factory.setReadTimeout(TIMEOUT);
        RestClient rest = RestClient.builder().requestFactory(factory)
                .requestInterceptor(new AdaptiveClientHttpRequestInterceptor(limiter())).build();
        long start = System.nanoTime();
        assertThatThrownBy(() -> rest.get().uri(uri).retrieve().body(String.class)).isInstanceOf(RestClientException.class);
        assertThat(System.nanoTime() - start).as("let go long before the drip's 40 s").isLessThan(LET_GO_WITHIN_NANOS);
    }

    private static List<Throwable> causes(Throwable t) {
        List<Throwable> all = new java.util.ArrayList<>();
        for (Throwable c = t; c != null && all.size() < 10; c = c.getCause()) all.add(c);
        return all;
    }
}

package io.quotagate.loadtest.bench;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The load generator's client must stay in step with the server whatever the response framing, or
 * it would count garbage as responses: a scripted server answers each request with the next canned
 * response, byte for byte.
 */
class RawHttpConnectionTest {
    private final List<Socket> accepted = new CopyOnWriteArrayList<>();
    private final AtomicInteger connections = new AtomicInteger();
    private ServerSocket server;

    @AfterEach
    void stop() throws IOException {
        if (server != null) server.close();
        for (Socket s : accepted) s.close();
    }

    @Test
    void readsContentLengthChunkedAndNoBodyResponsesOnOneKeepAliveConnection() throws Exception {
        InetSocketAddress address = serve(
                "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok",
                "HTTP/1.1 429 Too Many Requests\r\ntransfer-encoding: Chunked\r\nRetry-After: 1\r\n\r\n"
                        + "4\r\nslow\r\n6;ext=1\r\n down!\r\n0\r\nX-Trailer: t\r\n\r\n",
                "HTTP/1.1 204 No Content\r\n\r\n",
                "HTTP/1.1 200 OK\r\ncontent-length:  5 \r\n\r\nhello");
        byte[] request = RawHttpConnection.get("127.0.0.1", address.getPort(), "/x", "X-Tenant-Id: a");
        try (RawHttpConnection c = new RawHttpConnection(address)) {
            assertThat(c.exchange(request)).isEqualTo(200);
            assertThat(c.exchange(request)).isEqualTo(429);
            assertThat(c.exchange(request)).isEqualTo(204);
            assertThat(c.exchange(request)).isEqualTo(200);
        }
        assertThat(connections.get()).isEqualTo(1);
    }

    @Test
    void reconnectsAfterAResponseThatClosesTheConnection() throws Exception {
        InetSocketAddress address = serve(
                "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
                "HTTP/1.0 200 OK\r\n\r\nbody until the end of the stream",
                "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
        byte[] request = RawHttpConnection.get("127.0.0.1", address.getPort(), "/x");
        try (RawHttpConnection c = new RawHttpConnection(address)) {
            assertThat(c.exchange(request)).isEqualTo(503);
            assertThat(c.exchange(request)).isEqualTo(200);
            assertThat(c.exchange(request)).isEqualTo(200);
        }
        assertThat(connections.get()).isEqualTo(3);
    }

    @Test
    void aResponseThatIsNotHttpIsAnErrorNotAStatus() throws Exception {
        InetSocketAddress address = serve("SSH-2.0-OpenSSH_9.6\r\n");
        try (RawHttpConnection c = new RawHttpConnection(address)) {
            assertThatThrownBy(() -> c.exchange(RawHttpConnection.get("127.0.0.1", address.getPort(), "/")))
                    .isInstanceOf(IOException.class).hasMessageContaining("not an HTTP/1.x status line");
        }
    }

    /**
     * A server answering the n-th request (on whatever connection) with {@code responses[n]}; a
     * response that is HTTP/1.0, has {@code Connection: close} or no framing closes its connection.
     */
    private InetSocketAddress serve(String... responses) throws IOException {
        server = new ServerSocket(0, 10, InetAddress.getLoopbackAddress());
        Thread t = new Thread(() -> {
            int next = 0;
            try {
                while (next < responses.length) {
                    Socket s = server.accept();
                    accepted.add(s);
                    connections.incrementAndGet();
                    InputStream in = s.getInputStream();
                    OutputStream out = s.getOutputStream();
                    while (next < responses.length && readRequestHead(in)) {
                        String response = responses[next++];
                        out.write(response.getBytes(StandardCharsets.ISO_8859_1));
                        out.flush();
                        String head = response.toLowerCase();
                        if (head.startsWith("http/1.0") || head.contains("connection: close")
                                || !(head.contains("content-length") || head.contains("chunked")
                                || head.startsWith("http/1.1 204"))) {
                            s.close();
                            break;
                        }
                    }
                }
            } catch (IOException ignored) {
                // the test closed the server socket
            }
        }, "scripted-http-server");
        t.setDaemon(true);
        t.start();
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getLocalPort());
    }

    private static boolean readRequestHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int b;
        while ((b = in.read()) >= 0) {
            head.write(b);
            byte[] h = head.toByteArray();
            int n = h.length;
            if (n >= 4 && h[n - 4] == '\r' && h[n - 3] == '\n' && h[n - 2] == '\r' && h[n - 1] == '\n') return true;
        }
        return false;
    }
}

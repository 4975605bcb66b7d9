package io.quotagate.filter;

import io.quotagate.filter.testing.JettyServer;
import io.quotagate.plans.PlansFile;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.Locale;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A refusal sent before the request's body was read closes the connection, and says so; one that
 * leaves nothing unread keeps it. On raw keep-alive sockets to real Jetty: a body that has not
 * arrived when the refusal is sent is the case Jetty used to close without a word, so that the
 * client's next request on the connection met a closed socket.
 */
class RefusalConnectionTest {
    private static final String PLANS = """
            plans:  { tiny: { limits: [ { capacity: 1, refill: 1, period: 1h } ] } }
            routes:
              - { name: items, paths: ["/items/*"] }
            tenants: { default-plan: tiny }
            """;

    private JettyServer server;

    @BeforeEach
    void start() throws Exception {
        server = JettyServer.start(QuotaFilter.builder().plans(PlansFile.parse("t.yml", PLANS)).build());
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    @Test
    void aRefusalBeforeTheBodyArrivesSaysConnectionClose() throws IOException {
        try (Socket s = socket()) {
            // the headers of a POST whose 5-byte body the client has not sent yet: out of units, refused now
            assertThat(refusedAfterTheOnlyUnit(s, "Content-Length: 5")).contains("connection: close");
            // and the server does close it: the client learns it from the answer, not from its next request
            assertThat(s.getInputStream().read()).isEqualTo(-1);
        }
    }

    @Test
    void aChunkedBodyLeftUnreadAlsoClosesTheConnection() throws IOException {
        try (Socket s = socket()) {
            assertThat(refusedAfterTheOnlyUnit(s, "Transfer-Encoding: chunked")).contains("connection: close");
        }
    }

    @Test
    void aRefusalWithNothingUnreadKeepsTheConnection() throws IOException {
        try (Socket s = socket()) {
            send(s, "GET /items/1 HTTP/1.1\r\nHost: localhost\r\nX-Tenant-Id: acme\r\n\r\n");
            assertThat(readResponse(s)).startsWith("HTTP/1.1 200");
            for (int i = 0; i < 3; i++) { // refused, and the same connection serves the next request
                send(s, "GET /items/1 HTTP/1.1\r\nHost: localhost\r\nX-Tenant-Id: acme\r\n\r\n");
                String refused = readResponse(s);
                assertThat(refused).startsWith("HTTP/1.1 429");
                assertThat(headers(refused)).doesNotContain("connection: close");
            }
        }
    }

    @Test
    void anEstimatedRouteClosesOnlyWhenItLeftPartOfTheBodyUnread() throws Exception {
        // a second route priced by its body: the number in it, at most 8 bytes read
        String plans = """
                plans:  { big: { limits: [ { capacity: 100, refill: 1, period: 1h } ] } }
                routes:
                  - { name: gen, methods: [POST], paths: ["/gen"] }
                tenants: { default-plan: big }
                """;
        try (JettyServer gen = JettyServer.start(QuotaFilter.builder().plans(PlansFile.parse("g.yml", plans))
                .costEstimator("gen", (request, body) -> Long.parseLong(new String(body, StandardCharsets.UTF_8)))
                .maxEstimatedBodyBytes(8).build());
             Socket s = new Socket("127.0.0.1", gen.port())) {
            s.setSoTimeout(10_000);
            // read to its end and refused as input: the connection stays
            send(s, "POST /gen HTTP/1.1\r\nHost: localhost\r\nX-Tenant-Id: acme\r\nContent-Length: 3\r\n\r\nabc");
            String invalid = readResponse(s);
            assertThat(invalid).startsWith("HTTP/1.1 400");
            assertThat(headers(invalid)).doesNotContain("connection: close");
            // a chunked body of no declared length: 9 bytes read, one past the limit, then refused as too
            // large; the rest (here: the last chunk, never sent) is unread, so the connection closes
            send(s, "POST /gen HTTP/1.1\r\nHost: localhost\r\nX-Tenant-Id: acme\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "9\r\n123456789\r\n");
            String tooLarge = readResponse(s);
            assertThat(tooLarge).startsWith("HTTP/1.1 413");
            assertThat(headers(tooLarge)).contains("connection: close");
        }
    }

    @Test
    void anHttp2RequestIsNeverAnsweredWithAConnectionField() throws Exception {
        // the container in front says HTTP/2 (a wrapper stands in for an h2 connector): Connection is
        // not a field an HTTP/2 message may carry, and its stream ends by itself
        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        context.addFilter(new FilterHolder((Filter) (req, res, chain) -> chain.doFilter(
                new HttpServletRequestWrapper((HttpServletRequest) req) {
                    @Override
                    public String getProtocol() {
                        return "HTTP/2.0";
                    }
                }, res)), "/*", EnumSet.of(DispatcherType.REQUEST));
        context.addFilter(new FilterHolder(QuotaFilter.builder().plans(PlansFile.parse("t.yml", PLANS)).build()), "/*",
                EnumSet.of(DispatcherType.REQUEST));
        try (JettyServer h2 = JettyServer.start(context); Socket s = new Socket("127.0.0.1", h2.port())) {
            s.setSoTimeout(10_000);
            send(s, "POST /items/1 HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n\r\n");
            String refused = readResponse(s); // no tenant header: refused before the body is read
            assertThat(refused).startsWith("HTTP/1.1 4");
            assertThat(headers(refused)).doesNotContain("connection:");
        }
    }

    /**
     * Spends acme's only unit on a GET, then sends the head of a POST with this body header and no
     * body; returns the head of the answer (429), lower-cased.
     */
    private static String refusedAfterTheOnlyUnit(Socket s, String bodyHeader) throws IOException {
        send(s, "GET /items/1 HTTP/1.1\r\nHost: localhost\r\nX-Tenant-Id: acme\r\n\r\n");
        assertThat(readResponse(s)).startsWith("HTTP/1.1 200");
        send(s, "POST /items/1 HTTP/1.1\r\nHost: localhost\r\nX-Tenant-Id: acme\r\n" + bodyHeader + "\r\n\r\n");
        String refused = readResponse(s);
        assertThat(refused).startsWith("HTTP/1.1 429");
        return headers(refused);
    }

    private Socket socket() throws IOException {
        Socket s = new Socket("127.0.0.1", server.port());
        s.setSoTimeout(10_000);
        return s;
    }

    private static void send(Socket s, String text) throws IOException {
        OutputStream out = s.getOutputStream();
        out.write(text.getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
    }

    /** One response: its head, then the body of its Content-Length. */
    private static String readResponse(Socket s) throws IOException {
        InputStream in = s.getInputStream();
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        while (!head.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) throw new IOException("connection closed after: " + head.toString(StandardCharsets.ISO_8859_1));
            head.write(b);
        }
        String text = head.toString(StandardCharsets.ISO_8859_1);
        int length = 0;
        for (String line : text.split("\r\n")) {
            if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
                length = Integer.parseInt(line.substring("content-length:".length()).trim());
            }
        }
        return text + new String(in.readNBytes(length), StandardCharsets.UTF_8);
    }

    /** The head of a response, lower-cased. */
    private static String headers(String response) {
        return response.substring(0, response.indexOf("\r\n\r\n")).toLowerCase(Locale.ROOT);
    }
}

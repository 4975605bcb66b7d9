package io.quotagate.filter.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** Small HTTP helpers for tests: a shared JDK client, and raw requests for headers it refuses to send. */
public final class Http {
    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private Http() {
    }

    /** GET with an optional tenant header (null for none). */
    public static HttpResponse<String> get(URI uri, String tenant) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).GET();
        if (tenant != null) b.header("X-Tenant-Id", tenant);
        return CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Sends a request with these headers, byte for byte, and returns the raw response text. */
    public static String raw(int port, String method, String path, String headerLines) throws IOException {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            byte[] head = (method + " " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1);
            out.write(head);
            out.write(headerLines.getBytes(StandardCharsets.UTF_8));
            out.write("\r\n".getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            InputStream in = s.getInputStream();
            ByteArrayOutputStream all = new ByteArrayOutputStream();
            in.transferTo(all);
            return all.toString(StandardCharsets.UTF_8);
        }
    }

    /**
     * Sends {@code head} (request line and header lines, each ending in CRLF, without the blank line)
     * byte for byte as UTF-8, then the blank line, and returns the raw response text.
     */
    public static String rawHead(int port, String head) throws IOException {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(head.getBytes(StandardCharsets.UTF_8));
            out.write("Connection: close\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            ByteArrayOutputStream all = new ByteArrayOutputStream();
            s.getInputStream().transferTo(all);
            return all.toString(StandardCharsets.UTF_8);
        }
    }

    /** The status code of a raw response. */
    public static int status(String rawResponse) {
        return Integer.parseInt(rawResponse.substring(9, 12));
    }
}

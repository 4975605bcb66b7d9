package io.quotagate.filter.testing;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * One keep-alive HTTP/1.1 connection sending GETs one after another, as fast as the server answers:
 * for floods in tests, where a client per request would measure the client. Not thread-safe.
 */
public final class KeepAliveClient implements AutoCloseable {
    private final int port;
    private Socket socket;
    private OutputStream out;
    private InputStream in;

    /** A response: its status and, for a problem body, its {@code reason} member (else null). */
    public record Answer(int status, String reason) {
    }

    public KeepAliveClient(int port) throws IOException {
        this.port = port;
        connect();
    }

    private void connect() throws IOException {
        if (socket != null) socket.close();
        socket = new Socket("127.0.0.1", port);
        socket.setTcpNoDelay(true);
        socket.setSoTimeout(10_000);
        out = socket.getOutputStream();
        in = new BufferedInputStream(socket.getInputStream());
    }

    /** Sends {@code GET path} with one more header line (no CRLF) and returns the status. */
    public int get(String path, String header) throws IOException {
        return exchange(path, header).status();
    }

    /** Sends {@code GET path} with one more header line (no CRLF) and reads the whole response. */
    public Answer exchange(String path, String header) throws IOException {
        out.write(("GET " + path + " HTTP/1.1\r\nHost: localhost\r\n" + header + "\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
        String head = readHead();
        int status = Integer.parseInt(head.substring(9, 12));
        int length = 0;
        boolean close = false;
        for (String line : head.split("\r\n")) {
            int colon = line.indexOf(':');
            if (colon < 0) continue;
            String name = line.substring(0, colon).trim();
            String value = line.substring(colon + 1).trim();
            if (name.equalsIgnoreCase("Content-Length")) length = Integer.parseInt(value);
            if (name.equalsIgnoreCase("Connection") && value.equalsIgnoreCase("close")) close = true;
        }
        String body = new String(in.readNBytes(length), StandardCharsets.UTF_8);
        if (close) connect();
        int at = body.indexOf("\"reason\":\"");
        String reason = at < 0 ? null : body.substring(at + 10, body.indexOf('"', at + 10));
        return new Answer(status, reason);
    }

    private String readHead() throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream(256);
        int matched = 0;
        while (matched < 4) {
            int b = in.read();
            if (b < 0) throw new IOException("connection closed before the response head ended");
            head.write(b);
            matched = (b == '\r' && (matched == 0 || matched == 2)) || (b == '\n' && (matched == 1 || matched == 3))
                    ? matched + 1 : (b == '\r' ? 1 : 0);
        }
        return head.toString(StandardCharsets.ISO_8859_1);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}

package io.quotagate.loadtest.bench;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * One blocking HTTP/1.1 keep-alive connection that sends pre-encoded requests and reads each
 * response completely, keeping only its status code.
 *
 * <p>The load generator shares the machine's cores with the server it measures, so every cycle it
 * spends is taken from the server: this client allocates nothing per request, parses only the status
 * line and the framing headers ({@code Content-Length}, {@code Transfer-Encoding: chunked},
 * {@code Connection: close}) and discards the body. A response framed by closing the connection is
 * read to the end and the connection is opened again.
 *
 * <p>Not thread-safe: one connection per thread. Used by {@code bench} and by {@code colleagues}' script.
 */
public final class RawHttpConnection implements AutoCloseable {
    private static final byte[] CONTENT_LENGTH = "content-length:".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] TRANSFER_ENCODING = "transfer-encoding:".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CONNECTION = "connection:".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CHUNKED = "chunked".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CLOSE = "close".getBytes(StandardCharsets.US_ASCII);
    private static final int TIMEOUT_MILLIS = 10_000;
    private static final int MAX_LINE = 8192;

    private final InetSocketAddress address;
    private final byte[] buffer = new byte[16 * 1024];
    private final byte[] line = new byte[MAX_LINE];
    private Socket socket;
    private InputStream in;
    private OutputStream out;
    private int position;
    private int limit;

    /** Connects at once. */
    public RawHttpConnection(InetSocketAddress address) throws IOException {
        this.address = address;
        connect();
    }

    /**
     * Sends one request (a complete HTTP/1.1 message, e.g. from {@link #get}) and reads its response.
     *
     * @return the response's status code
     * @throws IOException if the connection fails or the response is not HTTP/1.x; the connection is
     *                     then closed and the next call reconnects
     */
    public int exchange(byte[] request) throws IOException {
        try {
            if (socket == null) connect();
            out.write(request);
            return readResponse();
        } catch (IOException | RuntimeException e) {
            close();
            throw e;
        }
    }

    /** A GET request with these extra header lines ({@code "Name: value"}), encoded once. */
    public static byte[] get(String host, int port, String path, String... headers) {
        StringBuilder b = new StringBuilder("GET ").append(path).append(" HTTP/1.1\r\n")
                .append("Host: ").append(host).append(':').append(port).append("\r\n");
        for (String h : headers) b.append(h).append("\r\n");
        return b.append("\r\n").toString().getBytes(StandardCharsets.US_ASCII);
    }

    @Override
    public void close() {
        Socket s = socket;
        socket = null;
        in = null;
        out = null;
        position = limit = 0;
        if (s != null) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing a socket that already failed: nothing left to release
            }
        }
    }

    private void connect() throws IOException {
        Socket s = new Socket();
        try {
            s.setTcpNoDelay(true);
            s.connect(address, TIMEOUT_MILLIS);
            s.setSoTimeout(TIMEOUT_MILLIS);
            in = s.getInputStream();
            out = s.getOutputStream();
        } catch (IOException e) {
            s.close();
            throw e;
        }
        socket = s;
        position = limit = 0;
    }

    private int readResponse() throws IOException {
        int length = readLine();
        // "HTTP/1.1 200 OK"
        if (length < 12 || line[0] != 'H' || line[4] != '/' || line[8] != ' ') {
            throw new IOException("not an HTTP/1.x status line: "
                    + new String(line, 0, Math.min(length, 80), StandardCharsets.ISO_8859_1));
        }
        int status = digit(line[9]) * 100 + digit(line[10]) * 10 + digit(line[11]);
        boolean http10 = line[7] == '0';

        long contentLength = -1;
        boolean chunked = false;
        boolean close = http10;
        while ((length = readLine()) > 0) {
            if (startsWithIgnoreCase(length, CONTENT_LENGTH)) {
                contentLength = parseDecimal(CONTENT_LENGTH.length, length);
            } else if (startsWithIgnoreCase(length, TRANSFER_ENCODING)) {
                chunked = contains(TRANSFER_ENCODING.length, length, CHUNKED);
            } else if (startsWithIgnoreCase(length, CONNECTION)) {
                close = contains(CONNECTION.length, length, CLOSE);
            }
        }

        if (status == 204 || status == 304 || (status >= 100 && status < 200)) {
            // no body by definition
        } else if (chunked) {
            skipChunkedBody();
        } else if (contentLength >= 0) {
            skip(contentLength);
        } else {
            skipToEndOfStream();
            close = true;
        }
        if (close) close();
        return status;
    }

    private void skipChunkedBody() throws IOException {
        while (true) {
            int length = readLine();
            long size = 0;
            for (int i = 0; i < length; i++) {
                int d = Character.digit(line[i], 16);
                if (d < 0) break; // chunk extension or trailing space
                size = size * 16 + d;
            }
            if (size == 0) {
                while (readLine() > 0) {
                    // trailer fields, ignored
                }
                return;
            }
            skip(size);
            if (readLine() != 0) throw new IOException("chunk not followed by CRLF");
        }
    }

    private void skip(long count) throws IOException {
        while (count > 0) {
            if (position == limit) fill();
            int n = (int) Math.min(count, limit - position);
            position += n;
            count -= n;
        }
    }

    private void skipToEndOfStream() throws IOException {
        position = limit;
        while (in.read(buffer) >= 0) {
            // discard
        }
        position = limit = 0;
    }

    /** Reads one line into {@link #line}, without its CRLF (or bare LF); returns its length. */
    private int readLine() throws IOException {
        int length = 0;
        while (true) {
            if (position == limit) fill();
            byte b = buffer[position++];
            if (b == '\n') {
                return length > 0 && line[length - 1] == '\r' ? length - 1 : length;
            }
            if (length == MAX_LINE) throw new IOException("response line longer than " + MAX_LINE + " bytes");
            line[length++] = b;
        }
    }

    private void fill() throws IOException {
        int n = in.read(buffer, 0, buffer.length);
        if (n < 0) throw new EOFException("connection closed by the server");
        position = 0;
        limit = n;
    }

    private boolean startsWithIgnoreCase(int length, byte[] lowerPrefix) {
        if (length < lowerPrefix.length) return false;
        for (int i = 0; i < lowerPrefix.length; i++) {
            byte b = line[i];
            if (b >= 'A' && b <= 'Z') b += 'a' - 'A';
            if (b != lowerPrefix[i]) return false;
        }
        return true;
    }

    private boolean contains(int from, int length, byte[] lowerWord) {
        outer:
        for (int i = from; i + lowerWord.length <= length; i++) {
            for (int j = 0; j < lowerWord.length; j++) {
                byte b = line[i + j];
                if (b >= 'A' && b <= 'Z') b += 'a' - 'A';
                if (b != lowerWord[j]) continue outer;
            }
            return true;
        }
        return false;
    }

    private long parseDecimal(int from, int length) throws IOException {
        long value = 0;
        boolean any = false;
        for (int i = from; i < length; i++) {
            byte b = line[i];
            if (b == ' ' || b == '\t') {
                if (any) break;
                continue;
            }
            value = value * 10 + digit(b);
            any = true;
        }
        if (!any) throw new IOException("empty Content-Length");
        return value;
    }

    private static int digit(byte b) throws IOException {
        if (b < '0' || b > '9') throw new IOException("not a digit: " + (char) b);
        return b - '0';
    }
}

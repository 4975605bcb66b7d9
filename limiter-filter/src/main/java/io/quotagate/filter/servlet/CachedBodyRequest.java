package io.quotagate.filter.servlet;

import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;

/**
 * A request whose body was read by the filter (a {@link CostEstimator} needed it) and is replayed to
 * the application from memory, through {@link #getInputStream} or {@link #getReader}, blocking or
 * with a {@link ReadListener}.
 */
final class CachedBodyRequest extends HttpServletRequestWrapper {
    private final byte[] body;
    private final ByteArrayInputStream in;
    private ServletInputStream stream;
    private BufferedReader reader;

    /** The body is larger than the configured limit. */
    static final class TooLarge extends IOException {
        private static final long serialVersionUID = 1L;

        TooLarge(int limit) {
            super("body larger than " + limit + " bytes");
        }
    }

    CachedBodyRequest(HttpServletRequest request, byte[] body) {
        super(request);
        this.body = body;
        this.in = new ByteArrayInputStream(body);
    }

    /**
     * Reads the whole body, at most {@code limit} bytes.
     *
     * @throws TooLarge    if the declared or actual length exceeds {@code limit}
     * @throws IOException if the client's body cannot be read
     */
    static byte[] read(HttpServletRequest request, int limit) throws IOException {
        if (request.getContentLengthLong() > limit) throw new TooLarge(limit);
        InputStream raw = request.getInputStream();
        byte[] bytes = raw.readNBytes(limit + 1);
        if (bytes.length > limit) throw new TooLarge(limit);
        return bytes;
    }

    @Override
    public ServletInputStream getInputStream() {
        if (reader != null) throw new IllegalStateException("getReader() was already called");
        if (stream == null) stream = new Replay();
        return stream;
    }

    @Override
    public BufferedReader getReader() {
        if (stream != null) throw new IllegalStateException("getInputStream() was already called");
        if (reader == null) reader = new BufferedReader(new InputStreamReader(in, charset()));
        return reader;
    }

    @Override
    public int getContentLength() {
        return body.length;
    }

    @Override
    public long getContentLengthLong() {
        return body.length;
    }

    private Charset charset() {
        String name = getCharacterEncoding();
        if (name == null) return StandardCharsets.UTF_8;
        try {
            return Charset.forName(name);
        } catch (IllegalArgumentException e) { // unknown or unsupported charset name
            return StandardCharsets.UTF_8;
        }
    }

    private final class Replay extends ServletInputStream {
        @Override
        public int read() {
            return in.read();
        }

        @Override
        public int read(byte[] b, int off, int len) {
            return in.read(b, off, len);
        }

        @Override
        public boolean isFinished() {
            return in.available() == 0;
        }

        @Override
        public boolean isReady() {
            return true;
        }

        @Override
        public void setReadListener(ReadListener listener) {
            try {
                if (in.available() > 0) listener.onDataAvailable();
                listener.onAllDataRead();
            } catch (IOException | RuntimeException e) {
                listener.onError(e);
            }
        }
    }
}

package io.quotagate.filter;

import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A request whose body was read by the filter (a {@link CostEstimator} needed it) and is replayed to
 * the application from memory, through {@link #getInputStream} or {@link #getReader}, blocking or
 * with a {@link ReadListener}.
 */
final class CachedBodyRequest extends HttpServletRequestWrapper {
    private static final int READING = 0;
    private static final int DONE = 1;
    private static final int TIMING_OUT = 2;
    private static final int INTERRUPTED = 3;
    /** One daemon thread for every filter: it only interrupts readers whose time is up. */
    private static final ScheduledThreadPoolExecutor WATCHDOG = watchdog();

    private final byte[] body;
    private final ByteArrayInputStream in;
    private ServletInputStream stream;
    private BufferedReader reader;

    /** The body is larger than the configured limit. */
    static final class TooLarge extends IOException {
        private static final long serialVersionUID = 1L;
        private final boolean afterReading;

        TooLarge(int limit, boolean afterReading) {
            super("body larger than " + limit + " bytes");
            this.afterReading = afterReading;
        }

        /** False if the declared length gave it away before a byte was read. */
        boolean afterReading() {
            return afterReading;
        }
    }

    CachedBodyRequest(HttpServletRequest request, byte[] body) {
        super(request);
        this.body = body;
        this.in = new ByteArrayInputStream(body);
    }

    /** The body did not arrive within the read timeout. */
    static final class TimedOut extends IOException {
        private static final long serialVersionUID = 1L;

        TimedOut(Duration timeout) {
            super("body not received within " + timeout.toMillis() + " ms");
        }
    }

    /**
     * Reads the whole body, at most {@code limits.maxBytes()} bytes, within {@code limits.readTimeout()}.
     *
     * <p>The servlet API has no timeout for a blocking read, and a client that sends a byte now and
     * then never trips the connector's idle timeout, so a watchdog interrupts the reading thread when
     * the time is up (the blocking reads of Jetty, Tomcat and Undertow end with an
     * {@code InterruptedIOException}). The race between the read finishing and the watchdog firing is
     * settled by one compare-and-set on {@code state}: whoever moves it from {@code READING} wins. If
     * the watchdog won, the reader waits until the interrupt has been delivered and then clears it, so
     * it never reaches the application; the body is used if it was complete anyway.
     *
     * @throws TooLarge    if the declared or actual length exceeds the limit
     * @throws TimedOut    if the body did not arrive in time
     * @throws IOException if the client's body cannot be read
     */
    static byte[] read(HttpServletRequest request, BodyLimits limits) throws IOException {
        int limit = limits.maxBytes();
        if (request.getContentLengthLong() > limit) throw new TooLarge(limit, false);
        Thread reader = Thread.currentThread();
        AtomicInteger state = new AtomicInteger(READING);
        ScheduledFuture<?> watchdog = WATCHDOG.schedule(() -> {
            if (state.compareAndSet(READING, TIMING_OUT)) {
                reader.interrupt();
                state.set(INTERRUPTED);
            }
        }, limits.readTimeout().toNanos(), TimeUnit.NANOSECONDS);
        byte[] bytes = null;
        IOException failure = null;
        try {
            bytes = request.getInputStream().readNBytes(limit + 1);
        } catch (IOException e) {
            failure = e;
        } finally {
            watchdog.cancel(false);
            if (!state.compareAndSet(READING, DONE)) {
                while (state.get() != INTERRUPTED) Thread.onSpinWait(); // the interrupt is on its way
                Thread.interrupted();
                if (bytes == null) throw new TimedOut(limits.readTimeout());
            }
        }
        if (failure != null) throw failure;
        if (bytes.length > limit) throw new TooLarge(limit, true);
        return bytes;
    }

    private static ScheduledThreadPoolExecutor watchdog() {
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "quotagate-body-read-timeout");
            t.setDaemon(true);
            return t;
        });
        executor.setRemoveOnCancelPolicy(true); // a cancelled timer (every body read in time) frees its slot at once
        return executor;
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

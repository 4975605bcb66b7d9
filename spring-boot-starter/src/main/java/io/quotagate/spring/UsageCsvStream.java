package io.quotagate.spring;

import io.quotagate.filter.QuotaControl;
import io.quotagate.filter.status.UsagePage;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * The usage export as one CSV stream: the first page (already read, so that a bad cursor is a 400, not a broken
 * download), then each next page read only when the client has read the previous one. Holds one page at a time.
 */
final class UsageCsvStream extends InputStream {
    private final QuotaControl control;
    private final int size;
    private byte[] chunk;
    private int at;
    private String next;

    UsageCsvStream(QuotaControl control, UsagePage first, int size, boolean header) {
        this.control = control;
        this.size = size;
        this.chunk = first.csv(header).getBytes(StandardCharsets.UTF_8);
        this.next = first.next();
    }

    @Override
    public int read() {
        if (!fill()) return -1;
        return chunk[at++] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) {
        if (len == 0) return 0;
        if (!fill()) return -1;
        int n = Math.min(len, chunk.length - at);
        System.arraycopy(chunk, at, b, off, n);
        at += n;
        return n;
    }

    /** True if bytes are left, reading the next page when this one is used up. */
    private boolean fill() {
        while (at == chunk.length) {
            if (next == null) return false;
            UsagePage page = control.usage(next, size);
            chunk = page.csv(false).getBytes(StandardCharsets.UTF_8);
            at = 0;
            next = page.next();
        }
        return true;
    }
}

package io.quotagate.filter.internal.admission;

import io.quotagate.filter.store.QuotaClock;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Logs the failures of application code the filter calls (a tenant resolver, a tenant directory) at
 * most once per {@value #INTERVAL_SECONDS} seconds, with the stack trace and the number of failures
 * held back since the last line: a broken database under load writes a line every few seconds, not a
 * stack trace per request. The client gets its 500 problem either way.
 */
public final class FailureLog {
    /** At most one line per this many seconds. */
    public static final long INTERVAL_SECONDS = 10;
    private static final long INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(INTERVAL_SECONDS);

    private final System.Logger log;
    private final QuotaClock clock;
    private final String what;
    /** When the next line may be written; the thread that moves it forward writes the line. */
    private final AtomicLong next;
    private final LongAdder held = new LongAdder();

    /**
     * @param log   where the lines go
     * @param clock times the interval
     * @param what  names the failing code in each line, e.g. {@code "tenant directory"}
     */
    public FailureLog(System.Logger log, QuotaClock clock, String what) {
        this.log = log;
        this.clock = clock;
        this.what = what;
        this.next = new AtomicLong(clock.nanoTime());
    }

    /** One failure; {@code context} is appended to the line, e.g. {@code " for tenant acme"}. */
    public void failed(String context, Throwable failure) {
        long now = clock.nanoTime();
        long due = next.get();
        if (now - due < 0 || !next.compareAndSet(due, now + INTERVAL_NANOS)) {
            held.increment();
            return;
        }
        long heldBack = held.sumThenReset();
        String held = heldBack == 0 ? ""
                : " (and " + heldBack + " times more in the last " + INTERVAL_SECONDS + " s or longer, not logged)";
        log.log(System.Logger.Level.ERROR, what + " failed" + context + held, failure);
    }
}

package io.quotagate.filter.store;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The local buckets' time: a clock read at most about once a millisecond while requests flow. A clock
 * read costs 20–30 ns on a virtual machine (a fifth of the filter's own work per request in
 * {@code FilterBenchmark}), and a bucket that can take a request needs the time only to add the units
 * that arrived since its last operation.
 *
 * <p><b>Older, never wrong.</b> {@link #read} answers the time a daemon thread ({@code quotagate-clock})
 * last published, which trails the clock by a tick or by however long that thread was kept from running.
 * A bucket read at an older time holds fewer units, never more; so a stale time can only refuse. Every
 * refusal is decided again after {@link #refresh} (the clock read itself and published), as are waits
 * ({@link MonitorBucket}): what a client is told, admitted, refused or how long to wait, is what the
 * clock itself says. The one difference a stale time makes is at a bucket's capacity: units that
 * arrived during the lag and would have overflowed a full bucket count a little later instead, at most
 * {@code rate × lag} more units at once (a thousandth of a second's refill with a 1 ms tick).
 *
 * <p><b>Never back.</b> The published time only grows (compare-and-set from the value seen), and a
 * bucket reads it under its monitor, so the times one bucket sees never go back.
 *
 * <p><b>Only while used.</b> The thread starts at the first read, and stops when a whole
 * {@link #IDLE_NANOS} passed without a read; until it runs again, reads go to the clock. It is a daemon
 * with no context class loader, so it keeps no application from stopping. If it cannot be started
 * (a security policy, no native thread left), every read goes to the clock, as before.
 */
final class TickingTime {
    /** The JVM's clock, shared by every local store of this class loader: one thread for all of them. */
    static final TickingTime SYSTEM = new TickingTime(SystemClock.INSTANCE);

    /** How often the thread publishes the clock. */
    static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** Without a read for this long, the thread stops. */
    static final long IDLE_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

    private static final int STOPPED = 0;
    private static final int STARTING = 1;
    private static final int TICKING = 2;
    /** The thread could not be started: every read goes to the clock. */
    private static final int DIRECT = 3;

    private static final VarHandle NOW;
    private static final VarHandle STATE;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            NOW = lookup.findVarHandle(TickingTime.class, "now", long.class);
            STATE = lookup.findVarHandle(TickingTime.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final QuotaClock clock;
    /** The latest time published: by the thread, or by a {@link #refresh}. Never goes back. */
    private volatile long now;
    /** Set by a read while ticking (written only when it was clear), cleared by the thread. */
    private volatile boolean read;
    private volatile int state = STOPPED;

    TickingTime(QuotaClock clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
        this.now = clock.nanoTime();
    }

    /** The time: as published while the thread ticks, else the clock's, published. */
    long read() {
        if (state != TICKING) return startAndRefresh();
        if (!read) read = true; // a write only once per idle check: the readers share the line
        return now;
    }

    /** Reads the clock and publishes it: every later {@link #read} answers at least this. */
    long refresh() {
        return publish(clock.nanoTime());
    }

    /** Whether reads may trail the clock now (the thread ticks): a refusal is then worth a {@link #refresh}. */
    boolean ticking() {
        return state == TICKING;
    }

    private long startAndRefresh() {
        if (state == STOPPED && STATE.compareAndSet(this, STOPPED, STARTING)) start();
        return refresh();
    }

    private void start() {
        try {
            Thread thread = new Thread(this::tick, "quotagate-clock");
            thread.setDaemon(true);
            thread.setContextClassLoader(null);
            thread.start();
        } catch (Throwable cannot) { // SecurityException, OutOfMemoryError (no native thread): read the clock
            state = DIRECT;
        }
    }

    /** The thread: publishes the clock every tick until a whole {@link #IDLE_NANOS} went without a read. */
    private void tick() {
        long checks = Math.max(1, IDLE_NANOS / TICK_NANOS);
        read = true; // the read that started it
        refresh();
        state = TICKING;
        while (true) {
            for (long i = 0; i < checks; i++) {
                LockSupport.parkNanos(TICK_NANOS);
                refresh();
            }
            if (read) {
                read = false;
                continue;
            }
            state = STOPPED; // a read from now on goes to the clock and starts a new thread
            return;
        }
    }

    /** Raises {@link #now} to {@code t} unless it is already later; returns what it holds then. */
    private long publish(long t) {
        long seen = now;
        while (t > seen) {
            if (NOW.compareAndSet(this, seen, t)) return t;
            seen = now;
        }
        return seen;
    }
}

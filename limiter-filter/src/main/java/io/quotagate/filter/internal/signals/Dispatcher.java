package io.quotagate.filter.internal.signals;

import io.quotagate.filter.signals.QuotaEvent;
import io.quotagate.filter.signals.QuotaListener;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * Hands events to the listeners on a daemon thread of its own, through a bounded queue: raising an
 * event never waits for a listener. A full queue drops the new event (counted); a listener that
 * throws is counted and logged (at most once per 10 s), and the next listener still gets the event.
 */
final class Dispatcher implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(QuotaEvent.class.getName());
    private static final long FAILURE_LOG_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final List<QuotaListener> listeners;
    private final BlockingQueue<QuotaEvent> queue;
    private final LongAdder dropped = new LongAdder();
    private final LongAdder failures = new LongAdder();
    private final Thread thread;
    private volatile boolean closed;
    private long nextFailureLog = System.nanoTime();
    private long failuresHeld;

    Dispatcher(List<QuotaListener> listeners, int capacity) {
        this.listeners = List.copyOf(listeners);
        this.queue = new ArrayBlockingQueue<>(capacity);
        if (this.listeners.isEmpty()) {
            thread = null;
        } else {
            thread = new Thread(this::run, "quotagate-events");
            thread.setDaemon(true);
            thread.start();
        }
    }

    /** Queues the event for the listeners; false (counted as dropped) if the queue is full. Never blocks. */
    boolean offer(QuotaEvent event) {
        if (thread == null) return true;
        if (queue.offer(event)) return true;
        dropped.increment();
        return false;
    }

    long dropped() {
        return dropped.sum();
    }

    /** Listener calls that threw: each an event that listener did not take. */
    long failures() {
        return failures.sum();
    }

    private void run() {
        while (!closed) {
            QuotaEvent event;
            try {
                event = queue.take();
            } catch (InterruptedException stop) {
                return;
            }
            for (QuotaListener l : listeners) {
                try {
                    l.onEvent(event);
                } catch (RuntimeException | LinkageError failure) {
                    failed(l, failure);
                }
                if (closed) return;
            }
        }
    }

    private void failed(QuotaListener listener, Throwable failure) {
        failures.increment();
        long now = System.nanoTime();
        if (now - nextFailureLog < 0) {
            failuresHeld++;
            return;
        }
        nextFailureLog = now + FAILURE_LOG_NANOS;
        String held = failuresHeld == 0 ? "" : " (and " + failuresHeld + " failures more, not logged)";
        failuresHeld = 0;
        LOG.log(System.Logger.Level.WARNING, "quotagate: quota listener " + listener + " failed" + held, failure);
    }

    @Override
    public void close() {
        closed = true;
        if (thread != null) thread.interrupt();
    }
}

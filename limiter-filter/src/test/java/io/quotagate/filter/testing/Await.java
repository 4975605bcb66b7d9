package io.quotagate.filter.testing;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.function.Predicate;

/**
 * The one way a test waits for something another thread, process or server makes true: poll a condition,
 * bounded, and fail naming what was awaited. Never a sleep in a loop of the test's own. The bound is
 * generous (the CI machine is a loaded 2-core box): a condition that holds ends the wait at once, so a
 * long bound costs nothing, and a test must never depend on how fast something happens.
 */
public final class Await {
    /** The bound of {@link #until}: long enough for a loaded machine, short enough to fail a hung test. */
    public static final Duration PATIENCE = Duration.ofSeconds(30);
    private static final long POLL_MILLIS = 10;

    private Await() {
    }

    /** A condition that may throw (an HTTP call, a file read): a throw fails the wait, naming it. */
    @FunctionalInterface
    public interface Condition {
        boolean met() throws Exception;
    }

    /** Waits until {@code condition} holds, at most {@link #PATIENCE}; fails naming {@code what}. */
    public static void until(String what, Condition condition) throws InterruptedException {
        within(PATIENCE, what, condition);
    }

    /** As {@link #until(String, Condition)}, at most {@code seconds}. */
    public static void within(int seconds, String what, Condition condition) throws InterruptedException {
        within(Duration.ofSeconds(seconds), what, condition);
    }

    /** As {@link #until(String, Condition)}, at most {@code timeout}. */
    public static void within(Duration timeout, String what, Condition condition) throws InterruptedException {
        until(timeout, what, () -> condition.met(), met -> met);
    }

    /**
     * Reads {@code value} until {@code accepted} takes it, at most {@link #PATIENCE}, and returns it;
     * fails naming {@code what} and the last value read.
     */
    public static <T> T until(String what, Callable<T> value, Predicate<? super T> accepted) throws InterruptedException {
        return until(PATIENCE, what, value, accepted);
    }

    /** As {@link #until(String, Callable, Predicate)}, at most {@code timeout}. */
    public static <T> T until(Duration timeout, String what, Callable<T> value, Predicate<? super T> accepted)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            T last;
            try {
                last = value.call();
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                throw new AssertionError("while waiting for " + what + ": " + e, e);
            }
            if (accepted.test(last)) return last;
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("not within " + seconds(timeout) + ": " + what + " (last: " + last + ")");
            }
            Thread.sleep(POLL_MILLIS);
        }
    }

    private static String seconds(Duration d) {
        return d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : d.toMillis() + " ms";
    }
}

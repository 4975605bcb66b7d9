package io.quotagate.filter.redis;

import java.util.function.BooleanSupplier;

/** Bounded polling for the tests that start and kill Redis processes: never an unbounded wait. */
final class Await {
    private Await() {
    }

    /** Polls {@code condition} every 50 ms for at most {@code seconds}; fails naming {@code what}. */
    static void within(int seconds, String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) throw new AssertionError("not within " + seconds + " s: " + what);
            Thread.sleep(50);
        }
    }
}

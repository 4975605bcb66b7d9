package io.quotagate.filter.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.function.IntConsumer;

/** Runs a body on several threads released at once, for tests of what racing threads do to shared state. */
public final class Race {
    private Race() {
    }

    /**
     * Starts {@code threads} threads, lets them all run {@code body} (given the thread's index) at the
     * same moment, and waits for every one to end.
     */
    public static void run(int threads, IntConsumer body) throws InterruptedException {
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int index = t;
            Thread w = new Thread(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    return;
                }
                body.accept(index);
            }, "race-" + t);
            workers.add(w);
            w.start();
        }
        start.countDown();
        for (Thread w : workers) w.join();
    }
}

package io.quotagate.loadtest.bench;

import java.lang.management.ManagementFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * What one thread hand-off costs on this machine: two threads pass a turn back and forth, each parking
 * until the other unparks it. A request decided by a remote store pays at least one (its thread waits for
 * the reply and is woken), so the figure tells a reader of {@code bench --redis} how much of a Redis
 * mode's extra CPU per request the platform, rather than the store, decides.
 */
final class HandOff {
    /**
     * Per hand-off, in microseconds: the process's CPU (both threads, and whatever else runs in it
     * meanwhile) and the elapsed time.
     */
    record Cost(double cpuMicros, double wallMicros) {
    }

    private HandOff() {
    }

    /** The cost of one hand-off, measured over {@code count} of them (rounded up to an even number). */
    static Cost measure(int count) throws InterruptedException {
        if (count <= 0) throw new IllegalArgumentException("count must be > 0, was " + count);
        int rounds = (count + 1) / 2;
        AtomicInteger turn = new AtomicInteger(); // whose turn: the thread that may go on
        Thread[] threads = new Thread[2];
        for (int i = 0; i < 2; i++) {
            int me = i;
            threads[i] = new Thread(() -> {
                for (int k = 0; k < rounds; k++) {
                    while (turn.get() != me) LockSupport.park();
                    turn.set(1 - me);
                    LockSupport.unpark(threads[1 - me]);
                }
            }, "hand-off-" + i);
            threads[i].setDaemon(true);
        }
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long cpu = os.getProcessCpuTime();
        long start = System.nanoTime();
        for (Thread t : threads) t.start();
        for (Thread t : threads) t.join();
        long elapsed = System.nanoTime() - start;
        cpu = os.getProcessCpuTime() - cpu;
        double n = 2.0 * rounds;
        return new Cost(cpu / 1e3 / n, elapsed / 1e3 / n);
    }
}

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
     * meanwhile) and the elapsed time. The CPU figure is {@code NaN} when the process's CPU clock did not
     * advance at all over the whole measurement (a clock that counts in coarse steps, on some VMs):
     * unmeasured, never a cost of 0.
     */
    record Cost(double cpuMicros, double wallMicros, long count) {
        /** Whether the process's CPU clock advanced during the measurement. */
        boolean cpuMeasured() {
            return !Double.isNaN(cpuMicros);
        }
    }

    /** How long a measurement goes on growing while the process's CPU clock has not advanced. */
    private static final long LONGEST_NANOS = 2_000_000_000L;

    private HandOff() {
    }

    /**
     * The cost of one hand-off, measured over at least {@code count} of them (rounded up to an even
     * number). A process CPU clock that advances in coarse steps can read the same before and after a
     * short run: the count is then doubled and the run repeated, for up to about two seconds, so the
     * figure is a real step of the clock or, if it never moved, {@code NaN}.
     */
    static Cost measure(int count) throws InterruptedException {
        if (count <= 0) throw new IllegalArgumentException("count must be > 0, was " + count);
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long began = System.nanoTime();
        for (long n = count; ; n *= 2) {
            int rounds = (int) Math.min(Integer.MAX_VALUE, (n + 1) / 2);
            long cpu = os.getProcessCpuTime();
            long start = System.nanoTime();
            run(rounds);
            long elapsed = System.nanoTime() - start;
            cpu = os.getProcessCpuTime() - cpu;
            double done = 2.0 * rounds;
            if (cpu > 0 || System.nanoTime() - began >= LONGEST_NANOS || rounds == Integer.MAX_VALUE) {
                return new Cost(cpu > 0 ? cpu / 1e3 / done : Double.NaN, elapsed / 1e3 / done, (long) done);
            }
        }
    }

    /** Two threads pass the turn {@code rounds} times each way. */
    private static void run(int rounds) throws InterruptedException {
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
        for (Thread t : threads) t.start();
        for (Thread t : threads) t.join();
    }
}

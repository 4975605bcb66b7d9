package io.quotagate.client;

/**
 * The time an {@link AdaptiveLimiter} runs on: refill, Retry-After pauses, increase intervals and
 * maximum waits are all measured on it. The default is {@link #system()}; tests inject a clock they
 * advance by hand, and a simulation may run a clock faster than real time.
 */
public interface LimiterClock {
    /** Nanoseconds from an arbitrary origin, never going backwards. */
    long nanoTime();

    /**
     * How many nanoseconds of this clock pass in one real nanosecond: 1 for real time. The limiter
     * divides a wait by it to know how long to sleep, and multiplies the durations a server states
     * in real seconds (Retry-After, a policy's window) by it.
     */
    default double speed() {
        return 1;
    }

    /** {@link System#nanoTime()}. */
    static LimiterClock system() {
        return System::nanoTime;
    }
}

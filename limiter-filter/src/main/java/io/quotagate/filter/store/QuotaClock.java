package io.quotagate.filter.store;

/**
 * The time source of every bucket, expiry and Retry-After computation. Inject a manual clock in
 * tests to advance time instead of sleeping.
 */
@FunctionalInterface
public interface QuotaClock {
    /** Monotonic nanoseconds, with an arbitrary origin (like {@link System#nanoTime()}). */
    long nanoTime();

    /** The JVM's monotonic clock. */
    static QuotaClock system() {
        return System::nanoTime;
    }
}

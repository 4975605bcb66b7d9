package io.quotagate.filter.store;

/**
 * The time source of every bucket, expiry and Retry-After computation. Inject a manual clock in
 * tests to advance time instead of sleeping.
 */
@FunctionalInterface
public interface QuotaClock {
    /** Monotonic nanoseconds, with an arbitrary origin (like {@link System#nanoTime()}). */
    long nanoTime();

    /**
     * The JVM's monotonic clock ({@link System#nanoTime()}), always the same instance. The local store
     * reads it through a time refreshed once a millisecond while requests flow (see {@code BucketStore#local}).
     */
    static QuotaClock system() {
        return SystemClock.INSTANCE;
    }
}

package io.quotagate.filter.store;

/**
 * {@link QuotaClock#system()}: one instance, so a store can tell the JVM's clock from an injected one
 * and read it through {@link TickingTime} (a manual clock is always read as it is).
 */
enum SystemClock implements QuotaClock {
    INSTANCE;

    @Override
    public long nanoTime() {
        return System.nanoTime();
    }
}

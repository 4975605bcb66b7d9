package io.quotagate.filter.admission;

/**
 * The state of one bandwidth of a tenant's bucket, as published in {@code RateLimit-Policy} and
 * {@code RateLimit} fields.
 *
 * @param name          the bandwidth's name (the policy identifier)
 * @param capacity      the most units the bandwidth holds (the quota, {@code q})
 * @param windowSeconds whole seconds an empty bandwidth needs to be full again, rounded up ({@code w})
 * @param remaining     units available now, 0 when the bucket is in debt ({@code r})
 * @param nanosToFull   nanoseconds until the bandwidth is full again, if nothing consumes meanwhile
 */
public record LimitStatus(String name, long capacity, long windowSeconds, long remaining, long nanosToFull) {
    /** {@link #nanosToFull} in whole seconds, rounded up (0 when full): the {@code RateLimit} field's {@code t}. */
    public long secondsToFull() {
        long whole = nanosToFull / 1_000_000_000L;
        return nanosToFull % 1_000_000_000L == 0 ? whole : whole + 1;
    }
}

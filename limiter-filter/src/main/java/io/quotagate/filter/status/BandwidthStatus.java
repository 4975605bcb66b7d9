package io.quotagate.filter.status;

import io.quotagate.plans.Algorithm;

/**
 * The state of one bandwidth of a tenant's bucket (or of a bucket beside it: per user, a route's own), as
 * published in {@code RateLimit-Policy} and {@code RateLimit} fields.
 *
 * @param name            the policy identifier: the bandwidth's name, or for a bucket beside the tenant's its
 *                        qualified name ({@code per-user.seat}, {@code login.client-address.attempts})
 * @param capacity        the most units the bandwidth holds (the quota, {@code q})
 * @param windowSeconds   whole seconds an empty bandwidth needs to be full again, rounded up ({@code w})
 * @param remaining       units available now, 0 when the bucket is in debt ({@code r})
 * @param nanosToFull     nanoseconds until the bandwidth is full again, if nothing consumes meanwhile
 * @param nanosToNextUnit nanoseconds until the bandwidth holds one unit more than {@code remaining} (for a
 *                        full one: until a unit spent now is back), if nothing consumes meanwhile; an upper
 *                        bound, as the bucket does not report the part of a unit already refilled
 * @param partitionKey    the key of the quota partition the bucket is kept for, published as {@code pk}
 *                        (draft-ietf-httpapi-ratelimit-headers-11 §3.1.4): the tenant id, or
 *                        {@code <tenant>/<user>}; null when none is published (a status that is not a
 *                        response's, or a bucket kept per client address)
 * @param algorithm       how the bandwidth counts ({@code token-bucket}, {@code gcra}, {@code sliding-window});
 *                        null for a calendar quota, a counter per calendar period rather than a bandwidth
 */
public record BandwidthStatus(String name, long capacity, long windowSeconds, long remaining, long nanosToFull,
                          long nanosToNextUnit, String partitionKey, Algorithm algorithm) {

    /** A token bucket's status ({@link Algorithm#TOKEN_BUCKET}). */
    public BandwidthStatus(String name, long capacity, long windowSeconds, long remaining, long nanosToFull,
                       long nanosToNextUnit, String partitionKey) {
        this(name, capacity, windowSeconds, remaining, nanosToFull, nanosToNextUnit, partitionKey, Algorithm.TOKEN_BUCKET);
    }

    /** A token bucket's status without a partition key. */
    public BandwidthStatus(String name, long capacity, long windowSeconds, long remaining, long nanosToFull,
                       long nanosToNextUnit) {
        this(name, capacity, windowSeconds, remaining, nanosToFull, nanosToNextUnit, null);
    }

    /**
     * A token bucket's status whose next unit is taken to come at the bandwidth's average pace
     * ({@code nanosToFull / (capacity − remaining)}), or at once when it is full.
     */
    public BandwidthStatus(String name, long capacity, long windowSeconds, long remaining, long nanosToFull) {
        this(name, capacity, windowSeconds, remaining, nanosToFull,
                capacity - remaining <= 0 ? 0 : -Math.floorDiv(-nanosToFull, capacity - remaining));
    }

    /** {@link #nanosToFull} in whole seconds, rounded up (0 when full). */
    public long secondsToFull() {
        return ceilSeconds(nanosToFull);
    }

    /**
     * {@link #nanosToNextUnit} in whole seconds, rounded up: the {@code RateLimit} field's {@code t}
     * (draft-ietf-httpapi-ratelimit-headers-11 §4.1.2, see "Published mode" in docs/response-contract.md).
     */
    public long secondsToNextUnit() {
        return ceilSeconds(nanosToNextUnit);
    }

    private static long ceilSeconds(long nanos) {
        long whole = nanos / 1_000_000_000L;
        return nanos % 1_000_000_000L == 0 ? whole : whole + 1;
    }
}

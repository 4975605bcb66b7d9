package io.quotagate.filter.redis;

import io.quotagate.filter.store.QuotaBucket;

import java.nio.charset.StandardCharsets;

/**
 * A calendar quota's counter in one period as one key of the store's script ({@link ScriptKey}): taken
 * with the request's buckets in the same script call ({@link LettuceBucketStore#takeAll}). Alone, each
 * operation goes through {@link RedisQuotaCounters} (and its local counters while Redis is unreachable),
 * as {@code on} does; {@link #local()} is this instance's share of it for a request decided locally.
 */
final class ScriptCounter implements QuotaBucket, ScriptKey {
    private static final byte[] NOTHING_SEEN = new byte[0];

    private final RedisQuotaCounters owner;
    /** The counter's key without the store's prefix (as {@link io.quotagate.filter.store.QuotaCounters} names it). */
    private final String counter;
    private final String key;
    private final long limit;
    private final byte[] spec;
    private final QuotaBucket on;
    private final QuotaBucket local;

    /**
     * @param on    the counter on {@code owner}'s own operations (Redis, or local while unreachable)
     * @param local this instance's share of the counter, in the local counters
     */
    ScriptCounter(RedisQuotaCounters owner, String key, long limit, long expiresAtMillis, long nowNanos,
                  long resetNanos, QuotaBucket on, QuotaBucket local) {
        this.owner = owner;
        this.counter = key;
        this.key = owner.key(key);
        this.limit = limit;
        // the wait of a refusal on the calendar's clock (the request's), in whole microseconds rounded up
        long waitMicros = Math.max(1, -Math.floorDiv(nowNanos - resetNanos, 1000));
        this.spec = ("#" + limit + "," + expiresAtMillis + "," + waitMicros).getBytes(StandardCharsets.US_ASCII);
        this.on = on;
        this.local = local;
    }

    /** The counters this counter belongs to. */
    RedisQuotaCounters owner() {
        return owner;
    }

    /** This instance's share of the counter, for a decision taken without Redis. */
    QuotaBucket local() {
        return local;
    }

    @Override
    public String key() {
        return key;
    }

    @Override
    public byte[] spec() {
        return spec;
    }

    /**
     * The counter's floor ({@link RedisQuotaCounters#floor}): the script rebuilds a missing counter at it, so
     * Redis losing its data grants no unit of the period twice.
     */
    @Override
    public byte[] seen() {
        long floor = owner.floor(counter);
        return floor <= 0 ? NOTHING_SEEN : Long.toString(floor).getBytes(StandardCharsets.US_ASCII);
    }

    @Override
    public void noted(long nowMicros, long[] tokens, boolean refund) {
        // the script answers limit - used: for the response's published fields, and the counter's floor
        owner.noted(counter, limit - tokens[0], refund);
    }

    @Override
    public boolean tryTake(long units) {
        return on.tryTake(units);
    }

    /**
     * A calendar quota is not a rate: a request is never delayed into the next period (it would be counted
     * over the limit of the period it was decided in). Refused instead, with a wait past {@code maxWaitNanos}.
     */
    @Override
    public long reserve(long units, long maxWaitNanos) {
        long wait = take(units);
        return wait == 0 || wait > maxWaitNanos ? wait : maxWaitNanos + 1;
    }

    @Override
    public long take(long units) {
        return on.take(units);
    }

    @Override
    public long nanosToWait(long units) {
        return on.nanosToWait(units);
    }

    @Override
    public void refund(long units) {
        on.refund(units);
    }

    @Override
    public void forceTake(long units) {
        on.forceTake(units);
    }

    @Override
    public long available() {
        return on.available();
    }

    @Override
    public long[] availablePerBandwidth() {
        return on.availablePerBandwidth();
    }
}

package io.quotagate.filter.store;

/**
 * One calendar quota's counter in one period, seen as a bucket ({@link QuotaCounters#counter}), so a
 * request's quotas are taken with its buckets in one {@link BucketStore#takeAll}: it holds
 * {@code limit − used} units, refills nothing until its period ends, and a refused request waits until
 * then. Made per request (a quota's period and key change with the calendar).
 */
final class CounterBucket implements QuotaBucket {
    private final QuotaCounters counters;
    private final String key;
    private final long limit;
    private final long nowNanos;
    private final long resetNanos;
    private final long expiresAtMillis;

    CounterBucket(QuotaCounters counters, String key, long limit, long nowNanos, long resetNanos, long expiresAtMillis) {
        this.counters = counters;
        this.key = key;
        this.limit = limit;
        this.nowNanos = nowNanos;
        this.resetNanos = resetNanos;
        this.expiresAtMillis = expiresAtMillis;
    }

    @Override
    public boolean tryTake(long units) {
        return counters.tryAdd(key, units, limit, nowNanos / 1_000_000, expiresAtMillis) >= 0;
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
        return tryTake(units) ? 0 : refused(units);
    }

    @Override
    public long nanosToWait(long units) {
        return counters.used(key) + units <= limit ? 0 : refused(units);
    }

    /**
     * The wait of a refused request: until the period ends; never, for more than the limit. A limit of 0
     * (an instance's share of a quota with nothing left, during an outage) waits until the period ends.
     */
    private long refused(long units) {
        return units > limit && limit > 0 ? Long.MAX_VALUE : Math.max(1, resetNanos - nowNanos);
    }

    @Override
    public void refund(long units) {
        counters.add(key, -units, nowNanos / 1_000_000, expiresAtMillis);
    }

    @Override
    public void forceTake(long units) {
        counters.add(key, units, nowNanos / 1_000_000, expiresAtMillis);
    }

    @Override
    public long available() {
        return limit - counters.used(key);
    }

    @Override
    public long[] availablePerBandwidth() {
        return new long[]{available()};
    }
}

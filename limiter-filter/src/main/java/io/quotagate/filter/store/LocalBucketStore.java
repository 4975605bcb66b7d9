package io.quotagate.filter.store;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.BucketListener;
import io.github.bucket4j.MathType;
import io.github.bucket4j.TimeMeter;
import io.github.bucket4j.local.LocalBucket;
import io.github.bucket4j.local.SynchronizedBucket;
import io.quotagate.filter.admission.QuotaClock;

import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * {@link BucketStore#local}: assigned tenants' buckets in one bounded Caffeine cache, guests' (unknown
 * tenants, anonymous clients) in another, the global bucket held for ever. A flood of made-up ids
 * fills and churns only the guest table; Caffeine's frequency-aware admission also keeps a busy guest
 * from being pushed out by one-off ids.
 */
final class LocalBucketStore implements BucketStore {

    private final Cache<String, LocalBucket> tenants;
    private final Cache<String, LocalBucket> guests;
    private final ConcurrentMap<String, Bucket> globals = new ConcurrentHashMap<>();
    private final TimeMeter timeMeter;

    LocalBucketStore(int maxTracked, QuotaClock clock) {
        if (maxTracked <= 0) throw new IllegalArgumentException("maxTracked must be > 0, was " + maxTracked);
        Objects.requireNonNull(clock, "clock");
        this.timeMeter = new TimeMeter() {
            @Override
            public long currentTimeNanos() {
                return clock.nanoTime();
            }

            @Override
            public boolean isWallClockBased() {
                return false;
            }
        };
        this.tenants = table(maxTracked, clock);
        this.guests = table(maxTracked, clock);
    }

    private static Cache<String, LocalBucket> table(int maxTracked, QuotaClock clock) {
        return Caffeine.newBuilder()
                .maximumSize(maxTracked)
                .ticker(clock::nanoTime)
                // maintenance (expiry, eviction) runs on the calling thread, amortised over reads:
                // the default hands it to the common pool, and waking a pool thread (unpark) cost
                // far more per request than the work itself (measured in the bench)
                .executor(Runnable::run)
                // idle time is counted from the last use: by then the bucket may be empty (or in debt),
                // and after idleNanos more it is full again, exactly like a new one
                .expireAfter(new Expiry<String, LocalBucket>() {
                    @Override
                    public long expireAfterCreate(String key, LocalBucket b, long now) {
                        return idleNanos(b);
                    }

                    @Override
                    public long expireAfterUpdate(String key, LocalBucket b, long now, long remaining) {
                        return idleNanos(b);
                    }

                    @Override
                    public long expireAfterRead(String key, LocalBucket b, long now, long remaining) {
                        // a read is followed by at most a take, which can empty the bucket but never
                        // put it in debt (debt comes only through changed(), an update): the longer of
                        // what was left and a full refill suffices, without locking the bucket
                        return Math.max(remaining, nanosToFill(b.getConfiguration()));
                    }
                })
                .build();
    }

    @Override
    public Bucket bucket(BucketKind kind, String id, BucketConfiguration configuration) {
        if (kind == BucketKind.GLOBAL) return globals.computeIfAbsent(id, k -> newBucket(configuration));
        Cache<String, LocalBucket> table = kind == BucketKind.GUEST ? guests : tenants;
        LocalBucket b = table.getIfPresent(id);
        if (b == null) b = table.get(id, k -> newBucket(configuration));
        return b;
    }

    @Override
    public void changed(BucketKind kind, String id) {
        if (kind == BucketKind.GLOBAL) return;
        // an identity compute is an update for Caffeine: expireAfterUpdate reads the debt
        (kind == BucketKind.GUEST ? guests : tenants).asMap().computeIfPresent(id, (k, b) -> b);
    }

    /** Estimated number of assigned tenants' buckets held (for tests and metrics). */
    long tenantCount() {
        tenants.cleanUp();
        return tenants.estimatedSize();
    }

    /** Estimated number of guest buckets held (for tests and metrics). */
    long guestCount() {
        guests.cleanUp();
        return guests.estimatedSize();
    }

    /**
     * A bucket carrying this very configuration instance (admission compares by identity to spot a
     * change of limits). Synchronized: a take mutates the state in place; the default lock-free
     * bucket copies it on every take (64 bytes of garbage per request) to win races that a tenant's
     * own bucket rarely has.
     */
    private LocalBucket newBucket(BucketConfiguration configuration) {
        return new SynchronizedBucket(configuration, MathType.INTEGER_64_BITS, timeMeter, BucketListener.NOPE);
    }

    /**
     * How long the bucket may stay idle before dropping it loses nothing: the time an empty bucket of
     * its current configuration needs to be full, plus the time to pay back a debt (a reconciled
     * request that cost more than it reserved). Measured from an access, when consumption can only
     * have taken it down to empty, never below: only reconciliation creates debt, and it reads the
     * bucket through the store again afterwards.
     */
    static long idleNanos(LocalBucket bucket) {
        BucketConfiguration configuration = bucket.getConfiguration();
        long nanos = nanosToFill(configuration);
        long available = bucket.getAvailableTokens();
        if (available >= 0) return nanos;
        double slowest = 0;
        for (Bandwidth b : configuration.getBandwidths()) {
            slowest = Math.max(slowest, (double) b.getRefillPeriodNanos() / b.getRefillTokens());
        }
        double debt = -(double) available * slowest;
        return debt + nanos >= Long.MAX_VALUE ? Long.MAX_VALUE : nanos + (long) Math.ceil(debt);
    }

    /** The longest time any bandwidth of an empty bucket needs to be full again. */
    static long nanosToFill(BucketConfiguration configuration) {
        long max = 0;
        for (Bandwidth b : configuration.getBandwidths()) {
            double nanos = (double) b.getCapacity() * b.getRefillPeriodNanos() / b.getRefillTokens();
            max = Math.max(max, nanos >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) Math.ceil(nanos));
        }
        return max;
    }
}

package io.quotagate.filter.store;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.TimeMeter;
import io.github.bucket4j.local.SynchronizationStrategy;
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

    /** A bucket and how long it may sit idle before dropping it loses nothing. */
    private record Entry(Bucket bucket, long nanosToFill) {
    }

    private final Cache<String, Entry> tenants;
    private final Cache<String, Entry> guests;
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

    private static Cache<String, Entry> table(int maxTracked, QuotaClock clock) {
        return Caffeine.newBuilder()
                .maximumSize(maxTracked)
                .ticker(clock::nanoTime)
                // idle time is counted from the last use: by then the bucket may be empty, and after
                // nanosToFill more it is full again, exactly like a new one
                .expireAfter(new Expiry<String, Entry>() {
                    @Override
                    public long expireAfterCreate(String key, Entry e, long now) {
                        return e.nanosToFill();
                    }

                    @Override
                    public long expireAfterUpdate(String key, Entry e, long now, long remaining) {
                        return e.nanosToFill();
                    }

                    @Override
                    public long expireAfterRead(String key, Entry e, long now, long remaining) {
                        return e.nanosToFill();
                    }
                })
                .build();
    }

    @Override
    public Bucket bucket(BucketKind kind, String id, BucketConfiguration configuration) {
        if (kind == BucketKind.GLOBAL) return globals.computeIfAbsent(id, k -> newBucket(configuration));
        Cache<String, Entry> table = kind == BucketKind.GUEST ? guests : tenants;
        Entry e = table.getIfPresent(id);
        if (e == null) e = table.get(id, k -> new Entry(newBucket(configuration), nanosToFill(configuration)));
        return e.bucket();
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

    private Bucket newBucket(BucketConfiguration configuration) {
        // SYNCHRONIZED: a take mutates the state in place; the default LOCK_FREE copies it on every take
        // (64 bytes of garbage per request) to win races that a tenant's own bucket rarely has
        var builder = Bucket.builder().withCustomTimePrecision(timeMeter)
                .withSynchronizationStrategy(SynchronizationStrategy.SYNCHRONIZED);
        for (Bandwidth b : configuration.getBandwidths()) builder.addLimit(b);
        return builder.build();
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

package io.quotagate.filter.redis;

import io.quotagate.filter.store.BucketLimits;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.store.QuotaBucket;
import io.quotagate.plans.Algorithm;
import io.quotagate.plans.Bandwidth;

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntSupplier;

/**
 * This instance's share of each quota, for the moments Redis cannot decide: local buckets holding
 * {@code 1 / instanceCount} of every bandwidth, so the instances together admit about one quota.
 */
final class LocalShares {
    /** One bucket's share for {@code instances} instances: its local id and limits. */
    record Share(int instances, String id, BucketLimits limits) {
    }

    private final BucketStore local;
    private final IntSupplier instances;

    LocalShares(BucketStore local, IntSupplier instances) {
        this.local = local;
        this.instances = instances;
    }

    /** The local store the shares live in. */
    BucketStore local() {
        return local;
    }

    /** The local bucket holding this instance's share of {@code b}. */
    QuotaBucket of(FailoverBucket b) {
        int n = instances.getAsInt();
        Share s = b.share();
        if (s == null || s.instances() != n) {
            // the count is part of the id: a change of count gets a bucket of the new size
            s = new Share(n, b.id() + "/" + n, share(b.limits(), n));
            b.share(s);
        }
        return local.bucket(b.kind(), s.id(), s.limits());
    }

    /**
     * Every bandwidth divided by the instance count, keeping its algorithm: capacity rounded down (at least 1),
     * refill rate exact; a sliding window's capacity divided in the same period.
     */
    static BucketLimits share(BucketLimits limits, int instances) {
        if (instances == 1) return limits;
        List<Bandwidth> shares = new ArrayList<>();
        for (Bandwidth b : limits.bandwidths()) {
            // tokens per (period x n) is exactly the n-th part of the rate, with no rounding
            long capacity = BucketStore.perInstanceShare(b.capacity(), instances);
            if (b.algorithm() == Algorithm.SLIDING_WINDOW) {
                // a window's n-th part: capacity / n in the same period (a window's refill is its capacity)
                shares.add(new Bandwidth(b.name(), capacity, capacity, b.period(), b.algorithm()));
                continue;
            }
            shares.add(new Bandwidth(b.name(), capacity, b.refill(), b.period().multipliedBy(instances), b.algorithm()));
        }
        return BucketLimits.of(shares);
    }
}

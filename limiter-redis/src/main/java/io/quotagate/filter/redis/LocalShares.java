package io.quotagate.filter.redis;

import io.quotagate.filter.store.BucketLimits;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.store.QuotaBucket;
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

    /** Every bandwidth divided by the instance count: capacity rounded down (at least 1), refill rate exact. */
    static BucketLimits share(BucketLimits limits, int instances) {
        if (instances == 1) return limits;
        List<Bandwidth> shares = new ArrayList<>();
        for (Bandwidth b : limits.bandwidths()) {
            // tokens per (period x n) is exactly the n-th part of the rate, with no rounding
            shares.add(new Bandwidth(b.name(), BucketStore.perInstanceShare(b.capacity(), instances), b.refill(),
                    b.period().multipliedBy(instances)));
        }
        return BucketLimits.of(shares);
    }
}

package io.quotagate.filter.metrics;

import io.quotagate.filter.admission.Reason;
import io.quotagate.filter.admission.ConcurrencyView;
import io.quotagate.filter.store.BucketStore;

/**
 * What a quota filter exposes for monitoring; {@code QuotaFilter} implements it, so
 * {@code new QuotaMeterBinder(filter)} binds everything.
 */
public interface QuotaSource {
    /** Request counters by tenant (bounded), plan, route, outcome and reason; queue waits. */
    RequestStatistics statistics();

    /** In-flight and queued counts per concurrency group and tenant. */
    ConcurrencyView concurrency();

    /** The capacity of the global quota in force (its smallest bandwidth), or 0 if there is none. */
    long globalQuotaCapacity();

    /** Units available now in the global quota (the smallest over its bandwidths), or 0 if there is none. */
    long globalQuotaAvailable();

    /** Requests that shadow mode let through although the limits would have refused them for {@code reason}. */
    long shadowRejections(Reason reason);

    /**
     * Where the buckets live; a shared store (one with a {@link BucketStore#health()}) adds the
     * {@code quotagate.store.*} meters. Null: none to report.
     */
    default BucketStore store() {
        return null;
    }
}

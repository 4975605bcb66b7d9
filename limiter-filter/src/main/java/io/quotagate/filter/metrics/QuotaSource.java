package io.quotagate.filter.metrics;

import io.quotagate.filter.admission.Admission;
import io.quotagate.filter.admission.ConcurrencyView;
import io.quotagate.filter.store.BucketStore;

/**
 * What a quota filter exposes for monitoring; {@code QuotaFilter} implements it, so
 * {@code new QuotaMeterBinder(filter)} binds everything.
 */
public interface QuotaSource {
    /** Request counters by tenant (bounded), plan, route, outcome and reason; queue waits. */
    RequestStatistics statistics();

    /** The admission core: global quota capacity and available tokens. */
    Admission admission();

    /** In-flight and queued counts per concurrency group and tenant. */
    ConcurrencyView concurrency();

    /**
     * Where the buckets live; a shared store (one with a {@link BucketStore#health()}) adds the
     * {@code quotagate.store.*} meters. Null: none to report.
     */
    default BucketStore store() {
        return null;
    }
}

package io.quotagate.filter.internal.admission;

import io.quotagate.filter.store.BucketKind;

/**
 * Who a request is charged to, as the gate placed it.
 *
 * @param tenant the tenant id, or null for an anonymous client (keyed by its address)
 * @param key    the key of its bucket and concurrency slots: the tenant id, or {@code @<address>}
 * @param kind   {@link BucketKind#TENANT} for an assigned tenant, {@link BucketKind#GUEST} for an
 *               unknown tenant or anonymous client; null if the request was refused before it was placed
 * @param plan   the plan that sizes its buckets; null if the request was refused before it was placed
 */
public record Caller(String tenant, String key, BucketKind kind, String plan) {

    /** True for a client without a tenant, under {@code unresolved: anonymous}. */
    public boolean anonymous() {
        return tenant == null;
    }

    /** True if an assignment or the directory knows the tenant (metrics name such tenants first). */
    public boolean known() {
        return kind == BucketKind.TENANT;
    }
}

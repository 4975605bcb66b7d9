package io.quotagate.filter.internal.signals;

import io.quotagate.filter.internal.admission.QuotaPeriod;
import io.quotagate.filter.status.BandwidthStatus;

import java.util.List;
import java.util.Optional;

/**
 * What the signals thread reads of the running filter, off the request path: the state of a
 * tenant's buckets, of the global quota and of the store, each under the limits in force.
 */
public interface SignalProbe {
    /** The state of each bandwidth of a tenant's bucket, in plan order (may read the store). */
    List<BandwidthStatus> tenantLimits(String tenant);

    /**
     * The tenant's calendar quotas in their current periods, in plan order, the units used as this instance
     * last saw them (on Redis no round trip for a counter it counted itself). Default: none.
     */
    default List<QuotaPeriod> tenantQuotas(String tenant) {
        return List.of();
    }

    /**
     * Claims a calendar quota event once for every instance sharing the store (see
     * {@code QuotaCounters#claim}): true if this instance is the one to raise it. Default: always.
     *
     * @throws RuntimeException if the store cannot be asked now
     */
    default boolean claim(String key, long expiresAtMillis) {
        return true;
    }

    /** The global quota's capacity in force (smallest bandwidth), 0 if there is none. */
    long globalCapacity();

    /** Units available now in the global quota, 0 if there is none. */
    long globalAvailable();

    /** Whether the shared store answers; empty for a local store. */
    Optional<Boolean> storeAvailable();
}

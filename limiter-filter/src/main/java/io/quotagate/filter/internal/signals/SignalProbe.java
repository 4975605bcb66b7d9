package io.quotagate.filter.internal.signals;

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

    /** The global quota's capacity in force (smallest bandwidth), 0 if there is none. */
    long globalCapacity();

    /** Units available now in the global quota, 0 if there is none. */
    long globalAvailable();

    /** Whether the shared store answers; empty for a local store. */
    Optional<Boolean> storeAvailable();
}

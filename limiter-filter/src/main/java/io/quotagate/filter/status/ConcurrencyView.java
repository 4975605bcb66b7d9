package io.quotagate.filter.status;

import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;

/**
 * A read-only view of the concurrency groups: how many requests are in flight and how many wait,
 * per group and per tenant. Every read is a moment's snapshot, cheap and lock-free for fail-fast
 * groups, so gauges may poll it. Unknown groups and idle tenants read as 0.
 */
public interface ConcurrencyView {
    /** The names of all concurrency groups (every {@code group:} of the routes). */
    Set<String> groups();

    /** Requests of the group in flight, all tenants together. */
    int inflight(String group);

    /** Requests of the group in flight for one tenant key. */
    int inflight(String group, String tenant);

    /** Requests waiting in the group's queue, all tenants together (0 for a fail-fast group). */
    int queued(String group);

    /** Requests of one tenant key waiting in the group's queue. */
    int queued(String group, String tenant);

    /** Tenant key → requests in flight, for the tenants with at least one; a copy. */
    Map<String, Integer> inflightByTenant(String group);

    /** Tenant key → requests waiting, for the tenants with at least one; a copy. */
    Map<String, Integer> queuedByTenant(String group);

    /**
     * The group's moving average of completed request durations in nanoseconds (the basis of a
     * concurrency rejection's {@code Retry-After}), or 0 before the first request completed.
     */
    long averageDurationNanos(String group);

    /**
     * The limit of requests in flight this instance applies to an adaptive group now
     * ({@code groups.<group>.adaptive}: it moves with the group's request durations); empty for a
     * group whose cap across tenants is fixed or absent, and for an unknown group.
     */
    default OptionalInt adaptiveLimit(String group) {
        return OptionalInt.empty();
    }
}

package io.quotagate.plans;

import java.util.List;

/**
 * The optional quota shared by every tenant: one bucket for the whole API (the "hidden quota").
 *
 * @param limits the bandwidths of the shared bucket, at least one
 */
public record GlobalQuota(List<Bandwidth> limits) {
    public GlobalQuota {
        limits = List.copyOf(limits);
        if (limits.isEmpty()) throw new IllegalArgumentException("a global quota needs at least one limit");
    }
}

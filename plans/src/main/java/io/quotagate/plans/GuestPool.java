package io.quotagate.plans;

import java.util.List;
import java.util.Map;

/**
 * What every guest shares ({@code tenants.guests}): each tenant that no assignment or directory
 * knows, and each anonymous client, is charged here as well as in its own bucket and slots, so
 * together guests never take more than this, however many ids they make up.
 *
 * @param limits      the pool's bandwidths; empty for no shared bucket
 * @param concurrency group → the most requests of that group all guests together may have in flight
 */
public record GuestPool(List<Bandwidth> limits, Map<String, Integer> concurrency) {
    /** No pool: guests are limited only by their own buckets and caps and the global quota. */
    public static final GuestPool NONE = new GuestPool(List.of(), Map.of());

    public GuestPool {
        limits = List.copyOf(limits);
        concurrency = Map.copyOf(concurrency);
        concurrency.forEach((group, cap) -> {
            if (cap <= 0) throw new IllegalArgumentException("guest cap of group " + group + " must be > 0, was " + cap);
        });
    }
}

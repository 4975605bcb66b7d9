package io.quotagate.filter.internal.metrics;

import java.util.Arrays;

/**
 * The ids sampled at least once since the last {@link #clear}, as a Bloom filter (two bits per id):
 * the "doorkeeper" of TinyLFU (Einziger, Friedman, Manes, "TinyLFU: a highly efficient cache
 * admission policy", 2017) in front of the {@link HeavyHitters} table. An id's first sample only
 * marks it here; from its second on, it enters the table. Under a flood of ids that each appear once
 * or twice, as made-up tenant ids do, most samples then stop here, at two bits, instead of evicting
 * an entry of the table (a map removal, a map insertion and a heap reordering), and the table keeps
 * its entries for ids that come back.
 *
 * <p>Only ever too generous: a false positive (about 5 % at the sizing below) lets an id in at its
 * first sample, as without a doorkeeper; an id never marked is never let in. Not thread-safe:
 * {@link TenantNames} calls it under the statistics' lock.
 */
final class Doorkeeper {
    private final int[] bits;
    private final int mask;

    /** @param ids most ids marked between two {@link #clear}s (8 bits each: about 5 % false positives) */
    Doorkeeper(int ids) {
        if (ids < 1) throw new IllegalArgumentException("ids must be >= 1, was " + ids);
        long wanted = Math.max(1024L, 8L * ids);
        int size = (int) Math.min(1 << 30, Long.highestOneBit(wanted - 1) << 1);
        bits = new int[size >>> 5];
        mask = size - 1;
    }

    /** True if {@code id} was marked since the last clear; otherwise marks it and answers false. */
    boolean seenBefore(String id) {
        int h = mix(id.hashCode());
        int a = h & mask;
        int b = mix(h ^ 0x9E3779B9) & mask;
        if (isSet(a) && isSet(b)) return true;
        set(a);
        set(b);
        return false;
    }

    /** Marks {@code id} (an id the table holds: it must not be stopped at the door after a clear). */
    void mark(String id) {
        seenBefore(id);
    }

    /** Forgets every id. */
    void clear() {
        Arrays.fill(bits, 0);
    }

    private boolean isSet(int i) {
        return (bits[i >>> 5] & (1 << i)) != 0;
    }

    private void set(int i) {
        bits[i >>> 5] |= 1 << i;
    }

    /** MurmurHash3's finalizer: every bit of the input moves about half of the output's. */
    private static int mix(int h) {
        h ^= h >>> 16;
        h *= 0x85EBCA6B;
        h ^= h >>> 13;
        h *= 0xC2B2AE35;
        return h ^ (h >>> 16);
    }
}

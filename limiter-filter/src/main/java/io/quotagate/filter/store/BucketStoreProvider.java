package io.quotagate.filter.store;

import io.quotagate.plans.InvalidPlansException;
import io.quotagate.plans.StoreSpec;

import java.util.ServiceLoader;
import java.util.Set;

/**
 * A kind of shared store, found through {@link ServiceLoader} by the type name the plans file gives
 * ({@code store.type: redis}): a module that implements one (such as {@code io.quotagate:limiter-redis})
 * lists its provider in {@code META-INF/services/io.quotagate.filter.store.BucketStoreProvider}, so
 * limiter-filter never depends on the backend's client library, and the plans module knows no backend.
 * The provider owns its options: which there are, what they must hold, and what they mean.
 * {@link BucketStore#check} and {@link BucketStore#open} look providers up.
 */
public interface BucketStoreProvider {

    /** The {@code store.type} this provider opens ({@code redis}). */
    String type();

    /** The options a store of this type may have under {@code store:}, besides {@code type}. */
    Set<String> options();

    /**
     * Refuses a bad option value (wrong kind, bad format, a missing or contradictory option) without
     * connecting anywhere. Called with a spec whose options are all in {@link #options()}.
     *
     * @throws InvalidPlansException naming the file, line and field ({@link StoreSpec#invalid})
     */
    void check(StoreSpec spec);

    /**
     * Opens a store for a spec {@link #check checked} before. Must not fail because the backend is down
     * (the store then answers from local buckets until it is back).
     *
     * @param spec       a spec of {@link #type()}
     * @param maxTracked the most buckets (per table) the store keeps in memory
     * @param clock      time of the store's local buckets
     * @return the store; {@link AutoCloseable} if it holds threads or connections
     */
    BucketStore open(StoreSpec spec, int maxTracked, QuotaClock clock);
}

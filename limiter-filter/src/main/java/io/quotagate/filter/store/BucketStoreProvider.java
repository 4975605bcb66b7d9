package io.quotagate.filter.store;

import io.quotagate.filter.core.QuotaClock;
import io.quotagate.plans.StoreSettings;

import java.util.ServiceLoader;

/**
 * A kind of shared store, found through {@link ServiceLoader} when the plans file names its type
 * ({@code store.type: redis}): a module that implements one (such as {@code io.quotagate:limiter-redis})
 * lists its provider in {@code META-INF/services/io.quotagate.filter.store.BucketStoreProvider}, so
 * limiter-filter never depends on the backend's client library. {@link BucketStore#open} looks them up.
 */
public interface BucketStoreProvider {

    /** The {@code store.type} this provider opens. */
    StoreSettings.Type type();

    /**
     * Opens a store for these settings. Must not fail because the backend is down (the store then
     * answers from local buckets until it is back); fails only for settings it cannot use.
     *
     * @param settings   settings of {@link #type()}
     * @param maxTracked the most buckets (per table) the store keeps in memory
     * @param clock      time of the store's local buckets
     * @return the store; {@link AutoCloseable} if it holds threads or connections
     */
    BucketStore open(StoreSettings settings, int maxTracked, QuotaClock clock);
}

package io.quotagate.filter.redis;

import io.quotagate.filter.core.QuotaClock;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.store.BucketStoreProvider;
import io.quotagate.plans.StoreSettings;

import java.time.Clock;

/**
 * Opens a {@link RedisStore} for {@code store.type: redis}; listed in this module's
 * {@code META-INF/services}, so limiter-filter finds it when {@code io.quotagate:limiter-redis} is on
 * the class path.
 */
public final class RedisStoreProvider implements BucketStoreProvider {

    /** Called by {@link java.util.ServiceLoader}. */
    public RedisStoreProvider() {
    }

    @Override
    public StoreSettings.Type type() {
        return StoreSettings.Type.REDIS;
    }

    /** A store on the system wall clock (Redis buckets) and {@code clock} (local shares). */
    @Override
    public BucketStore open(StoreSettings settings, int maxTracked, QuotaClock clock) {
        return RedisStore.connect(settings, maxTracked, Clock.systemUTC(), clock);
    }
}

package io.quotagate.filter.redis;

import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.store.BucketStoreProvider;
import io.quotagate.filter.store.QuotaClock;
import io.quotagate.plans.StoreSpec;

import java.time.Clock;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Opens a {@link RedisStore} for {@code store.type: redis}, and owns that type's options
 * ({@link RedisSettings#of(StoreSpec)} reads and checks them); listed in this module's
 * {@code META-INF/services}, so limiter-filter finds it when {@code io.quotagate:limiter-redis} is on
 * the class path.
 */
public final class RedisStoreProvider implements BucketStoreProvider {

    private static final Set<String> OPTIONS = Stream.concat(RedisSettings.OPTIONS.stream(),
            RedisSettings.REMOVED_OPTIONS.keySet().stream()).collect(Collectors.toUnmodifiableSet());

    /** Called by {@link java.util.ServiceLoader}. */
    public RedisStoreProvider() {
    }

    /** {@value RedisSettings#TYPE}. */
    @Override
    public String type() {
        return RedisSettings.TYPE;
    }

    /**
     * {@link RedisSettings#OPTIONS}, and the removed ones ({@code batching}), so that {@link #check} refuses
     * those with their reason and what to do instead, not as unknown keys.
     */
    @Override
    public Set<String> options() {
        return OPTIONS;
    }

    @Override
    public void check(StoreSpec spec) {
        RedisSettings.of(spec);
    }

    /** A store on the system wall clock (Redis buckets) and {@code clock} (local shares). */
    @Override
    public BucketStore open(StoreSpec spec, int maxTracked, QuotaClock clock) {
        return RedisStore.connect(RedisSettings.of(spec), maxTracked, Clock.systemUTC(), clock);
    }
}

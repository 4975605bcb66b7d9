package io.quotagate.example.readme;

// README snippet
import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.redis.RedisSettings;
import io.quotagate.filter.redis.RedisStore;
// README snippet end
import io.quotagate.plans.Plans;

/** docs/redis.md: compiled here, held verbatim by that page. */
class RedisStoreSnippet {
    void install(Plans plans) {
        // README snippet
        RedisStore store = RedisStore.connect(RedisSettings.of("redis://cache.internal:6379").withPrefix("shop-api"),
                plans.tenants().maxTracked());
        QuotaFilter filter = QuotaFilter.builder().plans(plans).store(store).build();
        // README snippet end
    }
}

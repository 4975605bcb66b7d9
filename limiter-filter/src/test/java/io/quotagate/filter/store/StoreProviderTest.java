package io.quotagate.filter.store;

import io.quotagate.filter.servlet.QuotaFilter;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.PlansFile;
import io.quotagate.plans.StoreSettings;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Shared stores come from their own modules; limiter-filter's tests run without limiter-redis. */
class StoreProviderTest {

    @Test
    void aLocalStoreNeedsNoProvider() {
        BucketStore store = BucketStore.open(StoreSettings.local(), 10, new ManualClock());
        assertThat(store.instanceCount()).isOne();
        assertThat(store.health()).isEmpty();
    }

    @Test
    void aRedisStoreWithoutLimiterRedisOnTheClassPathNamesTheMissingArtifact() {
        assertThatThrownBy(() -> BucketStore.open(StoreSettings.redis("redis://127.0.0.1:6379"), 10, new ManualClock()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("store.type: redis needs io.quotagate:limiter-redis on the class path");
    }

    @Test
    void aFilterWhosePlansFileSaysRedisFailsAtStartWithTheSameMessage() {
        var builder = QuotaFilter.builder().plans(PlansFile.parse("redis.yml", """
                plans: { free: { limits: [ { capacity: 10, refill: 10, period: 1s } ] } }
                tenants: { default-plan: free }
                store: { type: redis, uri: "redis://127.0.0.1:6379" }
                """));
        assertThatThrownBy(builder::build).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("io.quotagate:limiter-redis");
    }
}

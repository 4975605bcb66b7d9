package io.quotagate.spring;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.store.BucketLimits;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.store.QuotaBucket;
import io.quotagate.filter.store.QuotaClock;
import io.quotagate.filter.store.StoreHealth;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.Status;

import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

class QuotagateHealthIndicatorTest {

    @Test
    void aLocalStoreIsUp() {
        QuotaFilter filter = QuotaFilter.builder().plans(PlansFile.load("classpath:runner-plans.yml")).build();
        Health health = new QuotagateHealthIndicator(filter.control()).health();
        assertThat(health.getStatus()).isEqualTo(Status.UP);
        assertThat(health.getDetails()).containsEntry("store", "local");
    }

    @Test
    void aSharedStoreThatIsDownStaysUpWithFallbackUnderOnFailureOpen() {
        QuotaFilter filter = QuotaFilter.builder().plans(PlansFile.load("classpath:runner-plans.yml"))
                .store(new SharedStore(false)).build();
        Health health = new QuotagateHealthIndicator(filter.control()).health();
        assertThat(health.getStatus()).isEqualTo(Status.UP);
        assertThat(health.getDetails()).containsEntry("store", "shared").containsEntry("available", false)
                .containsEntry("fallback", true).containsEntry("instances", 3)
                .containsEntry("fallbackDecisions", 42L).containsEntry("outages", 2L);
    }

    @Test
    void aSharedStoreThatAnswersIsUpWithoutFallback() {
        QuotaFilter filter = QuotaFilter.builder().plans(PlansFile.load("classpath:runner-plans.yml"))
                .store(new SharedStore(true)).build();
        Health health = new QuotagateHealthIndicator(filter.control()).health();
        assertThat(health.getStatus()).isEqualTo(Status.UP);
        assertThat(health.getDetails()).containsEntry("available", true).containsEntry("fallback", false);
    }

    @Test
    void aSharedStoreThatIsDownIsDownUnderOnFailureClosed() {
        // on-failure: closed answers limited requests with 503 while the store is down: not a serving instance
        QuotaFilter filter = QuotaFilter.builder().plans(PlansFile.load("classpath:closed-plans.yml"))
                .store(new SharedStore(false)).build();
        Health health = new QuotagateHealthIndicator(filter.control()).health();
        assertThat(health.getStatus()).isEqualTo(Status.DOWN);
        assertThat(health.getDetails()).containsEntry("fallback", true);
    }

    /** A local store that reports itself as shared, the way the Redis store does. */
    private record SharedStore(boolean available) implements BucketStore, StoreHealth {
        private static final BucketStore LOCAL = BucketStore.local(1000, QuotaClock.system());

        @Override
        public QuotaBucket bucket(BucketKind kind, String id, BucketLimits limits) {
            return LOCAL.bucket(kind, id, limits);
        }

        @Override
        public Optional<StoreHealth> health() {
            return Optional.of(this);
        }

        @Override
        public long outages() {
            return 2;
        }

        @Override
        public long fallbackDecisions() {
            return 42;
        }

        @Override
        public int instanceCount() {
            return 3;
        }
    }
}

package io.quotagate.filter.store;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.InvalidPlansException;
import io.quotagate.plans.PlansFile;
import io.quotagate.plans.StoreSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Shared stores come from their own modules, found by the type name the plans file gives; limiter-filter's
 * tests run without limiter-redis.
 */
class StoreProviderTest {
    private static final String PLANS = """
            plans: { free: { limits: [ { capacity: 10, refill: 10, period: 1s } ] } }
            tenants: { default-plan: free }
            """;

    @TempDir
    Path dir;

    @Test
    void aLocalStoreNeedsNoProvider() {
        BucketStore store = BucketStore.open(StoreSpec.local(), 10, new ManualClock());
        assertThat(store.instanceCount()).isOne();
        assertThat(store.health()).isEmpty();
    }

    @Test
    void aRedisStoreWithoutLimiterRedisOnTheClassPathNamesTheMissingArtifact() {
        StoreSpec redis = StoreSpec.of("redis", Map.of("uri", "redis://127.0.0.1:6379"));
        assertThatThrownBy(() -> BucketStore.open(redis, 10, new ManualClock()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("store.type: redis needs io.quotagate:limiter-redis on the class path");
        assertThatThrownBy(() -> BucketStore.check(redis)).isInstanceOf(IllegalStateException.class)
                .hasMessage("store.type: redis needs io.quotagate:limiter-redis on the class path");
    }

    @Test
    void aFilterWhosePlansFileSaysRedisFailsAtStartWithTheSameMessageAndTheLine() {
        var builder = QuotaFilter.builder().plans(PlansFile.parse("redis.yml", PLANS
                + "store: { type: redis, uri: \"redis://127.0.0.1:6379\" }\n"));
        assertThatThrownBy(builder::build).isInstanceOf(IllegalStateException.class)
                .hasMessage("redis.yml:3: store.type: redis needs io.quotagate:limiter-redis on the class path");
    }

    @Test
    void aTypeNoModuleProvidesNamesTheArtifactItWouldNeed() {
        var builder = QuotaFilter.builder().plans(PlansFile.parse("bad.yml", PLANS + "store:\n  type: memcached\n"));
        assertThatThrownBy(builder::build).isInstanceOf(IllegalStateException.class)
                .hasMessage("bad.yml:4: store.type: memcached needs io.quotagate:limiter-memcached on the class path");
    }

    @Test
    void aLocalStoreTakesNoOtherKey() {
        var builder = QuotaFilter.builder().plans(PlansFile.parse("bad.yml", PLANS
                + "store:\n  type: local\n  uri: redis://h:6379\n"));
        assertThatThrownBy(builder::build).isInstanceOfSatisfying(InvalidPlansException.class, e -> {
            assertThat(e.line()).isEqualTo(5);
            assertThat(e.field()).isEqualTo("store.uri");
            assertThat(e.reason()).isEqualTo("unknown key, a store of type: local takes no other key");
        });
    }

    @Test
    void aReloadedFileWhoseStoreItsTypeRefusesChangesNothing() throws Exception {
        Path f = Files.writeString(dir.resolve("plans.yml"), PLANS);
        QuotaFilter filter = QuotaFilter.builder().plansFile(f).build();
        Files.writeString(f, PLANS.replace("capacity: 10", "capacity: 20") + "store: { type: local, prefix: shop }\n");
        assertThatThrownBy(() -> filter.control().reload()).isInstanceOf(InvalidPlansException.class)
                .hasMessageStartingWith(f + ":3: store.prefix: ");
        assertThat(filter.control().plans().plan("free").orElseThrow().limits().get(0).capacity()).isEqualTo(10);
        filter.destroy();
    }
}

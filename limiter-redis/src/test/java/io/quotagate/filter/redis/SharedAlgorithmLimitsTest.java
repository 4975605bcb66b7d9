package io.quotagate.filter.redis;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.RedisServer;
import io.quotagate.plans.Algorithm;
import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import io.quotagate.tenant.TenantContract;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Each limit's algorithm is part of the shared limits (record format 4): what one instance publishes (its file, a
 * runtime change of a plan or a tenant) the other enforces with the same algorithms, and a file of token buckets
 * keeps the record in its older format. Two filters on one Redis prefix of their own.
 */
class SharedAlgorithmLimitsTest {
    private static final Plans TOKEN_BUCKETS = PlansFile.parse("buckets.yml", """
            plans:
              free:
                limits: [ { capacity: 100, refill: 100, period: 1h } ]
            tenants:
              assignments: { acme: free }
            """);
    private static final Plans ALGORITHMS = PlansFile.parse("algorithms.yml", """
            global:
              limits: [ { algorithm: gcra, capacity: 1000, refill: 1000, period: 1m } ]
            plans:
              free:
                limits:
                  - { name: minute, algorithm: sliding-window, capacity: 100, period: 1m }
                  - { name: hour, capacity: 1000, refill: 1000, period: 1h }
            tenants:
              assignments: { acme: free }
            """);

    private record Instance(RedisStore store, QuotaFilter filter) implements AutoCloseable {
        static Instance start(Plans plans, RedisSettings settings) {
            RedisStore store = RedisStore.connect(settings, 1_000);
            return new Instance(store, QuotaFilter.builder().plans(plans).store(store).build());
        }

        Plans plans() {
            return filter.control().plans();
        }

        @Override
        public void close() {
            store.close();
        }
    }

    @Test
    void theAlgorithmsOneInstancePublishesAreTheOnesEveryInstanceEnforces() throws Exception {
        RedisServer redis = RedisServer.shared();
        String prefix = RedisServer.randomPrefix();
        RedisSettings s = RedisSettings.of(redis.uri()).withPrefix(prefix).withTimeout(Duration.ofMillis(500));
        try (Instance b = Instance.start(TOKEN_BUCKETS, s)) {
            assertThat(body(redis, prefix)).as("token buckets only: the older format").startsWith("{\"format\":1,")
                    .doesNotContain("algorithm");
            try (Instance a = Instance.start(ALGORITHMS, s)) {
                Await.within(2, "B enforces the published sliding window", () ->
                        b.plans().plan("free").orElseThrow().limits().size() == 2);
                assertThat(body(redis, prefix)).startsWith("{\"format\":4,")
                        .contains("\"algorithm\":\"sliding-window\"", "\"algorithm\":\"gcra\"");
                assertThat(b.plans().plan("free").orElseThrow().limits()).isEqualTo(ALGORITHMS.plans().get("free").limits());
                assertThat(b.plans().global().orElseThrow().limits()).singleElement()
                        .satisfies(g -> assertThat(g.algorithm()).isEqualTo(Algorithm.GCRA));
                assertThat(b.filter.control().tenantLimits("acme")).extracting(st -> st.algorithm())
                        .containsExactly(Algorithm.SLIDING_WINDOW, Algorithm.TOKEN_BUCKET);

                // runtime changes carry theirs too
                a.filter.control().setPlanLimits("free", List.of(Bandwidth.gcra("burst", 50, 10, Duration.ofSeconds(1))));
                a.filter.control().setTenant("initech", new TenantContract("free",
                        List.of(Bandwidth.slidingWindow("minute", 20, Duration.ofMinutes(1)))));
                Await.within(2, "B applies both changes", () ->
                        b.plans().plan("free").orElseThrow().limits().get(0).algorithm() == Algorithm.GCRA
                                && b.filter.control().tenant("initech").isPresent());
                assertThat(b.filter.control().tenant("initech").orElseThrow().limits())
                        .containsExactly(Bandwidth.slidingWindow("minute", 20, Duration.ofMinutes(1)));
                assertThat(b.filter.control().tenantLimits("initech")).singleElement()
                        .satisfies(st -> assertThat(st.algorithm()).isEqualTo(Algorithm.SLIDING_WINDOW));
            }
        }
    }

    private static String body(RedisServer redis, String prefix) throws Exception {
        return String.valueOf(redis.command("HGET", prefix + ":limits", "body"));
    }
}

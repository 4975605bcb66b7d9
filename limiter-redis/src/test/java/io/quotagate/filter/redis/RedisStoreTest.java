package io.quotagate.filter.redis;

import io.quotagate.filter.internal.admission.Decision;
import io.quotagate.filter.internal.admission.Decisions;
import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.store.BucketLimits;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.store.QuotaBucket;
import io.quotagate.filter.store.StoreUnavailableException;
import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.filter.testing.RedisServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The Redis store's keys, heartbeat and failure modes, on real Redis. */
class RedisStoreTest {
    /** Empty to full in 100 s. */
    static final BucketLimits CONFIG = BucketLimits.of(List.of(
            new io.quotagate.plans.Bandwidth("burst", 100, 1, Duration.ofSeconds(1))));

    /** The local allowance of the tests of bucket4j's buckets (the store's other engine). */
    static final RedisSettings.LocalAllowance ALLOWANCE = new RedisSettings.LocalAllowance(5, Duration.ofMinutes(1));

    private final ManualClock clock = new ManualClock();

    /** The store's script (the default), or bucket4j's buckets with {@link #ALLOWANCE}. */
    private static RedisSettings engine(RedisSettings base, boolean allowance) {
        return allowance ? base.withLocalAllowance(ALLOWANCE) : base;
    }

    /**
     * A request thread interrupted while it waits for Redis (a container stopping a stuck request) tells
     * nothing of Redis: that operation is answered locally, the store stays up, and its key is untouched.
     * With a local allowance the take is larger than the allowance, so it goes to Redis.
     */
    @ParameterizedTest(name = "local allowance {0}")
    @ValueSource(booleans = {true, false})
    void anInterruptedRequestThreadIsNoOutage(boolean allowance) throws Exception {
        RedisServer redis = RedisServer.shared();
        String prefix = RedisServer.randomPrefix();
        try (RedisStore store = RedisStore.connect(engine(RedisSettings.of(redis.uri()).withPrefix(prefix), allowance),
                100, clock.wallClock(), clock)) {
            QuotaBucket acme = store.bucket(BucketKind.TENANT, "acme", CONFIG);
            assertThat(acme.tryTake(40)).isTrue();
            long units = allowance ? ALLOWANCE.units() + 1 : 1;
            Thread.currentThread().interrupt();
            try {
                assertThat(acme.tryTake(units)).as("answered without Redis").isTrue();
            } finally {
                assertThat(Thread.interrupted()).as("the interrupt is kept for the container").isTrue();
            }
            assertThat(store.outages()).isZero();
            assertThat(store.available()).isTrue();
            // the Redis bucket kept its 40; the interrupted take too if its call had gone out before the wait
            // (as a take that timed out: counted twice, never lost)
            assertThat(acme.available()).as("the Redis bucket").isBetween(100L - 40 - units, 100L - 40);
        }
    }

    @ParameterizedTest(name = "local allowance {0}")
    @ValueSource(booleans = {true, false})
    void everyKeyIsNamespacedAndExpires(boolean allowance) throws Exception {
        RedisServer redis = RedisServer.shared();
        String prefix = RedisServer.randomPrefix();
        try (RedisStore store = RedisStore.connect(engine(RedisSettings.of(redis.uri()).withPrefix(prefix), allowance),
                100, clock.wallClock(), clock)) {
            assertThat(store.available()).isTrue();
            store.bucket(BucketKind.TENANT, "acme", CONFIG).tryTake(40);
            store.bucket(BucketKind.GLOBAL, "global", CONFIG).tryTake(1);

            assertThat(store.key(BucketKind.TENANT, "acme")).isEqualTo(prefix + ":tenant:acme");
            @SuppressWarnings("unchecked")
            List<Object> keys = (List<Object>) redis.command("KEYS", prefix + ":*");
            String warmup = prefix + ":warmup:" + store.instanceId();
            if (allowance) { // bucket4j's buckets are warmed up by one of their own
                assertThat(keys).containsExactlyInAnyOrder(prefix + ":tenant:acme", prefix + ":global:global",
                        prefix + ":instances", warmup);
                assertThat(redis.integer("PTTL", warmup)).as("the warm-up key goes within seconds").isBetween(1L, 2_000L);
            } else {
                assertThat(keys).as("the script is loaded instead of a warm-up bucket")
                        .containsExactlyInAnyOrder(prefix + ":tenant:acme", prefix + ":global:global", prefix + ":instances");
            }
            // 40 units short at 1 unit/s: full again in 40 s, kept 10 s more
            assertThat(redis.integer("PTTL", prefix + ":tenant:acme")).isBetween(40_000L, 50_000L);
            assertThat(redis.integer("PTTL", prefix + ":global:global")).isBetween(1_000L, 11_000L);
            assertThat(redis.integer("PTTL", prefix + ":instances")).isBetween(1L, RedisSettings.DEFAULT_INSTANCE_TTL.toMillis());
        }
        assertThat(redis.integer("EXISTS", prefix + ":instances")).as("a closed instance leaves the set").isZero();
    }

    @Test
    void onTheScriptADecisionCostsOneCallForAllOfItsBucketsAndARestartedRedisGetsTheScriptAgain() throws Exception {
        try (RedisServer own = RedisServer.startOwn();
             RedisStore store = RedisStore.connect(RedisSettings.of(own.uri()).withPrefix(RedisServer.randomPrefix())
                     .withTimeout(Duration.ofMillis(500))
                     .withHeartbeat(Duration.ofMinutes(1), Duration.ofMinutes(2)), 1_000, clock.wallClock(), clock)) {
            QuotaBucket global = store.bucket(BucketKind.GLOBAL, "global", CONFIG);
            own.command("CONFIG", "RESETSTAT");
            for (int i = 0; i < 50; i++) {
                QuotaBucket tenant = store.bucket(BucketKind.TENANT, "t" + (i % 10), CONFIG);
                assertThat(store.takeAll(new QuotaBucket[]{tenant, global}, 2, 1, false).taken()).isTrue();
            }
            assertThat(own.calls("evalsha")).as("one call per decision, tenant and global together").isEqualTo(50);
            assertThat(own.calls("eval")).isZero();
            assertThat(own.calls("get")).as("the script's own reads only: one per key").isEqualTo(100);
            assertThat(own.calls("set")).as("every write sets an expiry (SET PX)").isEqualTo(100);

            assertThat(global.take(60)).as("a refusal's wait comes with it").isEqualTo(Duration.ofSeconds(10).toNanos());
            assertThat(own.calls("evalsha")).isEqualTo(51);

            own.command("SCRIPT", "FLUSH"); // as after a restart or a failover: the server no longer knows it
            QuotaBucket tenant = store.bucket(BucketKind.TENANT, "t0", CONFIG);
            assertThat(store.takeAll(new QuotaBucket[]{tenant, global}, 2, 1, false).taken()).isTrue();
            assertThat(own.calls("eval")).as("NOSCRIPT answered by EVAL, which loads it").isEqualTo(1);
            assertThat(tenant.tryTake(1)).isTrue();
            assertThat(own.calls("eval")).as("loaded again: EVALSHA from then on").isEqualTo(1);
            assertThat(tenant.available()).as("t0: 5 before, 2 since").isEqualTo(100 - 7);
            assertThat(store.fallbackDecisions()).isZero();
            assertThat(store.outages()).isZero();
        }
    }

    @Test
    void onTheScriptAPlanChangedAtRuntimeMovesATenantsBucketOnceAndUnchangedLimitsCostNothingMore() throws Exception {
        try (RedisServer own = RedisServer.startOwn();
             RedisStore store = RedisStore.connect(RedisSettings.of(own.uri()).withPrefix(RedisServer.randomPrefix())
                     .withTimeout(Duration.ofMillis(500))
                     .withHeartbeat(Duration.ofMinutes(1), Duration.ofMinutes(2)), 100, clock.wallClock(), clock)) {
            Decisions admission = new Decisions(plans(1000), store);
            own.command("CONFIG", "RESETSTAT");
            for (int i = 0; i < 5; i++) assertAdmitted(admission);
            assertThat(own.calls("evalsha")).as("one call per decision").isEqualTo(5);

            admission.apply(plans(5));
            own.command("CONFIG", "RESETSTAT");
            for (int i = 0; i < 3; i++) assertAdmitted(admission);
            assertThat(own.calls("evalsha")).as("the bucket moved once, then one call per decision").isEqualTo(1 + 3);

            admission.apply(plans(5));
            own.command("CONFIG", "RESETSTAT");
            for (int i = 0; i < 2; i++) assertAdmitted(admission);
            assertThat(own.calls("evalsha")).as("no move").isEqualTo(2);
            assertThat(admission.admit("acme", "free", 1)).as("AS_IS: 995 left, capped at 5, 5 taken")
                    .isInstanceOf(Decision.Rejected.class);
            assertThat(store.fallbackDecisions()).isZero();
        }
    }

    @Test
    void aLocalAllowanceGoesToRedisOncePerAllowanceAndSendsWhatItAdmitted() throws Exception {
        try (RedisServer own = RedisServer.startOwn()) {
            // heartbeats (scripts too) out of the way of the count
            RedisSettings settings = RedisSettings.of(own.uri()).withPrefix(RedisServer.randomPrefix())
                    .withTimeout(Duration.ofMillis(500)).withHeartbeat(Duration.ofMinutes(1), Duration.ofMinutes(2));
            try (RedisStore store = RedisStore.connect(settings.withLocalAllowance(ALLOWANCE), 1_000, clock.wallClock(), clock)) {
                own.command("CONFIG", "RESETSTAT");
                QuotaBucket allowed = store.bucket(BucketKind.TENANT, "acme", CONFIG);
                for (int i = 0; i < 48; i++) assertThat(allowed.tryTake(1)).isTrue();
                // the first decision reads Redis; then 5 units on the copy, and the 6th sends them with itself
                assertThat(own.calls("eval")).as("compare-and-swap scripts for 48 decisions").isEqualTo(8);

                // Redis lags this instance by at most the allowance: 43 units synchronised, 5 on the copy
                assertThat(inRedis(settings, "acme")).isEqualTo(100 - 43);
                assertThat(allowed.tryTake(1)).isTrue(); // over the allowance: synchronises
                assertThat(inRedis(settings, "acme")).isEqualTo(100 - 49);
                assertThat(store.fallbackDecisions()).isZero();
            }
        }
    }

    @Test
    void unitsHeldOnALocalAllowanceReachRedisWhenTheBucketIsDroppedOrTheStoreCloses() throws Exception {
        RedisServer redis = RedisServer.shared();
        RedisSettings settings = RedisSettings.of(redis.uri()).withPrefix(RedisServer.randomPrefix())
                .withTimeout(Duration.ofMillis(500));
        BucketLimits newLimits = BucketLimits.of(List.of(
                new io.quotagate.plans.Bandwidth("burst", 100, 2, Duration.ofSeconds(1))));
        RedisStore store = RedisStore.connect(settings.withLocalAllowance(ALLOWANCE), 1_000, clock.wallClock(), clock);
        try {
            for (int i = 0; i < 3; i++) store.bucket(BucketKind.TENANT, "acme", CONFIG).tryTake(1);
            assertThat(inRedis(settings, "acme")).as("2 of 3 units still on the copy").isEqualTo(99);

            store.bucket(BucketKind.TENANT, "acme", newLimits); // new limits: the old proxy is dropped
            Await.within(5, "the dropped copy's units sent to Redis", () -> inRedis(settings, "acme") == 97);

            // the new copy's first contact with Redis moves the bucket to the new limits: these stay on it
            for (int i = 0; i < 3; i++) store.bucket(BucketKind.TENANT, "acme", newLimits).tryTake(1);
            assertThat(inRedis(settings, "acme")).isEqualTo(97);
        } finally {
            store.close();
        }
        assertThat(inRedis(settings, "acme")).as("close sends what the copies held").isEqualTo(94);
    }

    /**
     * The tokens of a tenant's bucket in Redis as bucket4j's state holds them, read by a store of its own
     * (an allowance that has never seen the bucket reads it on Redis), at this test's clock.
     */
    private long inRedis(RedisSettings settings, String tenant) {
        try (RedisStore reader = RedisStore.connect(settings.withLocalAllowance(ALLOWANCE), 1_000, clock.wallClock(), clock)) {
            long tokens = reader.bucket(BucketKind.TENANT, tenant, CONFIG).available();
            assertThat(reader.fallbackDecisions()).as("read on Redis").isZero();
            return tokens;
        }
    }

    @Test
    void withALocalAllowanceAPlanChangedAtRuntimeMovesATenantsRedisBucketOnce() throws Exception {
        try (RedisStore store = RedisStore.connect(RedisSettings.of(RedisServer.shared().uri())
                     .withPrefix(RedisServer.randomPrefix()).withTimeout(Duration.ofMillis(500)).withLocalAllowance(ALLOWANCE),
                     100, clock.wallClock(), clock)) {
            Decisions admission = new Decisions(plans(1000), store);
            for (int i = 0; i < 5; i++) assertAdmitted(admission);
            assertThat(store.reconfigurations()).as("limits the filter started with").isZero();

            admission.apply(plans(5));
            for (int i = 0; i < 3; i++) assertAdmitted(admission);
            assertThat(store.reconfigurations()).as("the bucket moved once").isEqualTo(1);

            admission.apply(plans(5)); // the same limits again: nothing to move
            for (int i = 0; i < 2; i++) assertAdmitted(admission);
            assertThat(store.reconfigurations()).as("no move").isEqualTo(1);
            assertThat(admission.admit("acme", "free", 1)).as("AS_IS: 995 left, capped at 5, 5 taken")
                    .isInstanceOf(Decision.Rejected.class);
            assertThat(store.fallbackDecisions()).isZero();
        }
    }

    private static void assertAdmitted(Decisions admission) {
        assertThat(admission.admit("acme", "free", 1)).isInstanceOf(Decision.Admitted.class);
    }

    private static io.quotagate.plans.Plans plans(long capacity) {
        return io.quotagate.plans.PlansFile.parse("p.yml", """
                plans:
                  free: { limits: [ { capacity: %d, refill: 1, period: 1h } ] }
                """.formatted(capacity));
    }

    @Test
    void aGlobalQuotaChangedAtRuntimeReachesTheRedisBucket() {
        RedisServer redis = RedisServer.shared();
        io.quotagate.plans.Plans plans = io.quotagate.plans.PlansFile.parse("p.yml", """
                global:
                  limits: [ { capacity: 100, refill: 1, period: 1h } ]
                plans:
                  free: { limits: [ { capacity: 1000, refill: 1, period: 1h } ] }
                """);
        try (RedisStore store = RedisStore.connect(RedisSettings.of(redis.uri()).withPrefix(RedisServer.randomPrefix())
                .withTimeout(Duration.ofMillis(500)), 100, clock.wallClock(), clock)) {
            Decisions admission = new Decisions(plans, store);
            for (int i = 0; i < 5; i++) assertThat(admission.admit("t" + i, "free", 1)).isInstanceOf(io.quotagate.filter.internal.admission.Decision.Admitted.class);
            admission.apply(plans.withGlobal(java.util.Optional.of(new io.quotagate.plans.GlobalQuota(List.of(
                    new io.quotagate.plans.Bandwidth("b0", 10, 1, Duration.ofHours(1)))))));
            int admitted = 0;
            for (int i = 0; i < 50; i++) {
                if (admission.admit("u" + i, "free", 1) instanceof io.quotagate.filter.internal.admission.Decision.Admitted) admitted++;
            }
            // AS_IS: the 95 tokens left are capped at the new capacity 10
            assertThat(admitted).isEqualTo(10);
            assertThat(store.fallbackDecisions()).isZero();
        }
    }

    @Test
    void theHeartbeatCountsInstancesSharingAPrefix() throws Exception {
        RedisServer redis = RedisServer.shared();
        RedisSettings settings = RedisSettings.of(redis.uri()).withPrefix(RedisServer.randomPrefix())
                .withHeartbeat(Duration.ofMillis(100), Duration.ofSeconds(5));
        try (RedisStore a = RedisStore.connect(settings, 100, clock.wallClock(), clock)) {
            assertThat(a.instanceCount()).isEqualTo(1);
            try (RedisStore b = RedisStore.connect(settings, 100, clock.wallClock(), clock)) {
                assertThat(b.instanceCount()).as("b's first beat sees a").isEqualTo(2);
                Await.within(5, "a sees b", () -> a.instanceCount() == 2);
                assertThat(a.instanceId()).isNotEqualTo(b.instanceId());
            }
            Await.within(5, "a sees b leave", () -> a.instanceCount() == 1);
        }
    }

    @Test
    void theFallbackShareDividesCapacityAndRateByTheInstanceCount() {
        BucketLimits shared = BucketLimits.of(List.of(
                new io.quotagate.plans.Bandwidth("burst", 20, 10, Duration.ofSeconds(10)),
                new io.quotagate.plans.Bandwidth("tiny", 2, 1, Duration.ofSeconds(1))));
        List<io.quotagate.plans.Bandwidth> third = LocalShares.share(shared, 3).bandwidths();
        assertThat(third.get(0)).isEqualTo(new io.quotagate.plans.Bandwidth("burst", 6, 10, Duration.ofSeconds(30)));
        assertThat(third.get(1).capacity()).as("never below 1").isEqualTo(1);
        assertThat(LocalShares.share(shared, 1)).isSameAs(shared);
        assertThat(BucketStore.perInstanceShare(10, 3)).isEqualTo(3);
        assertThat(BucketStore.perInstanceShare(2, 5)).isEqualTo(1);
    }

    @Test
    void thePerBandwidthViewWorksThroughTheFailoverForPublishedHeaders() throws Exception {
        RedisServer redis = RedisServer.shared();
        try (RedisStore store = RedisStore.connect(RedisSettings.of(redis.uri()).withPrefix(RedisServer.randomPrefix()),
                100, clock.wallClock(), clock)) {
            QuotaBucket b = store.bucket(BucketKind.TENANT, "acme", CONFIG);
            b.tryTake(30);
            assertThat(b.available()).isEqualTo(70);
            assertThat(b.availablePerBandwidth()).containsExactly(70L);
        }
    }

    @Test
    void unreachableAtStartItServesFromLocalBucketsAndCountsTheOutage() throws Exception {
        RedisSettings settings = RedisSettings.of("redis://127.0.0.1:" + closedPort()).withPrefix(RedisServer.randomPrefix());
        try (RedisStore store = RedisStore.connect(settings, 100, clock.wallClock(), clock)) {
            assertThat(store.available()).isFalse();
            assertThat(store.outages()).isEqualTo(1);
            QuotaBucket b = store.bucket(BucketKind.TENANT, "acme", CONFIG);
            assertThat(b.tryTake(100)).isTrue();
            assertThat(b.tryTake(1)).as("the local bucket limits too").isFalse();
            assertThat(store.fallbackDecisions()).isEqualTo(2);
        }
    }

    @Test
    void failClosedRefusesWhileRedisIsUnreachable() throws Exception {
        RedisSettings settings = RedisSettings.of("redis://127.0.0.1:" + closedPort())
                .withPrefix(RedisServer.randomPrefix()).withOnFailure(RedisSettings.OnFailure.CLOSED)
                .withHeartbeat(Duration.ofSeconds(3), Duration.ofSeconds(10));
        try (RedisStore store = RedisStore.connect(settings, 100, clock.wallClock(), clock)) {
            assertThatThrownBy(() -> store.bucket(BucketKind.TENANT, "acme", CONFIG).tryTake(1))
                    .isInstanceOfSatisfying(StoreUnavailableException.class, e -> assertThat(e.retryAfterSeconds()).isEqualTo(3));
        }
    }

    private static int closedPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}

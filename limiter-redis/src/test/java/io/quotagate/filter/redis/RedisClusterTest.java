package io.quotagate.filter.redis;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.metrics.QuotaMeterBinder;
import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.store.BucketLimits;
import io.quotagate.filter.store.Probe;
import io.quotagate.filter.store.QuotaBucket;
import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.RedisServer;
import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import io.quotagate.tenant.TenantContract;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The Redis store on a Redis Cluster of the test's own (three primaries, three replicas, loopback):
 * two filter instances enforce one quota, as on one server; tenants' keys spread over the primaries;
 * the global quota and the heartbeat set work there too.
 */
@Timeout(60)
class RedisClusterTest {
    @RegisterExtension
    static final RedisCluster cluster = new RedisCluster();

    private static RedisSettings settings(String prefix) {
        return RedisSettings.of(cluster.uri()).withPrefix(prefix).withTimeout(Duration.ofMillis(500));
    }

    /** The bound of {@link SharedQuotaTest#twoInstancesSharingRedisAdmitOneQuota}, on a cluster. */
    @Test
    void twoInstancesSharingAClusterAdmitOneQuota() throws Exception {
        SharedQuotaTest.assertTwoInstancesAdmitOneQuota(cluster.uri(), RedisServer.randomPrefix());
    }

    /** One key per tenant, no hash tag: the slots, and so the tenants, spread over every primary. */
    @Test
    void tenantsKeysSpreadOverThePrimaries() throws Exception {
        String prefix = RedisServer.randomPrefix();
        int tenants = 300;
        BucketLimits limits = BucketLimits.of(List.of(new Bandwidth("b", 10, 1, Duration.ofSeconds(1))));
        try (RedisStore store = RedisStore.connect(settings(prefix), 1_000)) {
            for (int i = 0; i < tenants; i++) {
                assertThat(store.bucket(BucketKind.TENANT, "t" + i, limits).tryTake(1)).isTrue();
            }
            assertThat(store.fallbackDecisions()).as("every decision made in Redis").isZero();
            List<Integer> perPrimary = new ArrayList<>();
            for (RedisServer primary : cluster.primaries()) {
                perPrimary.add(RedisCluster.keys(primary, prefix + ":tenant:"));
            }
            System.out.println("tenant keys per primary: " + perPrimary);
            assertThat(perPrimary).as("tenant keys per primary").hasSize(3).allSatisfy(n -> assertThat(n).isPositive());
            assertThat(perPrimary.stream().mapToInt(Integer::intValue).sum()).isEqualTo(tenants);
            // the heartbeat set is one key on one primary
            assertThat(cluster.primaryOf(prefix + ":instances").integer("ZCARD", prefix + ":instances")).isOne();
        }
    }

    /** The usage export scans every primary: each tenant's counter, wherever its slot lives, listed once. */
    @Test
    void theUsageExportListsTheTenantsOfEveryPrimaryOnce() throws Exception {
        String prefix = RedisServer.randomPrefix();
        int tenants = 300;
        java.time.LocalDate month = java.time.LocalDate.now(java.time.ZoneOffset.UTC).plusMonths(2).withDayOfMonth(1);
        java.time.Instant mid = month.plusDays(10).atStartOfDay(java.time.ZoneOffset.UTC).toInstant();
        long expires = month.plusMonths(5).atStartOfDay(java.time.ZoneOffset.UTC).toInstant().toEpochMilli();
        try (RedisStore store = RedisStore.connect(settings(prefix), 1_000)) {
            var counters = store.quotaCounters().orElseThrow();
            for (int i = 0; i < tenants; i++) counters.add("monthly:u" + i + ":" + month, 1 + i % 5, mid.toEpochMilli(), expires);
            List<Integer> perPrimary = new ArrayList<>();
            for (RedisServer primary : cluster.primaries()) perPrimary.add(RedisCluster.keys(primary, prefix + ":quota:"));
            // on several primaries (a node just made a replica may still answer "master" with no slots: not all)
            assertThat(perPrimary.stream().filter(n -> n > 0).count()).as("primaries holding counters: %s", perPrimary)
                    .isGreaterThan(1);
            assertThat(perPrimary.stream().mapToInt(Integer::intValue).sum()).isEqualTo(tenants);
            QuotaFilter filter = QuotaFilter.builder().plans(PlansFile.parse("usage.yml", """
                    plans:
                      pro:
                        limits: [ { capacity: 10, refill: 10, period: 1s } ]
                        quotas: [ { name: monthly, limit: 1000, per: month } ]
                    tenants:
                      default-plan: pro
                    """)).store(store).tenantDirectory(t -> java.util.Optional.of("pro"))
                    .wallClock(java.time.Clock.fixed(mid, java.time.ZoneOffset.UTC)).build();
            java.util.Map<String, Long> seen = new java.util.HashMap<>();
            String cursor = null;
            do {
                var page = filter.control().usage(cursor, 40);
                for (var t : page.tenants()) {
                    assertThat(seen.put(t.tenant(), t.periods().get(0).used())).as(t.tenant()).isNull();
                }
                cursor = page.next();
            } while (cursor != null);
            assertThat(seen).hasSize(tenants);
            for (int i = 0; i < tenants; i++) assertThat(seen.get("u" + i)).isEqualTo(1 + i % 5);
            // a cursor made before the primaries changed (a failover promotes a replica, with another id) is
            // refused rather than skipping the old primary's slots: the export starts again
            String next = filter.control().usage(null, 40).next();
            assertThat(next).contains(".");
            String stale = next.replaceFirst("~[0-9a-f]+\\.", "~0badc0de.");
            assertThat(stale).isNotEqualTo(next);
            assertThatThrownBy(() -> filter.control().usage(stale, 40))
                    .isInstanceOf(io.quotagate.filter.store.StoreUnavailableException.class)
                    .hasMessageContaining("start the export again");
        }
    }

    /**
     * The keys of one request on different primaries are taken by one call each, not atomically together: when
     * one refuses, the units the others took are given back (a second exchange). Both orders, take and
     * reserve: the bucket that admitted holds exactly what it held before the refused request.
     */
    @Test
    void aRequestRefusedByOneKeyGivesBackWhatItsKeysOnOtherPrimariesTook() throws Exception {
        String prefix = RedisServer.randomPrefix();
        BucketLimits roomy = BucketLimits.of(List.of(new Bandwidth("b", 100, 1, Duration.ofHours(1))));
        BucketLimits one = BucketLimits.of(List.of(new Bandwidth("b", 1, 1, Duration.ofHours(1))));
        String tenant = tenantOnAnotherPrimary(prefix, prefix + ":global:api");
        try (RedisStore store = RedisStore.connect(settings(prefix), 1_000)) {
            // the tenant's bucket takes, the global one refuses its second request
            QuotaBucket[] tenantThenGlobal = {store.bucket(BucketKind.TENANT, tenant, roomy),
                    store.bucket(BucketKind.GLOBAL, "api", one)};
            assertThat(store.takeAll(tenantThenGlobal, 2, 1, false).taken()).isTrue();
            for (String key : List.of(prefix + ":tenant:" + tenant, prefix + ":global:api")) {
                assertThat(cluster.primaryOf(key).integer("EXISTS", key)).as(key + " on its primary").isOne();
            }
            Probe refused = store.takeAll(tenantThenGlobal, 2, 1, true);
            assertThat(refused.taken()).isFalse();
            assertThat(refused.remaining()[0]).as("the tenant's tokens, from the same calls").containsExactly(99);
            assertThat(refused.waits()[1]).as("the global bucket's wait").isPositive();
            assertThat(tenantThenGlobal[0].available()).as("the tenant's unit of the refused request, given back")
                    .isEqualTo(99);
            assertThat(store.reserveAll(tenantThenGlobal, 2, 1, Duration.ofMinutes(1).toNanos(), false).taken()).isFalse();
            assertThat(tenantThenGlobal[0].available()).as("nor kept by a refused reservation").isEqualTo(99);

            // the other way round: the roomy global bucket takes, the tenant's refuses
            String other = tenantOnAnotherPrimary(prefix, prefix + ":global:all");
            QuotaBucket[] globalThenTenant = {store.bucket(BucketKind.GLOBAL, "all", roomy),
                    store.bucket(BucketKind.TENANT, other, one)};
            assertThat(store.takeAll(globalThenTenant, 2, 1, false).taken()).isTrue();
            assertThat(store.takeAll(globalThenTenant, 2, 1, false).taken()).isFalse();
            assertThat(globalThenTenant[0].available()).isEqualTo(99);
            assertThat(store.fallbackDecisions()).as("every decision made in Redis").isZero();
        }
    }

    /** A tenant id whose bucket key lives on another primary than {@code key}. */
    private static String tenantOnAnotherPrimary(String prefix, String key) throws Exception {
        int keyPort = cluster.primaryOf(key).port();
        for (int i = 0; ; i++) {
            if (cluster.primaryOf(prefix + ":tenant:t" + i).port() != keyPort) return "t" + i;
        }
    }

    /** {@link RedisScopedLimitsTest}'s per-user and route buckets, on a cluster: one key each, no cross-slot call. */
    @Test
    void twoInstancesShareScopedBucketsOnACluster() throws Exception {
        String prefix = RedisServer.randomPrefix();
        RedisScopedLimitsTest.assertTwoInstancesShareScopedBuckets(settings(prefix));
        String user = prefix + ":user:acme/alice";
        assertThat(cluster.primaryOf(user).integer("EXISTS", user)).isOne();
    }

    @Test
    void twoInstancesShareTheGlobalQuotaOnACluster() throws Exception {
        Plans plans = PlansFile.parse("global.yml", """
                global:
                  limits: [ { capacity: 30, refill: 1, period: 10s } ]
                plans:
                  free:
                    limits: [ { capacity: 1000, refill: 1000, period: 1s } ]
                """);
        RedisSettings settings = settings(RedisServer.randomPrefix());
        try (RedisStore a = RedisStore.connect(settings, 1_000); RedisStore b = RedisStore.connect(settings, 1_000);
             JettyServer ja = JettyServer.start(QuotaFilter.builder().plans(plans).store(a).build());
             JettyServer jb = JettyServer.start(QuotaFilter.builder().plans(plans).store(b).build())) {
            long start = System.nanoTime();
            int accepted = 0;
            List<Integer> statuses = new ArrayList<>();
            for (int i = 0; i < 80; i++) {
                int status = Http.get((i % 2 == 0 ? ja : jb).uri("/items/" + i), "tenant" + (i % 40)).statusCode();
                statuses.add(status);
                if (status == 200) accepted++;
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            assertThat(statuses).containsOnly(200, 429);
            assertThat(a.fallbackDecisions() + b.fallbackDecisions()).as("every decision made in Redis").isZero();
            assertThat(accepted).as("accepted over %.1f s by 40 tenants", seconds)
                    .isBetween(30, 30 + (int) Math.ceil(seconds / 10));
        }
    }

    /**
     * Shared limits on a cluster: the record is one key on one primary, the announcement is
     * cluster-wide publish/subscribe; a change through A is enforced and reported by B.
     */
    @Test
    void aLimitChangedOnOneInstanceIsEnforcedAndReportedByTheOtherOnACluster() throws Exception {
        RedisSettings s = settings(RedisServer.randomPrefix());
        try (SharedLimitsTest.Instance a = SharedLimitsTest.Instance.start(SharedLimitsTest.PLANS, s);
             SharedLimitsTest.Instance b = SharedLimitsTest.Instance.start(SharedLimitsTest.PLANS, s)) {
            a.control().setGlobalQuota(List.of(new Bandwidth("api", 10, 10, Duration.ofMinutes(1))));
            Await.within(2, "B reports the new global quota",
                    () -> b.gauge(QuotaMeterBinder.GLOBAL_CAPACITY) == 10.0);
            b.control().setTenant("globex", new TenantContract("pro",
                    List.of(new Bandwidth("burst", 3, 1, Duration.ofMinutes(1)))));
            Await.within(2, "A has globex's contract", () -> a.control().tenant("globex").isPresent());
            int admitted = 0;
            for (int i = 0; i < 6; i++) if ((i % 2 == 0 ? a : b).get("globex") == 200) admitted++;
            assertThat(admitted).isEqualTo(3);
            assertThat(a.store().fallbackDecisions() + b.store().fallbackDecisions()).isZero();
            assertThat(a.control().limitsStatus().version()).isEqualTo(b.control().limitsStatus().version());
        }
    }
}

package io.quotagate.filter.redis;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.RedisServer;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two filter instances on two Jetty servers: sharing one Redis they enforce one quota; with local
 * stores each enforces its own, so together they admit about twice as much.
 */
class SharedQuotaTest {
    private static final int CAPACITY = 20;
    /** 1 unit per 10 s: over a few seconds' run, refill adds at most a unit or two. */
    private static final double REFILL_PER_SECOND = 0.1;
    private static final Plans PLANS = PlansFile.parse("shared.yml", """
            plans:
              free:
                limits: [ { capacity: 20, refill: 1, period: 10s } ]
            """);
    private static final int THREADS = 4;
    private static final int REQUESTS_PER_THREAD = 30;

    @Test
    void twoInstancesSharingRedisAdmitOneQuota() throws Exception {
        assertTwoInstancesAdmitOneQuota(RedisServer.shared().uri(), RedisServer.randomPrefix());
    }

    /**
     * Two instances on the Redis at {@code uri} (one server, Sentinel or a cluster) admit one quota
     * between them, every decision taken in Redis.
     */
    static void assertTwoInstancesAdmitOneQuota(String uri, String prefix) throws Exception {
        RedisSettings settings = RedisSettings.of(uri).withPrefix(prefix).withTimeout(Duration.ofMillis(500));
        try (RedisStore a = RedisStore.connect(settings, 1_000); RedisStore b = RedisStore.connect(settings, 1_000)) {
            Run run = hammer(a, b);
            assertThat(a.fallbackDecisions() + b.fallbackDecisions()).as("every decision made in Redis").isZero();
            assertThat(run.statuses()).containsOnly(200, 429);
            long bound = CAPACITY + (long) Math.ceil(REFILL_PER_SECOND * run.seconds());
            assertThat(run.accepted()).as("accepted over %.1f s", run.seconds()).isBetween((long) CAPACITY, bound);
            assertThat(b.instanceCount()).as("b joined after a: its first heartbeat counts both").isEqualTo(2);
        }
    }

    /**
     * With a local allowance each instance decides from its own copy between synchronisations, so the
     * pair may admit more than one quota, but never more than one allowance per instance beyond it.
     */
    @Test
    void aLocalAllowanceOvershootsByAtMostOneAllowancePerInstance() throws Exception {
        RedisServer redis = RedisServer.shared();
        int units = 4;
        RedisSettings settings = RedisSettings.of(redis.uri()).withPrefix(RedisServer.randomPrefix())
                .withTimeout(Duration.ofMillis(500))
                // synchronise by units, not by time, within this short run
                .withLocalAllowance(new RedisSettings.LocalAllowance(units, Duration.ofSeconds(30)));
        try (RedisStore a = RedisStore.connect(settings, 1_000); RedisStore b = RedisStore.connect(settings, 1_000)) {
            Run run = hammer(a, b);
            assertThat(a.fallbackDecisions() + b.fallbackDecisions()).as("every decision made in Redis or on an allowance")
                    .isZero();
            assertThat(run.statuses()).containsOnly(200, 429);
            long bound = CAPACITY + (long) Math.ceil(REFILL_PER_SECOND * run.seconds()) + 2L * units;
            assertThat(run.accepted()).as("accepted over %.1f s", run.seconds()).isBetween((long) CAPACITY, bound);
        }
    }

    @Test
    void twoLocalInstancesAdmitTwiceAsMuch() throws Exception {
        Run run = hammer(BucketStore.local(1_000, io.quotagate.filter.store.QuotaClock.system()),
                BucketStore.local(1_000, io.quotagate.filter.store.QuotaClock.system()));
        long bound = 2 * (CAPACITY + (long) Math.ceil(REFILL_PER_SECOND * run.seconds()));
        assertThat(run.accepted()).isBetween(2L * CAPACITY, bound);
    }

    private record Run(long accepted, List<Integer> statuses, double seconds) {
    }

    /** 4 threads x 30 requests for one tenant, alternating between the two servers. */
    private static Run hammer(BucketStore storeA, BucketStore storeB) throws Exception {
        try (JettyServer a = JettyServer.start(QuotaFilter.builder().plans(PLANS).store(storeA).build());
             JettyServer b = JettyServer.start(QuotaFilter.builder().plans(PLANS).store(storeB).build())) {
            ExecutorService pool = Executors.newFixedThreadPool(THREADS);
            try {
                long start = System.nanoTime();
                List<Future<List<Integer>>> futures = new ArrayList<>();
                for (int t = 0; t < THREADS; t++) {
                    int thread = t;
                    futures.add(pool.submit(() -> {
                        List<Integer> statuses = new ArrayList<>();
                        for (int i = 0; i < REQUESTS_PER_THREAD; i++) {
                            JettyServer target = (i + thread) % 2 == 0 ? a : b;
                            statuses.add(Http.get(target.uri("/items/" + i), "acme").statusCode());
                        }
                        return statuses;
                    }));
                }
                List<Integer> all = new ArrayList<>();
                for (Future<List<Integer>> f : futures) all.addAll(f.get());
                double seconds = (System.nanoTime() - start) / 1e9;
                return new Run(all.stream().filter(s -> s == 200).count(), all, seconds);
            } finally {
                pool.shutdownNow();
            }
        }
    }
}

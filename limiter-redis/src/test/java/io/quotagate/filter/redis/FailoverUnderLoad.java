package io.quotagate.filter.redis;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.metrics.QuotaMeterBinder;
import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.RedisServer;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two filter instances on real Jetty sharing one Redis topology, under load from a few threads over
 * many tenants, while the test kills a primary: the statuses, each tenant's admissions, the
 * fallback count and how long the store took to be back on Redis.
 *
 * <p><b>The over-admission bound.</b> Each tenant has capacity {@code C} and refill {@code r} per
 * second; the load drains every tenant before the kill. Over the run of {@code D} seconds, Redis
 * admits at most {@code C + r·D} per tenant whatever the instances do. While an instance answers
 * locally it takes from its own share, a local bucket of {@code floor(C/n)} refilled at {@code r/n}
 * ({@code n = 2} instances, the last count known, which an {@code instance-ttl} longer than the
 * failover keeps). That bucket lives across the outages (it is kept per key), so an instance admits
 * at most {@code floor(C/n) + r·D/n} locally in the whole run. Hence per tenant:
 * {@code accepted <= C + r·D + n·(floor(C/n) + r·D/n)}, about twice the quota. Units written to
 * the dead primary but not yet replicated are lost; the load drains the buckets before the kill, so
 * those writes only record refusals and lose no admitted unit.
 */
final class FailoverUnderLoad implements AutoCloseable {
    static final int CAPACITY = 10;
    /** 1 unit per 10 s. */
    static final double REFILL_PER_SECOND = 0.1;
    static final int INSTANCES = 2;
    private static final Plans PLANS = PlansFile.parse("failover.yml", """
            plans:
              free:
                limits: [ { capacity: 10, refill: 1, period: 10s } ]
            """);

    /** The key prefix both instances share, fresh for this run. */
    final String prefix = RedisServer.randomPrefix();
    final RedisStore a;
    final RedisStore b;
    private final JettyServer ja;
    private final JettyServer jb;
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final List<String> tenants = new ArrayList<>();
    final ConcurrentMap<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
    final ConcurrentMap<String, AtomicInteger> accepted = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, Boolean> refused = new ConcurrentHashMap<>();
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final List<Thread> threads = new ArrayList<>();
    private final long start = System.nanoTime();

    /**
     * Starts both instances (timeout 200 ms for a loaded machine, heartbeat 200 ms, instance-ttl 10 s
     * so the count of 2 outlives the failover) and the load.
     */
    FailoverUnderLoad(String uri, int tenantCount, int threadCount) throws Exception {
        RedisSettings settings = RedisSettings.of(uri).withPrefix(prefix)
                .withTimeout(Duration.ofMillis(200)).withHeartbeat(Duration.ofMillis(200), Duration.ofSeconds(10));
        a = RedisStore.connect(settings, 10_000);
        b = RedisStore.connect(settings, 10_000);
        QuotaFilter fa = QuotaFilter.builder().plans(PLANS).store(a).build();
        QuotaFilter fb = QuotaFilter.builder().plans(PLANS).store(b).build();
        new QuotaMeterBinder(fa.control()).bindTo(registry);
        ja = JettyServer.start(fa);
        jb = JettyServer.start(fb);
        for (int i = 0; i < tenantCount; i++) tenants.add("t" + i);
        for (int t = 0; t < threadCount; t++) {
            int thread = t;
            Thread th = new Thread(() -> {
                // bounded: at most 200,000 requests per thread even if never stopped
                for (int i = 0; i < 200_000 && running.get(); i++) {
                    String tenant = tenants.get((i * threadCount + thread) % tenants.size());
                    int status;
                    try {
                        status = Http.get(((i + thread) % 2 == 0 ? ja : jb).uri("/items/" + i), tenant).statusCode();
                    } catch (Exception e) {
                        status = -1;
                    }
                    statuses.computeIfAbsent(status, s -> new AtomicInteger()).incrementAndGet();
                    if (status == 200) accepted.computeIfAbsent(tenant, s -> new AtomicInteger()).incrementAndGet();
                    if (status == 429) refused.put(tenant, true);
                }
            }, "failover-load-" + t);
            th.start();
            threads.add(th);
        }
    }

    /** Every tenant has been refused at least once: its Redis bucket is drained. */
    boolean allDrained() {
        return refused.size() == tenants.size();
    }

    /**
     * What the bound of the class comment assumes before a primary dies: every tenant drained on Redis, and
     * each instance counting both (so its local share is {@code floor(C/n)} with {@code n = 2}). Were the
     * buckets drained before an instance's heartbeat had seen the other, that instance would answer from
     * a share of the whole quota.
     */
    void awaitReadyToKill() throws InterruptedException {
        Await.within(20, "every tenant's bucket drained on Redis", this::allDrained);
        Await.within(20, "each instance counting both", () -> a.instanceCount() == INSTANCES
                && b.instanceCount() == INSTANCES);
    }

    /**
     * Waits until the replicas of {@code primary} have acknowledged every write it had taken when called:
     * the drain's admissions are then on the replica to be promoted, so the writes the kill loses only
     * record refusals (the class comment). Killed sooner, a replica behind by part of the drain would
     * admit that part again once promoted, beyond the bound. Replicas acknowledge once a second.
     */
    static void awaitReplicated(RedisServer primary) throws IOException, InterruptedException {
        long written = primary.info("replication", "master_repl_offset");
        Await.within(10, "the replica holding the drain's writes", () -> {
            String info = (String) primary.command("INFO", "replication");
            return info.contains("slave0:") && ackedByEveryReplica(info) >= written;
        });
    }

    /** The smallest offset a replica acknowledged, from the primary's {@code INFO replication}. */
    private static long ackedByEveryReplica(String info) {
        long least = Long.MAX_VALUE;
        for (String line : info.split("\r?\n")) {
            if (!line.startsWith("slave")) continue;
            int at = line.indexOf("offset=");
            if (at < 0) continue;
            int end = line.indexOf(',', at);
            least = Math.min(least, Long.parseLong(line.substring(at + "offset=".length(), end < 0 ? line.length() : end)));
        }
        return least;
    }

    long fallbackDecisions() {
        return a.fallbackDecisions() + b.fallbackDecisions();
    }

    /** Instance a's {@code quotagate.store.fallback} meter. */
    double fallbackMeter() {
        return registry.get(QuotaMeterBinder.STORE_FALLBACK).functionCounter().count();
    }

    /**
     * Waits until both stores are on Redis and no decision falls back for a whole second (so every
     * slot, the promoted primary's too, answers), at most {@code seconds}.
     *
     * @return nanoTime when the quiet second began
     */
    long awaitBackOnRedis(int seconds, BooleanSupplier promoted) throws InterruptedException {
        long[] since = new long[1];
        Await.within(seconds, "back on Redis for a quiet second", () -> {
            if (!(promoted.getAsBoolean() && a.available() && b.available())) return false;
            since[0] = System.nanoTime();
            long before = fallbackDecisions();
            Thread.sleep(1_000); // the quiet second itself: a span of real load, not a poll
            return fallbackDecisions() == before && a.available() && b.available();
        });
        return since[0];
    }

    /** Stops the load; returns its duration in seconds. */
    double stop() throws InterruptedException {
        running.set(false);
        for (Thread t : threads) t.join(10_000);
        return (System.nanoTime() - start) / 1e9;
    }

    /** The bound of the class comment for a run of {@code seconds}. */
    static long bound(double seconds) {
        long redis = CAPACITY + (long) Math.ceil(REFILL_PER_SECOND * seconds);
        long share = CAPACITY / INSTANCES + (long) Math.ceil(REFILL_PER_SECOND * seconds / INSTANCES);
        return redis + INSTANCES * share;
    }

    /**
     * Stops the load and checks what must hold after a primary's death: no 5xx nor failed request,
     * fallback decisions counted (store and meter), every tenant within {@link #bound}. Prints the
     * figures.
     */
    void assertFailedOverWithinBound(String topology, double failoverSeconds) throws InterruptedException {
        double seconds = stop();
        long bound = bound(seconds);
        long quota = CAPACITY + (long) Math.ceil(REFILL_PER_SECOND * seconds);
        int max = accepted.values().stream().mapToInt(AtomicInteger::get).max().orElse(0);
        long over = accepted.values().stream().mapToLong(n -> Math.max(0, n.get() - quota)).sum();
        Map<Integer, Integer> counts = new java.util.TreeMap<>();
        statuses.forEach((s, n) -> counts.put(s, n.get()));
        System.out.printf("%s failover: back on Redis %.1f s after the kill; run %.1f s; statuses %s; "
                        + "fallback decisions %d (meter of instance a: %.0f); per tenant: quota %d, most admitted %d, "
                        + "bound %d; admitted beyond the quota, all %d tenants: %d%n", topology, failoverSeconds,
                seconds, counts, fallbackDecisions(), fallbackMeter(), quota, max, bound, tenants.size(), over);
        assertThat(counts).as("statuses (-1: no answer)").containsOnlyKeys(200, 429);
        assertThat(fallbackDecisions()).as("decisions answered from local shares").isPositive();
        assertThat(fallbackMeter()).as(QuotaMeterBinder.STORE_FALLBACK).isPositive();
        assertThat(max).as("most admitted for one tenant").isLessThanOrEqualTo((int) bound);
    }

    @Override
    public void close() throws Exception {
        stop();
        ja.close();
        jb.close();
        a.close();
        b.close();
    }
}

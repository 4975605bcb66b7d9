package io.quotagate.filter.redis;

import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.store.BucketLimits;
import io.quotagate.filter.store.QuotaBucket;
import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.filter.testing.RedisServer;
import io.quotagate.plans.Bandwidth;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Redis losing its data (killed and restarted empty, or {@code FLUSHALL}) costs at most the one extra
 * burst that an outage costs: a bucket that is gone is created again from what this instance last saw
 * of it on Redis, refilled since, not full. Measured with a server of the test's own on a free port,
 * killed and restarted by PID, and the store's clocks moved by hand.
 */
class RedisDataLossTest {
    /** A burst of 100 refilled at 1 unit/s, and 1,000 a day. */
    private static final BucketLimits LIMITS = BucketLimits.of(List.of(
            new Bandwidth("burst", 100, 10, Duration.ofSeconds(10)),
            new Bandwidth("daily", 1_000, 1_000, Duration.ofDays(1))));

    private final ManualClock clock = new ManualClock();
    private RedisServer redis;
    private RedisStore store;

    @BeforeEach
    void start() throws Exception {
        redis = RedisServer.startOwn();
        store = RedisStore.connect(RedisSettings.of(redis.uri()).withPrefix(RedisServer.randomPrefix())
                .withTimeout(Duration.ofMillis(200)).withHeartbeat(Duration.ofMillis(200), Duration.ofSeconds(2)),
                1_000, clock.wallClock(), clock);
    }

    @AfterEach
    void stop() throws Exception {
        if (store != null) store.close();
        if (redis != null) redis.close();
    }

    @Test
    void aTenantDrainedBeforeAnOutageAndARestartWithoutDataGetsOneExtraBurstNotTwo() throws Exception {
        QuotaBucket acme = store.bucket(BucketKind.TENANT, "acme", LIMITS);
        assertThat(drain(acme)).as("the burst, on Redis").isEqualTo(100);

        redis.kill();
        clock.advance(Duration.ofSeconds(5));
        int duringOutage = drain(acme);
        assertThat(store.available()).isFalse();
        assertThat(duringOutage).as("the local share: the one extra burst an outage may give").isEqualTo(100);

        redis.start(); // same port, empty
        Await.within(5, "back on Redis", store::available);
        int afterRestart = drain(acme);
        assertThat(afterRestart).as("what Redis would have held had it kept the bucket: 5 s of refill")
                .isEqualTo(5);
        assertThat(duringOutage + afterRestart).as("extra over the quota's 100 + 5: one burst")
                .isLessThanOrEqualTo(100 + 5);
    }

    @Test
    void flushallGivesNoFreshBurstNorAFreshDay() throws Exception {
        QuotaBucket acme = store.bucket(BucketKind.TENANT, "acme", LIMITS);
        assertThat(drain(acme)).isEqualTo(100);
        clock.advance(Duration.ofSeconds(3));

        redis.command("FLUSHALL");
        assertThat(drain(acme)).as("3 s of refill, not a new burst").isEqualTo(3);
        assertThat(acme.availablePerBandwidth()[1]).as("the day's units still spent").isEqualTo(1_000 - 103);
        assertThat(store.outages()).isZero();
        assertThat(store.fallbackDecisions()).isZero();
    }

    /** A GCRA cell and a sliding window lost with Redis's data come back as this instance saw them, not full. */
    @Test
    void flushallGivesAGcraCellAndASlidingWindowNoFreshBurst() throws Exception {
        BucketLimits limits = BucketLimits.of(List.of(
                new Bandwidth("cell", 100, 10, Duration.ofSeconds(10), io.quotagate.plans.Algorithm.GCRA),
                new Bandwidth("window", 50, 50, Duration.ofMinutes(1), io.quotagate.plans.Algorithm.SLIDING_WINDOW)));
        QuotaBucket acme = store.bucket(BucketKind.TENANT, "acme", limits);
        assertThat(acme.take(40)).isZero();
        clock.advance(Duration.ofSeconds(3));

        redis.command("FLUSHALL");
        assertThat(acme.availablePerBandwidth()).as("the cell: 60 + 3 s of refill; the window: its 10 left")
                .containsExactly(63, 10);
        assertThat(store.fallbackDecisions()).isZero();
    }

    @Test
    void aTenantThisInstanceNeverSawStartsFull() throws Exception {
        redis.command("FLUSHALL");
        assertThat(drain(store.bucket(BucketKind.TENANT, "globex", LIMITS))).isEqualTo(100);
    }

    /** Takes one unit at a time until refused (at most 1,000): the units admitted. */
    private static int drain(QuotaBucket b) {
        int admitted = 0;
        while (admitted < 1_000 && b.tryTake(1)) admitted++;
        return admitted;
    }
}

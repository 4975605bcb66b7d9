package io.quotagate.filter.store;

import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.Bandwidth;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class LocalBucketStoreTest {
    private final ManualClock clock = new ManualClock();
    // empty -> full takes 10 s for the burst and 1 day for the daily budget
    private final BucketLimits config = BucketLimits.of(List.of(
            new Bandwidth("burst", 10, 1, Duration.ofSeconds(1)),
            new Bandwidth("daily", 1000, 1000, Duration.ofDays(1))));

    @Test
    void anIdleBucketIsKeptUntilItWouldHaveRefilledCompletely() {
        LocalBucketStore store = new LocalBucketStore(100, clock);
        QuotaBucket b = store.bucket(BucketKind.TENANT, "acme", config);
        b.tryTake(10);

        clock.advance(Duration.ofHours(23));
        assertThat(store.bucket(BucketKind.TENANT, "acme", config)).as("not yet refilled: same bucket").isSameAs(b);
        assertThat(b.available()).isEqualTo(10); // burst full again, daily still short

        // used now and then, it is kept however long it lives
        for (int i = 0; i < 10; i++) {
            clock.advance(Duration.ofHours(23)); // idle since the last take: still not a full day
            QuotaBucket used = store.bucket(BucketKind.TENANT, "acme", config);
            assertThat(used).as("take %d", i).isSameAs(b);
            used.tryTake(1);
        }

        clock.advance(Duration.ofDays(2).plusSeconds(1)); // idle past twice a full refill: gone
        store.tenantCount(); // lets Caffeine run its maintenance
        assertThat(store.tenantCount()).isZero();
        assertThat(store.bucket(BucketKind.TENANT, "acme", config)).as("idle past a full refill").isNotSameAs(b);
    }

    @Test
    void aBucketTakenFromAfterTheWholeStoreWasIdleIsKeptFromThatTake() {
        LocalBucketStore store = new LocalBucketStore(100, clock);
        store.bucket(BucketKind.TENANT, "acme", config).tryTake(10);
        store.bucket(BucketKind.TENANT, "other", config).tryTake(10);

        // nothing read the clock for three days: the tables' time is still three days old, so a lookup
        // may hand out the expired (full) bucket; the take from it counts, and restarts its expiry
        clock.advance(Duration.ofDays(3));
        QuotaBucket used = store.bucket(BucketKind.TENANT, "acme", config);
        assertThat(used.tryTake(10)).isTrue();

        clock.advance(Duration.ofHours(35)); // 1.46 days after that take: less than 1.5 full refills
        assertThat(store.tenantCount()).as("other, idle for 4.5 days, is gone; acme is kept").isEqualTo(1);
        QuotaBucket later = store.bucket(BucketKind.TENANT, "acme", config);
        assertThat(later).as("the bucket the take went to").isSameAs(used);
        assertThat(later.available()).isEqualTo(10);
    }

    @Test
    void aTakeThatAlsoTellsTheWaitKeepsTheBucketAsATryTakeDoes() {
        LocalBucketStore store = new LocalBucketStore(100, clock);
        store.bucket(BucketKind.TENANT, "acme", config).take(10);
        store.bucket(BucketKind.TENANT, "other", config).take(10);
        clock.advance(Duration.ofDays(3));
        QuotaBucket used = store.bucket(BucketKind.TENANT, "acme", config);
        assertThat(used.take(10)).as("taken: no wait").isZero();

        clock.advance(Duration.ofHours(35));
        assertThat(store.tenantCount()).as("acme kept from its take").isEqualTo(1);
        assertThat(store.bucket(BucketKind.TENANT, "acme", config)).isSameAs(used);
    }

    @Test
    void aThrottledTenantServedOnlyByReservationsKeepsItsBucket() {
        // a route with max-delay reserves: a tenant that only ever reserves must not be dropped as idle
        // (and handed a full bucket) while it is busy, whether its units were there or taken into debt
        LocalBucketStore store = new LocalBucketStore(100, clock);
        BucketLimits small = BucketLimits.of(List.of(new Bandwidth("burst", 10, 1, Duration.ofSeconds(1))));
        QuotaBucket first = store.bucket(BucketKind.TENANT, "acme", small);
        assertThat(first.reserve(10, 0)).as("taken: no wait").isZero();
        for (int minute = 1; minute <= 5; minute++) { // 5 min: past 2 x the 1 min keep time of its creation
            clock.advance(Duration.ofSeconds(59));
            QuotaBucket b = store.bucket(BucketKind.TENANT, "acme", small);
            assertThat(b).as("minute %d", minute).isSameAs(first);
            assertThat(b.reserve(10, 0)).as("minute %d: refilled, taken", minute).isZero();
            clock.advance(Duration.ofSeconds(1));
            long wait = store.bucket(BucketKind.TENANT, "acme", small).reserve(5, Duration.ofSeconds(10).toNanos());
            assertThat(wait).as("minute %d: 4 s into debt", minute).isEqualTo(Duration.ofSeconds(4).toNanos());
        }
        assertThat(store.bucket(BucketKind.TENANT, "acme", small).available()).as("the debt is still there")
                .isEqualTo(-4);
    }

    @Test
    void aDebtChargedAfterTheWholeStoreWasIdleIsKept() {
        // a request admitted, then running for minutes while nothing else reads the clock, is charged
        // its excess when it ends: the lookup may hand out its bucket by the tables' old time
        LocalBucketStore store = new LocalBucketStore(100, clock);
        BucketLimits small = BucketLimits.of(List.of(new Bandwidth("burst", 10, 1, Duration.ofSeconds(1))));
        QuotaBucket b = store.bucket(BucketKind.TENANT, "acme", small);
        b.tryTake(10);

        clock.advance(Duration.ofMinutes(3)); // past 2 × the keep time (1 min): expired, but nobody looked
        QuotaBucket ending = store.bucket(BucketKind.TENANT, "acme", small);
        ending.forceTake(300); // 10 in the bucket again, 290 of debt: 300 s to be full
        store.changed(BucketKind.TENANT, "acme");

        clock.advance(Duration.ofSeconds(200));
        QuotaBucket later = store.bucket(BucketKind.TENANT, "acme", small);
        assertThat(later).as("still paying back its debt: kept").isSameAs(ending);
        assertThat(later.available()).isEqualTo(-90);
    }

    @Test
    void slowerLimitsAfterTheWholeStoreWasIdleKeepTheBucketForTheirRefill() {
        LocalBucketStore store = new LocalBucketStore(100, clock);
        BucketLimits quick = BucketLimits.of(List.of(new Bandwidth("burst", 10, 10, Duration.ofSeconds(1))));
        store.bucket(BucketKind.TENANT, "acme", quick).tryTake(10);

        clock.advance(Duration.ofMinutes(3)); // quiet past the 1 min keep time
        QuotaBucket moved = store.bucket(BucketKind.TENANT, "acme", config); // now full after a day
        assertThat(moved.tryTake(10)).isTrue();

        clock.advance(Duration.ofHours(33)); // 1.4 days: less than 1.5 × the slower limits' day to refill
        store.bucket(BucketKind.TENANT, "other", quick).tryTake(1); // the tables' time moves on
        assertThat(store.bucket(BucketKind.TENANT, "acme", config)).as("kept for the slower limits' refill")
                .isSameAs(moved);
    }

    @Test
    void aTakeFromABucketReplacedMeanwhileCountsOnItsReplacement() {
        LocalBucketStore store = new LocalBucketStore(100, clock);
        Replaced acme = replacedMeanwhile(store);

        assertThat(acme.stale().tryTake(4)).isTrue(); // the first request, admitted from the old bucket
        assertThat(store.bucket(BucketKind.TENANT, "acme", config)).isSameAs(acme.fresh());
        assertThat(acme.fresh().available()).as("its 4 units count on the bucket in the table").isEqualTo(6);
    }

    @Test
    void aDebtTakenFromABucketReplacedMeanwhileCountsOnItsReplacement() {
        LocalBucketStore store = new LocalBucketStore(100, clock);
        Replaced acme = replacedMeanwhile(store);

        acme.stale().forceTake(4); // a request's excess, settled on the bucket it was admitted from
        assertThat(acme.stale().reserve(8, Duration.ofSeconds(10).toNanos())).as("2 s into debt").isPositive();
        assertThat(store.bucket(BucketKind.TENANT, "acme", config)).isSameAs(acme.fresh());
        assertThat(acme.fresh().available()).as("its 4 + 8 units count on the bucket in the table").isEqualTo(-2);
    }

    /** A bucket handed out by the tables' old time, and the one a later lookup put in its place. */
    private record Replaced(QuotaBucket stale, QuotaBucket fresh) {
    }

    /** Tenant acme's bucket, emptied, then handed out after three quiet days, just before a lookup replaces it. */
    private Replaced replacedMeanwhile(LocalBucketStore store) {
        store.bucket(BucketKind.TENANT, "acme", config).tryTake(10);
        clock.advance(Duration.ofDays(3)); // quiet: the tables' time is three days old
        QuotaBucket stale = store.bucket(BucketKind.TENANT, "acme", config); // handed out by the old time
        store.bucket(BucketKind.TENANT, "other", config).tryTake(1); // the tables' time moves on
        QuotaBucket fresh = store.bucket(BucketKind.TENANT, "acme", config); // this lookup sees the expiry
        assertThat(fresh).isNotSameAs(stale);
        return new Replaced(stale, fresh);
    }

    @Test
    void aLookupAloneDoesNotKeepABucket() {
        LocalBucketStore store = new LocalBucketStore(100, clock);
        QuotaBucket b = store.bucket(BucketKind.TENANT, "acme", config);
        b.tryTake(10);
        for (int i = 0; i < 2; i++) { // status reads (published limits, the Actuator endpoint) are not uses
            clock.advance(Duration.ofHours(20));
            store.bucket(BucketKind.TENANT, "other", config).tryTake(1); // the tables' time moves on
            assertThat(store.bucket(BucketKind.TENANT, "acme", config)).as("lookup %d", i).isSameAs(b);
        }
        clock.advance(Duration.ofHours(10)); // 50 h after the last take: past 2 full refills
        store.bucket(BucketKind.TENANT, "other", config).tryTake(1);
        assertThat(store.bucket(BucketKind.TENANT, "acme", config)).isNotSameAs(b);
    }

    @Test
    void everyIdleBucketIsKeptForTheSlowestRefillOrDebtSeenSoFar() {
        LocalBucketStore store = new LocalBucketStore(100, clock);
        BucketLimits quick = BucketLimits.of(List.of(new Bandwidth("burst", 10, 10, Duration.ofSeconds(1))));
        QuotaBucket q = store.bucket(BucketKind.GUEST, "quick", quick);
        store.bucket(BucketKind.TENANT, "slow", config); // full after a day

        clock.advance(Duration.ofHours(20));
        assertThat(store.bucket(BucketKind.GUEST, "quick", quick)).as("kept as long as the slowest bucket needs").isSameAs(q);

        // a debt of 3,000,000 units at 10 units/s: 300,000 s (83 h) to pay back
        q.forceTake(3_000_000);
        store.changed(BucketKind.GUEST, "quick");
        clock.advance(Duration.ofHours(70)); // idle 70 h: more than twice a day, less than the debt
        assertThat(store.bucket(BucketKind.GUEST, "quick", quick)).as("still paying back: kept").isSameAs(q);
    }

    @Test
    void holdsAtMostMaxTrackedTenants() {
        LocalBucketStore store = new LocalBucketStore(50, clock);
        for (int i = 0; i < 10_000; i++) store.bucket(BucketKind.TENANT, "t" + i, config);
        assertThat(store.tenantCount()).isLessThanOrEqualTo(50);
    }

    @Test
    void aFloodOfGuestIdsNeverEvictsAnAssignedTenantsBucket() {
        LocalBucketStore store = new LocalBucketStore(50, clock);
        QuotaBucket acme = store.bucket(BucketKind.TENANT, "acme", config);
        acme.tryTake(10);
        for (int i = 0; i < 10_000; i++) store.bucket(BucketKind.GUEST, "spoof-" + i, config);
        assertThat(store.guestCount()).isLessThanOrEqualTo(50);
        assertThat(store.tenantCount()).isEqualTo(1);
        assertThat(store.bucket(BucketKind.TENANT, "acme", config)).isSameAs(acme);
        assertThat(store.bucket(BucketKind.GUEST, "acme", config)).as("tables are separate").isNotSameAs(acme);
    }

    @Test
    void theGlobalBucketIsNeverDropped() {
        LocalBucketStore store = new LocalBucketStore(1, clock);
        QuotaBucket g = store.bucket(BucketKind.GLOBAL, "global", config);
        for (int i = 0; i < 100; i++) store.bucket(BucketKind.TENANT, "t" + i, config);
        clock.advance(Duration.ofDays(30));
        assertThat(store.bucket(BucketKind.GLOBAL, "global", config)).isSameAs(g);
    }

    @Test
    void aBucketInDebtIsKeptUntilItHasPaidTheDebtAndRefilled() {
        LocalBucketStore store = new LocalBucketStore(100, clock);
        BucketLimits small = BucketLimits.of(List.of(new Bandwidth("burst", 10, 1, Duration.ofSeconds(1))));
        QuotaBucket b = store.bucket(BucketKind.TENANT, "acme", small);
        b.tryTake(10);
        b.forceTake(300); // 300 units of debt, as reconciliation leaves it
        store.changed(BucketKind.TENANT, "acme"); // what reconciliation tells the store after charging the excess

        // empty -> full is 10 s, but the debt adds 300 s: idle 309 s is past any keep time without the debt
        clock.advance(Duration.ofSeconds(309));
        assertThat(store.bucket(BucketKind.TENANT, "acme", small)).as("still paying back: kept").isSameAs(b);
        assertThat(b.available()).isEqualTo(9);
        assertThat(LocalBucketStore.idleNanos((MonitorBucket) b))
                .isEqualTo(Duration.ofSeconds(10).toNanos());
        b.forceTake(14); // -5
        assertThat(LocalBucketStore.idleNanos((MonitorBucket) b))
                .isEqualTo(Duration.ofSeconds(15).toNanos());
    }

    @Test
    void timeToFillIsTheSlowestBandwidth() {
        assertThat(LocalBucketStore.nanosToFill(config)).isEqualTo(Duration.ofDays(1).toNanos());
    }

    /**
     * With the JVM's clock, a client that waits exactly the wait it was told finds its units (what a 429's
     * Retry-After promises, to the nanosecond here). Sleeping never wakes early, so this holds on any
     * machine, however loaded; it would fail with a clock cached behind the real one.
     */
    @Test
    void withTheJvmClockAClientThatWaitsTheWaitItWasToldFindsItsUnits() throws InterruptedException {
        BucketStore store = BucketStore.local(100, QuotaClock.system());
        BucketLimits oneEvery20ms = BucketLimits.of(List.of(new Bandwidth("quick", 1, 1, Duration.ofMillis(20))));
        QuotaBucket bucket = store.bucket(BucketKind.TENANT, "t", oneEvery20ms);
        for (int attempt = 0; attempt < 50; attempt++) {
            long wait;
            while ((wait = bucket.take(1)) == 0) {
                // spend what is there: the next take is refused and states its wait
            }
            assertThat(wait).as("attempt %d", attempt).isPositive().isLessThanOrEqualTo(Duration.ofMillis(20).toNanos());
            Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
            assertThat(bucket.take(1)).as("attempt %d: taken after waiting %d ns", attempt, wait).isZero();
        }
    }
}

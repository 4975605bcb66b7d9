package io.quotagate.filter.store;

import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.Algorithm;
import io.quotagate.plans.Bandwidth;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What every {@link BucketStore} must do, whatever holds the buckets: run by a subclass per store
 * (local; in limiter-redis: Redis, Redis with a local allowance, and the failover path while Redis is
 * unreachable), as bucket4j runs one abstract test against every backend. Subclasses give a fresh,
 * empty store per test, on {@link #clock} (its local and, for Redis, its wall time).
 */
public abstract class BucketStoreContract {
    /** 10 units of burst, 1 unit per second. */
    protected static final BucketLimits TEN_PER_TEN_SECONDS = BucketLimits.of(List.of(
            new Bandwidth("burst", 10, 1, Duration.ofSeconds(1))));

    /** The time of the store under test; the contract moves it. */
    protected final ManualClock clock = new ManualClock();

    /** A store on {@link #clock} that no other test shares. */
    protected abstract BucketStore store();

    /**
     * 10 units of {@code algorithm}: a token bucket and a GCRA cell of burst 10 refilled 1 a second, a
     * sliding window of 10 in any 10 seconds; not the starting limits (so every store moves to them).
     */
    protected static BucketLimits tenOf(Algorithm algorithm) {
        long refill = algorithm == Algorithm.SLIDING_WINDOW ? 10 : 1;
        Duration period = algorithm == Algorithm.SLIDING_WINDOW ? Duration.ofSeconds(10) : Duration.ofSeconds(1);
        return BucketLimits.next(null, List.of(new Bandwidth("burst", 10, refill, period, algorithm)));
    }

    /**
     * The wait of 3 units after 10 were taken at once: 3 seconds for a token bucket and a GCRA cell; for a
     * sliding window, until the sub-window of the 10 leaves the window, from 10 to 11 seconds depending on
     * where in its sub-window (a second) the take fell.
     */
    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void everyAlgorithmTakesRefusesWithItsWaitAndAdmitsOnceItIsWaited(Algorithm algorithm) {
        BucketStore store = store();
        BucketLimits limits = tenOf(algorithm);
        QuotaBucket b = store.bucket(BucketKind.TENANT, "acme", limits);
        assertThat(b.take(4)).isZero();
        assertThat(b.take(6)).isZero();
        assertThat(b.availablePerBandwidth()).containsExactly(0);
        long wait = b.take(3);
        if (algorithm == Algorithm.SLIDING_WINDOW) {
            assertThat(wait).isBetween(Duration.ofSeconds(10).toNanos(), Duration.ofSeconds(11).toNanos());
        } else {
            assertThat(wait).isEqualTo(Duration.ofSeconds(3).toNanos());
        }
        assertThat(b.take(11)).as("more than the capacity: never").isEqualTo(Long.MAX_VALUE);
        clock.advanceNanos(wait);
        assertThat(b.take(3)).as("after the wait").isZero();
        clock.advance(Duration.ofSeconds(1));
        Probe p = store.takeAll(new QuotaBucket[]{store.bucket(BucketKind.TENANT, "acme", limits)}, 1, 1, true);
        assertThat(p.taken()).isTrue();
        // the window let all 10 go at once: 10 - 3 - 1; the others refilled 1 unit and took it
        long left = algorithm == Algorithm.SLIDING_WINDOW ? 6 : 0;
        assertThat(p.remaining()[0]).as("remaining from the same operation").containsExactly(left);
    }

    /**
     * A GCRA cell of millions of units a second counts every unit (a global quota or a byte cost): its arrival
     * time is not kept as an absolute time in microseconds, whose double holds only quarters of one (each take of
     * a third of a microsecond was counted as a quarter: a third more admitted).
     */
    @Test
    void aGcraCellOfMillionsOfUnitsASecondCountsEveryUnit() {
        BucketStore store = store();
        BucketLimits limits = BucketLimits.of(java.util.List.of(
                io.quotagate.plans.Bandwidth.gcra("b0", 10, 3_000_000, Duration.ofSeconds(1))));
        QuotaBucket b = store.bucket(BucketKind.TENANT, "acme", limits);
        for (int i = 0; i < 10; i++) assertThat(b.take(1)).as("unit %d of the burst", i + 1).isZero();
        assertThat(b.take(1)).as("the 11th unit while time stands still").isPositive();
        clock.advance(Duration.ofSeconds(1));
        int admitted = 0;
        for (int i = 0; i < 20; i++) if (b.take(1) == 0) admitted++;
        // a store with a local allowance may hold part of a burst back while it shares; none admits more
        assertThat(admitted).as("admitted of 20 after a second").isBetween(1, 10);
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void movingToAnotherAlgorithmKeepsTheUnitsSpent(Algorithm from) {
        BucketStore store = store();
        assertThat(store.bucket(BucketKind.TENANT, "acme", tenOf(from)).take(7)).isZero();
        for (Algorithm to : Algorithm.values()) {
            assertThat(store.bucket(BucketKind.TENANT, "acme", tenOf(to)).available())
                    .as("%s to %s: neither reset nor charged twice", from, to).isEqualTo(3);
        }
        assertThat(store.bucket(BucketKind.TENANT, "acme", tenOf(from)).available()).as("back to %s", from).isEqualTo(3);
    }

    @Test
    void oneOperationDecidesBucketsOfMixedAlgorithmsAllOrNone() {
        BucketStore store = store();
        List<Bandwidth> bandwidths = new java.util.ArrayList<>();
        bandwidths.add(new Bandwidth("tokens", 10, 1, Duration.ofSeconds(1), Algorithm.TOKEN_BUCKET));
        bandwidths.add(new Bandwidth("cell", 8, 1, Duration.ofSeconds(1), Algorithm.GCRA));
        bandwidths.add(new Bandwidth("window", 6, 6, Duration.ofSeconds(60), Algorithm.SLIDING_WINDOW));
        BucketLimits mixed = BucketLimits.next(null, bandwidths);
        QuotaBucket[] buckets = {store.bucket(BucketKind.TENANT, "acme", mixed),
                store.bucket(BucketKind.GLOBAL, "all", tenOf(Algorithm.GCRA))};
        Probe first = store.takeAll(buckets, 2, 5, true);
        assertThat(first.taken()).isTrue();
        assertThat(first.remaining()[0]).containsExactly(5, 3, 1);
        assertThat(first.remaining()[1]).containsExactly(5);
        Probe second = store.takeAll(buckets, 2, 4, true);
        assertThat(second.taken()).as("the cell has 3").isFalse();
        assertThat(second.waits()[0]).as("the slowest lane's wait").isGreaterThanOrEqualTo(Duration.ofSeconds(1).toNanos());
        assertThat(buckets[1].available()).as("nothing taken from the other bucket").isEqualTo(5);
    }

    @Test
    void aSlidingWindowReservesNothingAndRefusesWhatItCannotTakeNow() {
        BucketStore store = store();
        QuotaBucket b = store.bucket(BucketKind.TENANT, "acme", tenOf(Algorithm.SLIDING_WINDOW));
        assertThat(b.reserve(10, Duration.ofMinutes(1).toNanos())).as("there: taken without a wait").isZero();
        long wait = b.reserve(1, Duration.ofMinutes(1).toNanos());
        assertThat(wait).as("a wait within the max: refused all the same").isGreaterThan(Duration.ofMinutes(1).toNanos());
        assertThat(b.available()).as("nothing taken").isZero();
        clock.advance(Duration.ofSeconds(11));
        assertThat(b.available()).isEqualTo(10);
    }

    private void advance(Duration d) {
        clock.advance(d);
    }

    /** Far in the real future: a counter's expiry (Redis takes it as an absolute time). */
    private static final long LATER = System.currentTimeMillis() + Duration.ofDays(30).toMillis();

    @Test
    void aQuotaCounterAddsWithinItsLimitAndRefusesWhatWouldExceedIt() {
        QuotaCounters c = store().quotaCounters().orElseThrow();
        long now = System.currentTimeMillis();
        assertThat(c.used("monthly:acme:2027-03-01")).isZero();
        assertThat(c.tryAdd("monthly:acme:2027-03-01", 3, 5, now, LATER)).isEqualTo(3);
        assertThat(c.tryAdd("monthly:acme:2027-03-01", 3, 5, now, LATER)).as("-1 - used").isEqualTo(-4);
        assertThat(c.tryAdd("monthly:acme:2027-03-01", 2, 5, now, LATER)).isEqualTo(5);
        assertThat(c.used("monthly:acme:2027-03-01")).isEqualTo(5);
        assertThat(c.used("monthly:acme:2027-04-01")).as("another period").isZero();
        assertThat(c.used("monthly:globex:2027-03-01")).as("another tenant").isZero();
    }

    /** True for a store that cannot reach its shared storage: it refuses to claim (throws) rather than claim locally. */
    protected boolean unreachable() {
        return false;
    }

    @Test
    void aQuotaEventIsClaimedOnceAndEachPeriodAndThresholdApart() {
        QuotaCounters c = store().quotaCounters().orElseThrow();
        if (unreachable()) {
            assertThatThrownBy(() -> c.claim("monthly:acme:2027-03-01:near:80", LATER))
                    .as("no claim without the shared store: the event waits").isInstanceOf(RuntimeException.class);
            return;
        }
        assertThat(c.claim("monthly:acme:2027-03-01:near:80", LATER)).isTrue();
        assertThat(c.claim("monthly:acme:2027-03-01:near:80", LATER)).as("claimed already").isFalse();
        assertThat(c.claim("monthly:acme:2027-03-01:near:90", LATER)).as("another threshold").isTrue();
        assertThat(c.claim("monthly:acme:2027-04-01:near:80", LATER)).as("another period").isTrue();
        assertThat(c.claim("monthly:globex:2027-03-01:near:80", LATER)).as("another tenant").isTrue();
        assertThat(c.used("monthly:acme:2027-03-01")).as("a claim is no count").isZero();
    }

    @Test
    void aQuotaCounterTakesAnExcessAndGivesBackARefundNeverBelowZero() {
        QuotaCounters c = store().quotaCounters().orElseThrow();
        long now = System.currentTimeMillis();
        c.tryAdd("daily:acme:2027-03-01", 4, 5, now, LATER);
        c.add("daily:acme:2027-03-01", 3, now, LATER);
        assertThat(c.used("daily:acme:2027-03-01")).isEqualTo(7);
        c.add("daily:acme:2027-03-01", -10, now, LATER);
        assertThat(c.used("daily:acme:2027-03-01")).isZero();
        c.add("daily:nobody:2027-03-01", -2, now, LATER);
        assertThat(c.used("daily:nobody:2027-03-01")).as("a refund creates no counter").isZero();
    }

    @Test
    void aNewBucketIsFull() {
        QuotaBucket b = store().bucket(BucketKind.TENANT, "acme", TEN_PER_TEN_SECONDS);
        assertThat(b.available()).isEqualTo(10);
        assertThat(b.tryTake(1)).isTrue();
        assertThat(b.available()).isEqualTo(9);
    }

    @Test
    void consumptionIsKeptAcrossLookups() {
        BucketStore store = store();
        assertThat(store.bucket(BucketKind.TENANT, "acme", TEN_PER_TEN_SECONDS).tryTake(10)).isTrue();
        QuotaBucket again = store.bucket(BucketKind.TENANT, "acme", TEN_PER_TEN_SECONDS);
        assertThat(again.tryTake(1)).isFalse();
        assertThat(again.nanosToWait(1)).isEqualTo(Duration.ofSeconds(1).toNanos());
    }

    @Test
    void refillsAsTimePasses() {
        BucketStore store = store();
        QuotaBucket b = store.bucket(BucketKind.TENANT, "acme", TEN_PER_TEN_SECONDS);
        assertThat(b.tryTake(10)).isTrue();
        advance(Duration.ofMillis(2_500));
        assertThat(store.bucket(BucketKind.TENANT, "acme", TEN_PER_TEN_SECONDS).tryTake(2)).isTrue();
        assertThat(b.tryTake(1)).isFalse();
        assertThat(b.nanosToWait(1)).isEqualTo(Duration.ofMillis(500).toNanos());
    }

    @Test
    void tenantsAndKindsDoNotShareBuckets() {
        BucketStore store = store();
        assertThat(store.bucket(BucketKind.TENANT, "acme", TEN_PER_TEN_SECONDS).tryTake(10)).isTrue();
        assertThat(store.bucket(BucketKind.TENANT, "globex", TEN_PER_TEN_SECONDS).tryTake(10)).isTrue();
        assertThat(store.bucket(BucketKind.GLOBAL, "acme", TEN_PER_TEN_SECONDS).tryTake(10)).isTrue();
        assertThat(store.bucket(BucketKind.GUEST, "acme", TEN_PER_TEN_SECONDS).tryTake(10)).isTrue();
        assertThat(store.bucket(BucketKind.TENANT, "acme", TEN_PER_TEN_SECONDS).tryTake(1)).isFalse();
    }

    @Test
    void refundsAreGivenBackUpToCapacity() {
        BucketStore store = store();
        QuotaBucket b = store.bucket(BucketKind.TENANT, "acme", TEN_PER_TEN_SECONDS);
        assertThat(b.tryTake(10)).isTrue();
        b.refund(3);
        assertThat(b.tryTake(3)).isTrue();
        assertThat(b.tryTake(1)).isFalse();
        b.refund(100);
        assertThat(store.bucket(BucketKind.TENANT, "acme", TEN_PER_TEN_SECONDS).available())
                .as("never above capacity").isEqualTo(10);
    }

    @Test
    void aForcedTakeGoesIntoDebtThatRefillPaysBack() {
        QuotaBucket b = store().bucket(BucketKind.TENANT, "acme", TEN_PER_TEN_SECONDS);
        b.forceTake(13);
        assertThat(b.available()).isEqualTo(-3);
        assertThat(b.nanosToWait(1)).isEqualTo(Duration.ofSeconds(4).toNanos());
        advance(Duration.ofSeconds(4));
        assertThat(b.tryTake(1)).isTrue();
    }

    @Test
    void aDebtOfCenturiesWaitsCenturiesNeverANegativeTime() {
        // 401 years of refill for the next unit: more nanoseconds than a long holds (292 years)
        QuotaBucket b = store().bucket(BucketKind.TENANT, "acme", BucketLimits.of(List.of(
                new Bandwidth("year", 10, 1, Duration.ofDays(365)))));
        b.forceTake(410);
        assertThat(b.tryTake(1)).isFalse();
        assertThat(b.nanosToWait(1)).isGreaterThanOrEqualTo(Duration.ofDays(365L * 290).toNanos());
    }

    @Test
    void estimatesWithoutTaking() {
        QuotaBucket b = store().bucket(BucketKind.GLOBAL, "global", TEN_PER_TEN_SECONDS);
        assertThat(b.tryTake(8)).isTrue();
        assertThat(b.nanosToWait(2)).isZero();
        assertThat(b.nanosToWait(4)).isEqualTo(Duration.ofSeconds(2).toNanos());
        assertThat(b.tryTake(2)).isTrue();
    }

    @Test
    void aBucketNeverUsedIsSeenFullByALook() {
        QuotaBucket b = store().bucket(BucketKind.GUEST, "new", TEN_PER_TEN_SECONDS);
        assertThat(b.nanosToWait(10)).isZero();
        assertThat(b.tryTake(10)).isTrue();
        assertThat(b.nanosToWait(1)).isEqualTo(Duration.ofSeconds(1).toNanos());
    }

    @Test
    void reportsEveryBandwidthInTheLimitsOrder() {
        BucketLimits two = BucketLimits.of(List.of(new Bandwidth("burst", 10, 1, Duration.ofSeconds(1)),
                new Bandwidth("daily", 100, 100, Duration.ofDays(1))));
        QuotaBucket b = store().bucket(BucketKind.TENANT, "acme", two);
        assertThat(b.tryTake(4)).isTrue();
        assertThat(b.availablePerBandwidth()).containsExactly(6, 96);
        assertThat(b.available()).isEqualTo(6);
    }

    @Test
    void aBucketToSettleIsTheBucketAsItIsNeverMovedBackToOlderLimits() {
        BucketStore store = store();
        assertThat(store.bucket(BucketKind.TENANT, "acme", TEN_PER_TEN_SECONDS).tryTake(7)).isTrue();
        BucketLimits larger = BucketLimits.next(TEN_PER_TEN_SECONDS,
                List.of(new Bandwidth("burst", 20, 2, Duration.ofSeconds(1))));
        assertThat(store.bucket(BucketKind.TENANT, "acme", larger).tryTake(1)).isTrue(); // moved: 2 left
        advance(Duration.ofSeconds(5)); // 12 at the larger limits
        // a request admitted at the old limits ends: its refund goes to the bucket as it is now
        store.bucketToSettle(BucketKind.TENANT, "acme", TEN_PER_TEN_SECONDS).refund(5);
        assertThat(store.bucket(BucketKind.TENANT, "acme", larger).available()).isEqualTo(17);
        // a bucket the store does not hold is created at the limits given
        assertThat(store.bucketToSettle(BucketKind.TENANT, "new", TEN_PER_TEN_SECONDS).available()).isEqualTo(10);
    }

    @Test
    void otherLimitsMoveTheBucketKeepingItsTokens() {
        BucketStore store = store();
        assertThat(store.bucket(BucketKind.TENANT, "acme", TEN_PER_TEN_SECONDS).tryTake(7)).isTrue();
        BucketLimits larger = BucketLimits.next(TEN_PER_TEN_SECONDS,
                List.of(new Bandwidth("burst", 20, 2, Duration.ofSeconds(1))));
        QuotaBucket moved = store.bucket(BucketKind.TENANT, "acme", larger);
        assertThat(moved.available()).as("AS_IS: no extra burst from raised limits").isEqualTo(3);
        advance(Duration.ofSeconds(1));
        assertThat(moved.available()).as("refilled at the new rate").isEqualTo(5);
        BucketLimits smaller = BucketLimits.next(larger, List.of(new Bandwidth("burst", 2, 1, Duration.ofSeconds(1))));
        assertThat(store.bucket(BucketKind.TENANT, "acme", smaller).available()).as("capped at the new capacity")
                .isEqualTo(2);
    }

    @Test
    void aTakeByIdTakesFromTheBucketALookupFindsAndSaysTheWaitOfARefusal() {
        BucketStore store = store();
        assertThat(store.take(BucketKind.TENANT, "acme", TEN_PER_TEN_SECONDS, 8)).isZero();
        assertThat(store.bucket(BucketKind.TENANT, "acme", TEN_PER_TEN_SECONDS).available()).isEqualTo(2);
        assertThat(store.take(BucketKind.TENANT, "acme", TEN_PER_TEN_SECONDS, 5))
                .as("3 units short at 1 a second").isEqualTo(Duration.ofSeconds(3).toNanos());
        assertThat(store.take(BucketKind.GUEST, "acme", TEN_PER_TEN_SECONDS, 10)).as("another kind").isZero();
        assertThat(store.take(BucketKind.GLOBAL, "acme", TEN_PER_TEN_SECONDS, 10)).as("the global kind").isZero();
        advance(Duration.ofSeconds(3));
        assertThat(store.take(BucketKind.TENANT, "acme", TEN_PER_TEN_SECONDS, 5)).as("after the wait").isZero();
        assertThat(store.bucket(BucketKind.TENANT, "acme", TEN_PER_TEN_SECONDS).available()).isZero();
    }

    @Test
    void takeAllTakesFromEveryBucketOrFromNoneAndSaysEachWaitAndRemainder() {
        BucketStore store = store();
        QuotaBucket tenant = store.bucket(BucketKind.TENANT, "acme", TEN_PER_TEN_SECONDS);
        QuotaBucket global = store.bucket(BucketKind.GLOBAL, "global", TEN_PER_TEN_SECONDS);
        QuotaBucket[] both = {tenant, global};
        assertThat(global.tryTake(6)).isTrue();
        Probe taken = store.takeAll(both, 2, 3, true);
        assertThat(taken.taken()).as("3 fit in both").isTrue();
        assertThat(taken.waits()).containsExactly(0, 0);
        assertThat(taken.remaining()).as("what the take left, from the same operation")
                .isDeepEqualTo(new long[][]{{7}, {1}});
        assertThat(tenant.available()).isEqualTo(7);
        assertThat(global.available()).isEqualTo(1);

        Probe refused = store.takeAll(both, 2, 3, true);
        assertThat(refused.taken()).as("the global bucket holds 1").isFalse();
        assertThat(refused.waits()).as("the tenant could; the global bucket needs 2 s").containsExactly(0,
                Duration.ofSeconds(2).toNanos());
        assertThat(refused.longestWait()).isEqualTo(Duration.ofSeconds(2).toNanos());
        assertThat(refused.remaining()).as("nothing taken: what the refusal found")
                .isDeepEqualTo(new long[][]{{7}, {1}});
        assertThat(tenant.available()).as("nothing taken from the tenant").isEqualTo(7);
        assertThat(global.available()).isEqualTo(1);

        Probe never = store.takeAll(both, 2, 11, false);
        assertThat(never.taken()).as("more than a capacity").isFalse();
        assertThat(never.waits()[1]).as("never").isEqualTo(Long.MAX_VALUE);

        Probe look = store.waits(both, 2, 8, true);
        assertThat(look.taken()).isFalse();
        assertThat(look.waits()).containsExactly(Duration.ofSeconds(1).toNanos(), Duration.ofSeconds(7).toNanos());
        assertThat(look.remaining()).isDeepEqualTo(new long[][]{{7}, {1}});
        advance(Duration.ofSeconds(2));
        assertThat(store.takeAll(both, 2, 3, false).taken()).isTrue();
        assertThat(tenant.available()).isEqualTo(6);
        assertThat(global.available()).isZero();
    }

    @Test
    void takeAllOfARefusedRequestLeavesTheOtherBucketsUntouched() {
        BucketStore store = store();
        QuotaBucket pool = store.bucket(BucketKind.GLOBAL, "guests", TEN_PER_TEN_SECONDS);
        QuotaBucket guest = store.bucket(BucketKind.GUEST, "made-up", TEN_PER_TEN_SECONDS);
        assertThat(pool.tryTake(10)).isTrue();
        Probe refused = store.takeAll(new QuotaBucket[]{pool, guest}, 2, 1, false);
        assertThat(refused.taken()).isFalse();
        assertThat(refused.waits()).containsExactly(Duration.ofSeconds(1).toNanos(), 0);
        assertThat(store.bucket(BucketKind.GUEST, "made-up", TEN_PER_TEN_SECONDS).available()).isEqualTo(10);
    }

    @Test
    void aReserveTakesIntoDebtUpToTheMaxWaitAndSaysTheWait() {
        QuotaBucket b = store().bucket(BucketKind.TENANT, "acme", TEN_PER_TEN_SECONDS);
        long twoSeconds = Duration.ofSeconds(2).toNanos();
        assertThat(b.reserve(8, twoSeconds)).as("there: no wait").isZero();
        assertThat(b.reserve(3, twoSeconds)).as("1 short: taken, 1 s to wait").isEqualTo(Duration.ofSeconds(1).toNanos());
        assertThat(b.available()).isEqualTo(-1);
        assertThat(b.reserve(1, twoSeconds)).as("behind the debt").isEqualTo(twoSeconds);
        assertThat(b.reserve(1, twoSeconds)).as("3 s: longer than the max, nothing taken")
                .isEqualTo(Duration.ofSeconds(3).toNanos());
        assertThat(b.available()).isEqualTo(-2);
        assertThat(b.reserve(11, Long.MAX_VALUE - 1)).as("more than the capacity: never").isEqualTo(Long.MAX_VALUE);
        assertThat(b.available()).isEqualTo(-2);
        b.refund(1); // a delayed request that never ran gives its reservation back
        assertThat(b.available()).isEqualTo(-1);
        assertThat(b.reserve(1, 0)).as("a max wait of 0 is a take").isEqualTo(twoSeconds);
        assertThat(b.available()).isEqualTo(-1);
        advance(Duration.ofSeconds(2));
        assertThat(b.reserve(1, 0)).isZero();
    }

    @Test
    void reserveAllTakesFromEveryBucketWithinTheMaxWaitOrFromNone() {
        BucketStore store = store();
        QuotaBucket tenant = store.bucket(BucketKind.TENANT, "acme", TEN_PER_TEN_SECONDS);
        QuotaBucket global = store.bucket(BucketKind.GLOBAL, "global", TEN_PER_TEN_SECONDS);
        QuotaBucket[] both = {tenant, global};
        long threeSeconds = Duration.ofSeconds(3).toNanos();
        assertThat(global.tryTake(9)).isTrue();
        Probe reserved = store.reserveAll(both, 2, 3, threeSeconds, true);
        assertThat(reserved.taken()).as("the global bucket 2 short: 2 s").isTrue();
        assertThat(reserved.waits()).containsExactly(0, Duration.ofSeconds(2).toNanos());
        assertThat(reserved.remaining()).as("in debt").isDeepEqualTo(new long[][]{{7}, {-2}});
        assertThat(tenant.available()).isEqualTo(7);
        assertThat(global.available()).isEqualTo(-2);

        Probe refused = store.reserveAll(both, 2, 2, threeSeconds, false);
        assertThat(refused.taken()).as("4 s for the global bucket").isFalse();
        assertThat(refused.waits()[1]).isEqualTo(Duration.ofSeconds(4).toNanos());
        assertThat(tenant.available()).as("nothing taken from the tenant").isEqualTo(7);
        assertThat(global.available()).isEqualTo(-2);

        assertThat(store.reserveAll(both, 2, 1, 0, false).taken()).as("a max wait of 0 is takeAll").isFalse();
        assertThat(tenant.available()).isEqualTo(7);
        advance(Duration.ofSeconds(3));
        Probe taken = store.reserveAll(both, 2, 1, 0, false);
        assertThat(taken.taken()).isTrue();
        assertThat(taken.waits()).containsExactly(0, 0);
        assertThat(global.available()).isZero();
    }

    @Test
    void countsAtLeastThisInstance() {
        assertThat(store().instanceCount()).isGreaterThanOrEqualTo(1);
    }
}

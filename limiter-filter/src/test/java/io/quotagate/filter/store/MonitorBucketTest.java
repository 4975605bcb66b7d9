package io.quotagate.filter.store;

import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.BucketListener;
import io.github.bucket4j.TokensInheritanceStrategy;
import io.github.bucket4j.EstimationProbe;
import io.github.bucket4j.MathType;
import io.github.bucket4j.local.LocalBucket;
import io.github.bucket4j.local.SynchronizedBucket;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.filter.testing.Race;
import io.quotagate.plans.Bandwidth;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class MonitorBucketTest {

    private static final BucketLimits LIMITS = BucketLimits.of(List.of(
            new Bandwidth("second", 10, 10, Duration.ofSeconds(1)),
            new Bandwidth("minute", 100, 100, Duration.ofMinutes(1))));
    private static final BucketLimits SLOWER = BucketLimits.next(LIMITS, List.of(
            new Bandwidth("second", 5, 1, Duration.ofSeconds(1))));

    @Test
    void answersEveryOperationExactlyAsBucket4jsSynchronizedBucketDoes() {
        compareWithBucket4j(new SplittableRandom(42), 20_000, 300_000_000L, 12, List.of(LIMITS, SLOWER));
    }

    @Test
    void answersAsBucket4jWithOddRatesThreeBandwidthsRenamedBandwidthsAndDebtsOfCenturies() {
        BucketLimits odd = BucketLimits.of(List.of(
                new Bandwidth("burst", 7, 3, Duration.ofMillis(1_234)),
                new Bandwidth("minute", 97, 13, Duration.ofSeconds(61)),
                new Bandwidth("day", 10_007, 9_973, Duration.ofHours(25))));
        BucketLimits renamed = BucketLimits.next(odd, List.of(
                new Bandwidth("day", 5_003, 7, Duration.ofHours(23)),
                new Bandwidth("hour", 11, 11, Duration.ofMinutes(59))));
        BucketLimits huge = BucketLimits.next(odd, List.of(
                new Bandwidth("burst", Long.MAX_VALUE / 4, 1, Duration.ofDays(3_650))));
        // tokens x elapsed past a long: the refill's floating-point path
        BucketLimits vast = BucketLimits.next(odd, List.of(new Bandwidth("burst", 7, 3, Duration.ofMillis(1_234)),
                new Bandwidth("vast", Long.MAX_VALUE, 1_000_000_000_000L, Duration.ofDays(3_650))));
        compareWithBucket4j(new SplittableRandom(7), 30_000, 2_000_000_000L, 40, List.of(odd, renamed, huge, vast));
    }

    /**
     * A bucket refills to the brim exactly when its fractions add up to its last missing token, not one
     * nanosecond before nor after (the refill tells "full" by a product, not a quotient): each lane's instant,
     * computed from the state, is crossed nanosecond by nanosecond with a fraction carried, and every state
     * along the way is bucket4j's.
     */
    @Test
    void refillsToTheBrimAtTheVeryNanosecondBucket4jDoes() {
        BucketLimits onePerPeriod = BucketLimits.of(List.of(new Bandwidth("slow", 7, 1, Duration.ofMillis(1_234))));
        BucketLimits odd = BucketLimits.of(List.of(
                new Bandwidth("burst", 7, 3, Duration.ofMillis(1_234)),
                new Bandwidth("minute", 97, 13, Duration.ofSeconds(61))));
        for (BucketLimits limits : List.of(onePerPeriod, odd)) {
            ManualClock clock = new ManualClock();
            MonitorBucket ours = new MonitorBucket(limits, clock.timeMeter());
            LocalBucket theirs = new SynchronizedBucket(config(limits), MathType.INTEGER_64_BITS,
                    clock.timeMeter(), BucketListener.NOPE);
            assertThat(ours.take(5)).isZero();
            assertThat(theirs.tryConsume(5)).isTrue();
            clock.advance(Duration.ofMillis(300)); // not a whole token of either lane: a fraction is carried
            assertThat(ours.take(1)).isZero();
            assertThat(theirs.tryConsume(1)).isTrue();
            long[] lanes = limits.lanes;
            for (int i = 0; i < lanes.length / 3; i++) {
                long capacity = lanes[3 * i];
                long tokens = lanes[3 * i + 1];
                long period = lanes[3 * i + 2];
                long[] state = Arrays.stream(stateOf(ours.toString()).replaceAll("[\\[\\] ]", "").split(","))
                        .mapToLong(Long::parseLong).toArray();
                long size = state[3 * i + 1];
                assertThat(size).as("lane %d still short when its turn comes", i).isLessThan(capacity);
                long full = state[3 * i] + Math.floorDiv((capacity - size) * period - state[3 * i + 2] + tokens - 1, tokens);
                clock.advanceNanos(full - 2 - clock.nanoTime());
                for (int step = -2; step <= 2; step++, clock.advanceNanos(1)) {
                    assertThat(ours.available()).as("lane %d, %d ns", i, step).isEqualTo(theirs.getAvailableTokens());
                    same(step, "state", stateOf(ours.toString()),
                            stateOf(theirs.asVerbose().getAvailableTokens().getState().toString()));
                    long held = ours.availablePerBandwidth()[i];
                    if (step < 0) assertThat(held).as("lane %d, %d ns before", i, -step).isLessThan(capacity);
                    else assertThat(held).as("lane %d, %d ns after", i, step).isEqualTo(capacity);
                }
            }
        }
    }

    @Test
    void refusesNonPositiveUnitsAsBucket4jDoesAndTakesNoDebtOfNothing() {
        MonitorBucket bucket = new MonitorBucket(LIMITS, new ManualClock().timeMeter());
        for (long units : new long[]{0, -1}) {
            assertThatThrownBy(() -> bucket.tryTake(units)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> bucket.take(units)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> bucket.reserve(units, 1)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> bucket.nanosToWait(units)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> bucket.refund(units)).isInstanceOf(IllegalArgumentException.class);
            bucket.forceTake(units); // nothing to take: as Debt.take, nothing happens
        }
        assertThat(bucket.availablePerBandwidth()).containsExactly(10, 100);
    }

    /**
     * Random operations, times and moves between {@code limits} on our bucket and on bucket4j's
     * {@code SynchronizedBucket} read by the same clock: every answer and every state must agree. The
     * reference for {@code take} and {@code reserve} is what they were built from bucket4j's operations.
     */
    private static void compareWithBucket4j(SplittableRandom random, int steps, long maxStepNanos, long maxUnits,
                                            List<BucketLimits> limits) {
        ManualClock clock = new ManualClock(); // both buckets read the same one
        MonitorBucket ours = new MonitorBucket(limits.get(0), clock.timeMeter());
        LocalBucket theirs = new SynchronizedBucket(config(limits.get(0)), MathType.INTEGER_64_BITS,
                clock.timeMeter(), BucketListener.NOPE);
        for (int step = 0; step < steps; step++) {
            clock.advanceNanos(random.nextLong(0, maxStepNanos));
            long n = random.nextInt(50) == 0 ? random.nextLong(1, Long.MAX_VALUE) : random.nextLong(1, maxUnits);
            int s = step;
            switch (random.nextInt(10)) {
                case 0, 1, 2 -> same(s, "tryTake", ours.tryTake(n), theirs.tryConsume(n));
                case 3 -> same(s, "nanosToWait", ours.nanosToWait(n), waitOf(theirs.estimateAbilityToConsume(n)));
                case 4 -> {
                    ours.refund(n);
                    theirs.addTokens(n);
                }
                case 5 -> {
                    ours.forceTake(n);
                    Debt.take(n, theirs::consumeIgnoringRateLimits);
                }
                case 6 -> same(s, "perBandwidth", Arrays.toString(ours.availablePerBandwidth()), Arrays.toString(
                        theirs.asVerbose().getAvailableTokens().getDiagnostics().getAvailableTokensPerEachBandwidth()));
                case 7 -> same(s, "take", ours.take(n),
                        theirs.tryConsume(n) ? 0 : Math.max(1, waitOf(theirs.estimateAbilityToConsume(n))));
                case 8 -> {
                    long maxWait = random.nextLong(0, 5 * maxStepNanos);
                    long expected = 0;
                    if (!theirs.tryConsume(n)) {
                        expected = Math.max(1, waitOf(theirs.estimateAbilityToConsume(n)));
                        if (expected <= maxWait) Debt.take(n, theirs::consumeIgnoringRateLimits);
                    }
                    same(s, "reserve", ours.reserve(n, maxWait), expected);
                }
                default -> {
                    BucketLimits next = limits.get(random.nextInt(limits.size()));
                    ours.moveTo(next);
                    theirs.replaceConfiguration(config(next), TokensInheritanceStrategy.AS_IS);
                }
            }
            assertThat(ours.available()).as("step %d", step).isEqualTo(theirs.getAvailableTokens());
            assertThat(config(ours.limits())).isSameAs(theirs.getConfiguration());
            // the whole state, refill times and the next tokens' fractions included, both refilled to now
            same(s, "state", stateOf(ours.toString()), stateOf(theirs.asVerbose().getAvailableTokens().getState().toString()));
        }
    }

    /** bucket4j's configuration of these bandwidths, one per distinct list (so the same limits give the same instance). */
    private static final java.util.Map<List<Bandwidth>, BucketConfiguration> CONFIGS = new java.util.concurrent.ConcurrentHashMap<>();

    static BucketConfiguration config(BucketLimits limits) {
        return CONFIGS.computeIfAbsent(limits.bandwidths(), bandwidths -> {
            var builder = BucketConfiguration.builder();
            for (Bandwidth b : bandwidths) {
                builder.addLimit(l -> l.capacity(b.capacity()).refillGreedy(b.refill(), b.period()).id(b.name()));
            }
            return builder.build();
        });
    }

    /** The state array a bucket's or a bucket4j state's {@code toString} ends with: per bandwidth, time, tokens, fraction. */
    private static String stateOf(String text) {
        return text.substring(text.lastIndexOf('['), text.lastIndexOf(']') + 1);
    }

    private static long waitOf(EstimationProbe probe) {
        return probe.canBeConsumed() ? 0 : probe.getNanosToWaitForRefill();
    }

    private static void same(int step, String operation, Object ours, Object theirs) {
        assertThat(String.valueOf(ours)).as("step %d: %s", step, operation).isEqualTo(String.valueOf(theirs));
    }

    @Test
    void everyOperationCallersCanReachHoldsTheMonitor() throws Exception {
        // every operation callers can reach takes the bucket's monitor
        for (Method m : QuotaBucket.class.getMethods()) {
            Method ours = MonitorBucket.class.getMethod(m.getName(), m.getParameterTypes());
            assertThat(Modifier.isSynchronized(ours.getModifiers())).as(m.getName()).isTrue();
        }
        Method takeAt = MonitorBucket.class.getDeclaredMethod("take", long.class, long.class);
        assertThat(Modifier.isSynchronized(takeAt.getModifiers())).as("take at a time read before").isTrue();
    }

    @Test
    void aTakeAtATimeReadBeforeTheBucketsLastRefillDecidesOnItsLaterState() {
        ManualClock clock = new ManualClock();
        BucketLimits tenPerSecond = BucketLimits.of(List.of(new Bandwidth("second", 10, 10, Duration.ofSeconds(1))));
        MonitorBucket bucket = new MonitorBucket(tenPerSecond, clock.timeMeter());
        long readBefore = clock.nanoTime(); // a request reads the clock, then finds the bucket...
        assertThat(bucket.take(10)).isZero();
        clock.advance(Duration.ofMillis(300)); // ...while other requests empty it and it refills 3 units
        assertThat(bucket.take(1)).isZero();

        // the late take refills nothing for the time it read: the 2 units of the later state are all it finds
        assertThat(bucket.take(2, readBefore)).isZero();
        long wait = bucket.take(4, readBefore);
        assertThat(wait).as("counted from the state's time, 300 ms, not from the older read")
                .isEqualTo(Duration.ofMillis(400).toNanos());
        assertThat(bucket.nanosToWait(4)).as("what a take at the clock's own time says").isEqualTo(wait);
        clock.advanceNanos(wait);
        assertThat(bucket.take(4)).as("waiting the stated wait finds the units").isZero();
    }

    @Test
    void threadsRacingForOneBucketNeverTakeMoreThanItHolds() throws Exception {
        BucketLimits noRefill = BucketLimits.of(List.of(new Bandwidth("year", 50_000, 1, Duration.ofDays(365))));
        MonitorBucket bucket = new MonitorBucket(noRefill, new ManualClock().timeMeter());
        int threads = 8;
        AtomicLong taken = new AtomicLong();
        Race.run(threads, t -> {
            long mine = 0;
            for (int i = 0; i < 20_000; i++) {
                if (bucket.tryTake(1)) mine++;
                if (i % 7 == 0 && bucket.tryTake(3)) mine += 3;
            }
            taken.addAndGet(mine);
        });

        assertThat(taken.get()).isEqualTo(50_000);
        assertThat(bucket.available()).isZero();
    }
}

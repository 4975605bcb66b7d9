package io.quotagate.filter.store;

import io.github.bucket4j.BucketListener;
import io.github.bucket4j.EstimationProbe;
import io.github.bucket4j.MathType;
import io.github.bucket4j.local.LocalBucket;
import io.github.bucket4j.local.SynchronizedBucket;
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

class MonitorBucketTest {

    private static final BucketLimits LIMITS = BucketLimits.of(List.of(
            new Bandwidth("second", 10, 10, Duration.ofSeconds(1)),
            new Bandwidth("minute", 100, 100, Duration.ofMinutes(1))));
    private static final BucketLimits SLOWER = BucketLimits.next(LIMITS, List.of(
            new Bandwidth("second", 5, 1, Duration.ofSeconds(1))));

    /** A clock the test moves; both buckets read the same one. */
    private static final class StepClock extends BucketTime {
        long nanos = 1_000_000_000L;

        @Override
        public long currentTimeNanos() {
            return nanos;
        }

        @Override
        boolean refreshed() {
            return false;
        }
    }

    /** A time that trails the clock ({@link TickingTime}) until the bucket asks it to catch up. */
    private static final class TrailingTime extends BucketTime {
        long clock = 1_000_000_000L;
        long shown = clock;
        int refreshes;

        @Override
        public long currentTimeNanos() {
            return shown;
        }

        @Override
        boolean refreshed() {
            refreshes++;
            shown = clock;
            return true;
        }
    }

    /** bucket4j's own bucket on the clock itself: what every answer of a bucket on a trailing time must equal. */
    private static LocalBucket onTheClock(TrailingTime time) {
        return new SynchronizedBucket(LIMITS.configuration(), MathType.INTEGER_64_BITS, new BucketTime() {
            @Override
            public long currentTimeNanos() {
                return time.clock;
            }

            @Override
            boolean refreshed() {
                return false;
            }
        }, BucketListener.NOPE);
    }

    @Test
    void aTimeThatTrailsTheClockNeverRefusesWhatTheClockWouldAdmit() {
        TrailingTime time = new TrailingTime();
        MonitorBucket ours = new MonitorBucket(LIMITS, time);
        LocalBucket theirs = onTheClock(time);
        assertThat(ours.tryTake(10)).isTrue();
        assertThat(theirs.tryConsume(10)).isTrue();

        time.clock += Duration.ofSeconds(1).toNanos(); // ten units arrived; the time shown has not moved
        assertThat(ours.tryTake(10)).as("decided again at the clock's time").isTrue();
        assertThat(theirs.tryConsume(10)).isTrue();
        assertThat(time.refreshes).isEqualTo(1);

        time.clock += Duration.ofMillis(500).toNanos(); // five more; shown still half a second behind
        assertThat(ours.take(5)).isZero();
        assertThat(theirs.tryConsume(5)).isTrue();
        assertThat(ours.available()).isEqualTo(theirs.getAvailableTokens()).isZero();
    }

    @Test
    void everyWaitIsTheClocksNotTheTrailingTimes() {
        TrailingTime time = new TrailingTime();
        MonitorBucket ours = new MonitorBucket(LIMITS, time);
        LocalBucket theirs = onTheClock(time);
        ours.tryTake(10);
        theirs.tryConsume(10);

        time.clock += Duration.ofMillis(300).toNanos(); // shown 300 ms behind: its waits would be 300 ms longer
        long clockWait = waitOf(theirs.estimateAbilityToConsume(6));
        assertThat(clockWait).isEqualTo(Duration.ofMillis(300).toNanos());
        assertThat(ours.nanosToWait(6)).isEqualTo(clockWait);

        time.clock += Duration.ofMillis(100).toNanos();
        assertThat(ours.take(6)).as("a refusal's wait").isEqualTo(waitOf(theirs.estimateAbilityToConsume(6)))
                .isEqualTo(Duration.ofMillis(200).toNanos());

        time.clock += Duration.ofMillis(100).toNanos();
        long reserved = ours.reserve(6, Duration.ofSeconds(1).toNanos());
        assertThat(reserved).as("a delay").isEqualTo(Duration.ofMillis(100).toNanos());
        assertThat(ours.reserve(100, Duration.ofMillis(1).toNanos())).as("a refused reservation's wait")
                .isGreaterThan(Duration.ofMillis(1).toNanos());
    }

    @Test
    void answersEveryOperationExactlyAsBucket4jsSynchronizedBucketDoes() {
        StepClock clock = new StepClock();
        MonitorBucket ours = new MonitorBucket(LIMITS, clock);
        LocalBucket theirs = new SynchronizedBucket(LIMITS.configuration(), MathType.INTEGER_64_BITS, clock,
                BucketListener.NOPE);
        SplittableRandom random = new SplittableRandom(42);
        for (int step = 0; step < 20_000; step++) {
            clock.nanos += random.nextLong(0, 300_000_000L);
            long n = random.nextLong(1, 12);
            int s = step;
            switch (random.nextInt(8)) {
                case 0, 1, 2 -> same(s, "tryTake", ours.tryTake(n), theirs.tryConsume(n));
                case 3 -> same(s, "nanosToWait", ours.nanosToWait(n), waitOf(theirs.estimateAbilityToConsume(n)));
                case 4 -> {
                    ours.refund(n);
                    theirs.addTokens(n);
                }
                case 5 -> {
                    ours.forceTake(n);
                    theirs.consumeIgnoringRateLimits(n);
                }
                case 6 -> same(s, "perBandwidth", Arrays.toString(ours.availablePerBandwidth()), Arrays.toString(
                        theirs.asVerbose().getAvailableTokens().getDiagnostics().getAvailableTokensPerEachBandwidth()));
                default -> {
                    BucketLimits next = random.nextBoolean() ? LIMITS : SLOWER;
                    ours.moveTo(next);
                    theirs.replaceConfiguration(next.configuration(), BucketLimits.INHERITANCE);
                }
            }
            assertThat(ours.available()).as("step %d", step).isEqualTo(theirs.getAvailableTokens());
            assertThat(ours.limits().configuration()).isSameAs(theirs.getConfiguration());
        }
    }

    private static long waitOf(EstimationProbe probe) {
        return probe.canBeConsumed() ? 0 : probe.getNanosToWaitForRefill();
    }

    private static void same(int step, String operation, Object ours, Object theirs) {
        assertThat(String.valueOf(ours)).as("step %d: %s", step, operation).isEqualTo(String.valueOf(theirs));
    }

    @Test
    void everyOperationCallersCanReachHoldsTheMonitor() throws Exception {
        // callers only see QuotaBucket: a bucket4j method added in a release is unreachable, not unlocked
        for (Method m : QuotaBucket.class.getMethods()) {
            Method ours = MonitorBucket.class.getMethod(m.getName(), m.getParameterTypes());
            assertThat(Modifier.isSynchronized(ours.getModifiers())).as(m.getName()).isTrue();
        }
    }

    @Test
    void threadsRacingForOneBucketNeverTakeMoreThanItHolds() throws Exception {
        BucketLimits noRefill = BucketLimits.of(List.of(new Bandwidth("year", 50_000, 1, Duration.ofDays(365))));
        StepClock clock = new StepClock();
        MonitorBucket bucket = new MonitorBucket(noRefill, clock);
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

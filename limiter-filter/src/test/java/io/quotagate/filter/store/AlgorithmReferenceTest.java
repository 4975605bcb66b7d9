package io.quotagate.filter.store;

import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.Algorithm;
import io.quotagate.plans.Bandwidth;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The local bucket's GCRA and sliding window against reference models on a manual clock, with random and
 * adversarial arrivals and costs above 1: GCRA against the token bucket ({@link MonitorBucketTest} checks
 * that one against bucket4j), the sliding window against its promise (never more than its capacity in any
 * window of its period) and against an exact sliding log (what it refuses beyond it, measured).
 */
class AlgorithmReferenceTest {
    /** Burst, rate: a refill that does not divide the period (an emission interval of 142857142.857... ns). */
    private static final long[][] SHAPES = {{10, 7, 1_000_000_000L}, {1, 1, 1_000_000_000L}, {100, 100, 60_000_000_000L},
            {5, 13, 1_000_000_000L}, {20, 3, 86_400_000_000_000L}};

    private static BucketLimits limits(Algorithm a, long capacity, long refill, long periodNanos) {
        return BucketLimits.of(List.of(new Bandwidth("b", capacity, refill, Duration.ofNanos(periodNanos), a)));
    }

    /** A step of time: mostly short, sometimes none (a burst at one instant), sometimes long (idle). */
    private static long step(SplittableRandom r, long emission) {
        return switch (r.nextInt(6)) {
            case 0 -> 0;
            case 1 -> emission; // exactly one emission interval, rounded down: the edge of a unit's arrival
            case 2 -> r.nextLong(0, 3);
            case 3 -> r.nextLong(0, 20 * emission + 1);
            default -> r.nextLong(0, emission + 1);
        };
    }

    @Test
    void gcraDecidesEveryRequestAsATokenBucketOfTheSameBurstAndRate() {
        SplittableRandom random = new SplittableRandom(57);
        for (long[] shape : SHAPES) {
            for (int run = 0; run < 20; run++) {
                ManualClock clock = new ManualClock();
                MonitorBucket gcra = new MonitorBucket(limits(Algorithm.GCRA, shape[0], shape[1], shape[2]), clock.timeMeter());
                MonitorBucket tokens = new MonitorBucket(limits(Algorithm.TOKEN_BUCKET, shape[0], shape[1], shape[2]),
                        clock.timeMeter());
                long emission = shape[2] / shape[1];
                for (int i = 0; i < 2_000; i++) {
                    clock.advanceNanos(step(random, emission));
                    long units = random.nextInt(4) == 0 ? random.nextLong(1, shape[0] + 2) : 1;
                    String at = "shape " + java.util.Arrays.toString(shape) + " run " + run + " step " + i;
                    switch (random.nextInt(12)) {
                        case 0 -> {
                            gcra.refund(units);
                            tokens.refund(units);
                        }
                        case 1 -> {
                            gcra.forceTake(units);
                            tokens.forceTake(units);
                        }
                        default -> {
                            long g = gcra.take(units);
                            long t = tokens.take(units);
                            assertThat(g == 0).as(at + ": admitted").isEqualTo(t == 0);
                        }
                    }
                    assertThat(gcra.available()).as(at + ": available").isEqualTo(tokens.available());
                }
            }
        }
    }

    @Test
    void gcraRetryAfterIsEnoughAndNotANanosecondLonger() {
        SplittableRandom random = new SplittableRandom(11);
        for (long[] shape : SHAPES) {
            ManualClock clock = new ManualClock();
            MonitorBucket gcra = new MonitorBucket(limits(Algorithm.GCRA, shape[0], shape[1], shape[2]), clock.timeMeter());
            long emission = shape[2] / shape[1];
            int refusals = 0;
            for (int i = 0; i < 3_000; i++) {
                clock.advanceNanos(step(random, emission));
                long units = random.nextInt(3) == 0 ? random.nextLong(1, shape[0] + 1) : 1;
                long wait = gcra.take(units);
                if (wait == 0) continue;
                refusals++;
                if (wait > 1) {
                    clock.advanceNanos(wait - 1);
                    assertThat(gcra.nanosToWait(units)).as("a nanosecond short of the wait").isEqualTo(1);
                    clock.advanceNanos(1);
                } else {
                    clock.advanceNanos(wait);
                }
                assertThat(gcra.take(units)).as("after the wait").isZero();
            }
            assertThat(refusals).as("refusals seen").isGreaterThan(100);
        }
    }

    @Test
    void gcraKeepsOneTimestampPerLaneWhereTheTokenBucketKeepsThree() {
        ManualClock clock = new ManualClock();
        MonitorBucket gcra = new MonitorBucket(limits(Algorithm.GCRA, 10, 7, 1_000_000_000L), clock.timeMeter());
        long start = clock.nanoTime();
        gcra.take(3);
        clock.advanceNanos(1234);
        gcra.take(2);
        // [arrival time, unused, its fraction in 1/refill of a nanosecond]: the tokens field stays 0
        String state = gcra.toString();
        long[] lane = java.util.Arrays.stream(state.substring(state.lastIndexOf('[') + 1, state.lastIndexOf(']'))
                .split(", ")).mapToLong(Long::parseLong).toArray();
        assertThat(lane[1]).as("tokens: not kept").isZero();
        // TAT = start + 5 units × 1/7 s, exactly: 714285714 ns and 2/7 of one
        assertThat(lane[0]).isEqualTo(start + 714_285_714L);
        assertThat(lane[2]).isEqualTo(2);
    }

    /** The most units admitted in any closed window {@code [t − period, t]}, over every admission time t. */
    private static long mostInAnyWindow(List<long[]> admitted, long period) {
        long most = 0;
        int from = 0;
        long sum = 0;
        for (int to = 0; to < admitted.size(); to++) {
            sum += admitted.get(to)[1];
            while (admitted.get(from)[0] < admitted.get(to)[0] - period) sum -= admitted.get(from++)[1];
            most = Math.max(most, sum);
        }
        return most;
    }

    @Test
    void aSlidingWindowNeverAdmitsMoreThanItsCapacityInAnyWindowOfItsPeriod() {
        SplittableRandom random = new SplittableRandom(3);
        long[][] windows = {{100, 60_000_000_000L}, {10, 1_000_000_000L}, {7, 999_999_999L}, {1, 10_000_000L}, {50, 3_600_000_000_000L}};
        for (long[] w : windows) {
            long capacity = w[0];
            long period = w[1];
            for (int run = 0; run < 10; run++) {
                ManualClock clock = new ManualClock();
                MonitorBucket window = new MonitorBucket(limits(Algorithm.SLIDING_WINDOW, capacity, capacity, period),
                        clock.timeMeter());
                List<long[]> admitted = new ArrayList<>();
                long slot = BucketLimits.slotNanos(period);
                for (int i = 0; i < 3_000; i++) {
                    // adversarial: bursts at the last and first nanosecond of a sub-window and of a period
                    long now = clock.nanoTime();
                    long advance = switch (random.nextInt(8)) {
                        case 0 -> 0;
                        case 1 -> slot - Math.floorMod(now, slot) - 1; // the last nanosecond of a sub-window
                        case 2 -> slot - Math.floorMod(now, slot); // the first of the next
                        case 3 -> period;
                        case 4 -> period - 1;
                        default -> random.nextLong(0, 2 * period / capacity + 2);
                    };
                    clock.advanceNanos(Math.max(0, advance));
                    long units = random.nextInt(3) == 0 ? random.nextLong(1, capacity + 1) : 1;
                    long wait = window.take(units);
                    if (wait == 0) {
                        admitted.add(new long[]{clock.nanoTime(), units});
                    } else if (random.nextBoolean()) {
                        // waiting the Retry-After is enough; a nanosecond less is not
                        assertThat(wait).isLessThan(Long.MAX_VALUE);
                        clock.advanceNanos(wait - 1);
                        assertThat(window.nanosToWait(units)).as("a nanosecond short").isPositive();
                        clock.advanceNanos(1);
                        assertThat(window.take(units)).as("after the wait").isZero();
                        admitted.add(new long[]{clock.nanoTime(), units});
                    }
                }
                assertThat(mostInAnyWindow(admitted, period)).as("most in any window of %d, capacity %d", period, capacity)
                        .isLessThanOrEqualTo(capacity);
            }
        }
    }

    /**
     * An exact sliding log fed with what the window admitted: of the requests the window refused, the share the
     * log would have admitted (the log knows every admission's time; the window only its sub-window). The
     * figure docs/algorithms.md states.
     */
    @Test
    void aSlidingWindowRefusesLittleBeyondAnExactSlidingLog() {
        SplittableRandom random = new SplittableRandom(2026);
        long capacity = 100;
        long period = 60_000_000_000L;
        int requests = 0;
        int refused = 0;
        int logWouldAdmit = 0;
        long admittedUnits = 0;
        long logAlone = 0;
        for (int run = 0; run < 20; run++) {
            ManualClock clock = new ManualClock();
            MonitorBucket window = new MonitorBucket(limits(Algorithm.SLIDING_WINDOW, capacity, capacity, period),
                    clock.timeMeter());
            List<long[]> admitted = new ArrayList<>();
            List<long[]> log = new ArrayList<>(); // an exact log deciding alone, on the same arrivals
            // random traffic: on average twice the limit's rate, in bursts
            for (int i = 0; i < 5_000; i++) {
                long mean = period / capacity / 2;
                clock.advanceNanos(random.nextInt(10) == 0 ? random.nextLong(0, 40 * mean) : random.nextLong(0, mean));
                long now = clock.nanoTime();
                long units = random.nextInt(5) == 0 ? random.nextLong(1, 6) : 1;
                requests++;
                if (inLog(log, now, period) + units <= capacity) {
                    log.add(new long[]{now, units});
                    logAlone += units;
                }
                if (window.take(units) == 0) {
                    admitted.add(new long[]{now, units});
                    admittedUnits += units;
                } else {
                    refused++;
                    if (inLog(admitted, now, period) + units <= capacity) logWouldAdmit++;
                }
            }
            assertThat(mostInAnyWindow(admitted, period)).isLessThanOrEqualTo(capacity);
        }
        double share = (double) logWouldAdmit / refused;
        double throughput = (double) admittedUnits / logAlone;
        System.out.printf("sliding window (%d sub-windows): %d requests, %d refused, %.1f%% of the refusals an exact log "
                        + "would have admitted (%.2f%% of all requests); units admitted %.1f%% of an exact log's alone%n",
                BucketLimits.SLOTS, requests, refused, 100 * share, 100.0 * logWouldAdmit / requests, 100 * throughput);
        assertThat(share).as("refusals an exact log would have admitted").isLessThan(0.65);
        assertThat(throughput).as("units admitted against an exact log").isGreaterThan(0.93);
    }

    private static long inLog(List<long[]> log, long now, long period) {
        long sum = 0;
        for (int i = log.size() - 1; i >= 0 && log.get(i)[0] >= now - period; i--) sum += log.get(i)[1];
        return sum;
    }

    @Test
    void movingBetweenAlgorithmsNeitherResetsNorChargesTwice() {
        ManualClock clock = new ManualClock();
        BucketLimits tb = limits(Algorithm.TOKEN_BUCKET, 10, 10, 10_000_000_000L);
        BucketLimits gcra = limits(Algorithm.GCRA, 10, 10, 10_000_000_000L);
        BucketLimits window = limits(Algorithm.SLIDING_WINDOW, 10, 10, 10_000_000_000L);
        MonitorBucket bucket = new MonitorBucket(tb, clock.timeMeter());
        assertThat(bucket.take(7)).isZero();
        for (BucketLimits next : List.of(gcra, tb, window, gcra, window, tb)) {
            bucket.moveTo(next);
            assertThat(bucket.available()).as("after the move to %s", next).isEqualTo(3);
        }
        // a GCRA cell's debt carries over as a token bucket's
        bucket.moveTo(gcra);
        bucket.forceTake(5);
        assertThat(bucket.available()).isEqualTo(-2);
        bucket.moveTo(tb);
        assertThat(bucket.available()).isEqualTo(-2);
        // and the bucket goes on refilling at its rate: 1 unit a second
        clock.advance(Duration.ofSeconds(4));
        bucket.moveTo(gcra);
        assertThat(bucket.available()).isEqualTo(2);
        // spent units counted in a sliding window leave it a period (and a sub-window at most) later, all at once
        bucket.moveTo(window);
        assertThat(bucket.available()).isEqualTo(2);
        clock.advance(Duration.ofSeconds(9));
        assertThat(bucket.available()).isEqualTo(2);
        clock.advance(Duration.ofSeconds(2));
        assertThat(bucket.available()).isEqualTo(10);
    }
}

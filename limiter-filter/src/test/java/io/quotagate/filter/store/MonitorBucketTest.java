package io.quotagate.filter.store;

import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.BucketListener;
import io.github.bucket4j.MathType;
import io.github.bucket4j.TimeMeter;
import io.github.bucket4j.TokensInheritanceStrategy;
import io.github.bucket4j.local.LocalBucket;
import io.github.bucket4j.local.SynchronizedBucket;
import io.quotagate.filter.testing.Race;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

class MonitorBucketTest {

    private static final BucketConfiguration CONFIG = BucketConfiguration.builder()
            .addLimit(Bandwidth.builder().capacity(10).refillGreedy(10, Duration.ofSeconds(1)).build())
            .addLimit(Bandwidth.builder().capacity(100).refillGreedy(100, Duration.ofMinutes(1)).build())
            .build();
    private static final BucketConfiguration SLOWER = BucketConfiguration.builder()
            .addLimit(Bandwidth.builder().capacity(5).refillGreedy(1, Duration.ofSeconds(1)).build())
            .build();

    /** A clock the test moves; both buckets read the same one. */
    private static final class StepClock implements TimeMeter {
        long nanos = 1_000_000_000L;

        @Override
        public long currentTimeNanos() {
            return nanos;
        }

        @Override
        public boolean isWallClockBased() {
            return false;
        }
    }

    @Test
    void answersEveryOperationExactlyAsBucket4jsSynchronizedBucketDoes() {
        StepClock clock = new StepClock();
        LocalBucket ours = new MonitorBucket(CONFIG, clock);
        LocalBucket theirs = new SynchronizedBucket(CONFIG, MathType.INTEGER_64_BITS, clock, BucketListener.NOPE);
        SplittableRandom random = new SplittableRandom(42);
        for (int step = 0; step < 20_000; step++) {
            clock.nanos += random.nextLong(0, 300_000_000L);
            long n = random.nextLong(1, 12);
            int s = step;
            switch (random.nextInt(9)) {
                case 0, 1, 2 -> same(s, "tryConsume", ours.tryConsume(n), theirs.tryConsume(n));
                case 3 -> same(s, "probe", ours.tryConsumeAndReturnRemaining(n), theirs.tryConsumeAndReturnRemaining(n));
                case 4 -> same(s, "estimate", ours.estimateAbilityToConsume(n), theirs.estimateAbilityToConsume(n));
                case 5 -> {
                    ours.addTokens(n);
                    theirs.addTokens(n);
                }
                case 6 -> same(s, "ignoring", ours.consumeIgnoringRateLimits(n), theirs.consumeIgnoringRateLimits(n));
                case 7 -> same(s, "asMuch", ours.tryConsumeAsMuchAsPossible(n), theirs.tryConsumeAsMuchAsPossible(n));
                default -> {
                    BucketConfiguration next = random.nextBoolean() ? CONFIG : SLOWER;
                    ours.replaceConfiguration(next, TokensInheritanceStrategy.AS_IS);
                    theirs.replaceConfiguration(next, TokensInheritanceStrategy.AS_IS);
                }
            }
            assertThat(ours.getAvailableTokens()).as("step %d", step).isEqualTo(theirs.getAvailableTokens());
            assertThat(ours.getConfiguration()).isSameAs(theirs.getConfiguration());
        }
    }

    /** Probes are compared by their printed fields (they do not define equals). */
    private static void same(int step, String operation, Object ours, Object theirs) {
        assertThat(String.valueOf(ours)).as("step %d: %s", step, operation).isEqualTo(String.valueOf(theirs));
    }

    @Test
    void threadsRacingForOneBucketNeverTakeMoreThanItHolds() throws Exception {
        BucketConfiguration noRefill = BucketConfiguration.builder()
                .addLimit(Bandwidth.builder().capacity(50_000).refillIntervally(1, Duration.ofDays(365)).build())
                .build();
        StepClock clock = new StepClock();
        MonitorBucket bucket = new MonitorBucket(noRefill, clock);
        int threads = 8;
        AtomicLong taken = new AtomicLong();
        Race.run(threads, t -> {
            long mine = 0;
            for (int i = 0; i < 20_000; i++) {
                if (bucket.tryConsume(1)) mine++;
                if (i % 7 == 0 && bucket.tryConsume(3)) mine += 3;
            }
            taken.addAndGet(mine);
        });

        assertThat(taken.get()).isEqualTo(50_000);
        assertThat(bucket.getAvailableTokens()).isZero();
    }
}

package io.quotagate.loadtest.jmh;

import io.github.bucket4j.Bucket;
import io.github.bucket4j.ConsumptionProbe;
import io.github.bucket4j.local.SynchronizationStrategy;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * One bucket4j take from a local bucket under each of its synchronization strategies, to weigh the
 * store's choice: {@code LOCK_FREE} (bucket4j's default) copies the bucket state on every take so it
 * can compare-and-swap it, {@code SYNCHRONIZED} updates it in place under a monitor. A tenant's
 * bucket is rarely contended, so the copy may cost more than the lock. Run with {@code -prof gc}
 * to see the allocation per take.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class BucketSynchronizationBenchmark {

    @Param({"LOCK_FREE", "SYNCHRONIZED"})
    SynchronizationStrategy strategy;

    private Bucket bucket;

    @Setup
    public void setUp() {
        bucket = Bucket.builder()
                .addLimit(l -> l.capacity(1_000_000_000_000L).refillGreedy(1_000_000_000_000L, Duration.ofDays(1)))
                .withSynchronizationStrategy(strategy)
                .build();
    }

    @Benchmark
    public ConsumptionProbe tryConsumeAndReturnRemaining() {
        return bucket.tryConsumeAndReturnRemaining(1);
    }
}

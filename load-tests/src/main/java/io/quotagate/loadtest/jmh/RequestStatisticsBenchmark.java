package io.quotagate.loadtest.jmh;

import io.quotagate.filter.internal.metrics.RequestStatistics;
import io.quotagate.filter.metrics.StatisticsView.Result;
import io.quotagate.filter.metrics.StatisticsView;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * One request counted by {@link RequestStatistics.Recorder#record}, for a tenant with its own tag ({@code named}:
 * 50 tenants, every tag taken by them) and for tenants without one ({@code unnamed}: 100,000 ids
 * beyond those 50, counted as {@code other}; one in 8 of their requests feeds the heavy-hitter table
 * that decides which tenants get a tag). {@link #pickTenant} is the cost of the random pick alone, to
 * subtract. Uses only the five-argument {@code record}, so the same benchmark runs against older
 * versions. Run with {@code -t 2} too: the heavy-hitter table is shared.
 *
 * <p>Run: {@code java -jar load-tests/target/load-tests.jar jmh RequestStatisticsBenchmark}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class RequestStatisticsBenchmark {

    @Param({"named", "unnamed"})
    String tenants;

    private RequestStatistics.Recorder statistics;
    private String[] ids;

    @Setup(Level.Trial)
    public void setUp() {
        List<String> tagged = new ArrayList<>();
        for (int i = 0; i < 50; i++) tagged.add(String.format("tenant-%06d", i));
        statistics = new RequestStatistics.Recorder(50, tagged);
        if (tenants.equals("named")) {
            ids = tagged.toArray(String[]::new);
        } else {
            ids = new String[100_000];
            for (int i = 0; i < ids.length; i++) ids[i] = String.format("guest-%06d", i);
        }
        for (String id : ids) statistics.record(id, "bench", "items", Result.ALLOWED, null); // the cells exist
        String probe = ids[0];
        boolean named = statistics.statistics().tagOf(probe).equals(probe);
        if (named != tenants.equals("named")) {
            throw new IllegalStateException("setup: " + probe + " tagged " + statistics.statistics().tagOf(probe));
        }
    }

    @Benchmark
    public String pickTenant() {
        return ids[ThreadLocalRandom.current().nextInt(ids.length)];
    }

    @Benchmark
    public void record() {
        statistics.record(ids[ThreadLocalRandom.current().nextInt(ids.length)], "bench", "items", Result.ALLOWED, null);
    }
}

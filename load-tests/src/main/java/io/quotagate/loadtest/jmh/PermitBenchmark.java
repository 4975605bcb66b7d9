package io.quotagate.loadtest.jmh;

import io.quotagate.filter.internal.admission.Acquisition;
import io.quotagate.filter.internal.admission.ConcurrencyLimits;
import io.quotagate.filter.internal.admission.Permit;
import io.quotagate.filter.status.ConcurrencyListener;
import io.quotagate.filter.store.QuotaClock;
import io.quotagate.plans.PlansFile;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Cost of one concurrency permit: {@code acquire} + {@code release}, on a fail-fast group (lock-free)
 * and on a queued group (one lock), uncontended and with 4 threads on one tenant or on a tenant each;
 * and the cost of a refusal at the cap. Caps are high so that acquire never refuses except in
 * {@link #refusedAtCap}. Run: {@code java -cp load-tests/target/load-tests.jar org.openjdk.jmh.Main PermitBenchmark}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class PermitBenchmark {
    static final String PLANS = """
            plans:
              std:
                limits: [ { capacity: 1000, refill: 1000, period: 1s } ]
                concurrency: { fast: 1000000, queued: 1000000, capped: 1 }
            routes:
              - { name: fast, paths: ["/fast/*"], group: fast }
              - { name: queued, paths: ["/queued/*"], group: queued }
              - { name: capped, paths: ["/capped/*"], group: capped }
            groups:
              fast: { max-inflight: 1000000 }
              queued: { max-inflight: 1000000, queue: { size: 16, max-wait: 1s } }
            """;

    private ConcurrencyLimits limits;
    private Permit held;

    @Setup(Level.Trial)
    public void setUp() {
        limits = new ConcurrencyLimits(PlansFile.parse("bench.yml", PLANS), QuotaClock.system(), ConcurrencyListener.NONE);
        held = ((Acquisition.Granted) limits.acquire("full", "std", "capped")).permit();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        held.release();
    }

    /** A tenant per thread. */
    @State(Scope.Thread)
    public static class OwnTenant {
        private static final AtomicInteger NEXT = new AtomicInteger();
        final String tenant = "tenant-" + NEXT.getAndIncrement();
    }

    private Permit acquireRelease(String tenant, String group) {
        Permit p = ((Acquisition.Granted) limits.acquire(tenant, "std", group)).permit();
        p.release();
        return p;
    }

    @Benchmark
    @Threads(1)
    public Permit failFastUncontended() {
        return acquireRelease("acme", "fast");
    }

    @Benchmark
    @Threads(4)
    public Permit failFastContendedOneTenant() {
        return acquireRelease("acme", "fast");
    }

    @Benchmark
    @Threads(4)
    public Permit failFastContendedTenantPerThread(OwnTenant own) {
        return acquireRelease(own.tenant, "fast");
    }

    @Benchmark
    @Threads(1)
    public Permit queuedUncontended() {
        return acquireRelease("acme", "queued");
    }

    @Benchmark
    @Threads(4)
    public Permit queuedContendedTenantPerThread(OwnTenant own) {
        return acquireRelease(own.tenant, "queued");
    }

    @Benchmark
    @Threads(1)
    public Acquisition refusedAtCap() {
        return limits.acquire("full", "std", "capped");
    }
}

package io.quotagate.loadtest.jmh;

import io.quotagate.filter.internal.admission.ConcurrencyLimits;
import io.quotagate.filter.internal.admission.FailureLog;
import io.quotagate.filter.internal.admission.Gate;
import io.quotagate.filter.internal.admission.Outcome;
import io.quotagate.filter.internal.admission.Policy;
import io.quotagate.filter.internal.admission.Ticket;
import io.quotagate.filter.internal.route.Route;
import io.quotagate.filter.status.ConcurrencyListener;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.store.QuotaClock;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import io.quotagate.tenant.TenantDirectory;
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

import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * One decision of the servlet-free core ({@link Gate#decide}: tenant id check, placement, the
 * buckets, the ticket handed over to run) with limits no benchmark can exhaust, for 1 tenant and for
 * 100,000 tenants picked at random (unknown ids, so guests, as in the bench command; every bucket
 * created in setup, so the measurement is the steady state: a cache hit and a token take).
 * {@link #pickTenant} is the cost of the random pick alone, to subtract; {@link #routeAndDecide} adds
 * the route table lookup the filter does first.
 *
 * <p>Run: {@code java -jar load-tests/target/load-tests.jar jmh AdmissionBenchmark}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class AdmissionBenchmark {

    /** The bench command's plans: one plan, a small route table, nothing ever refused. */
    static final String PLANS_YAML = io.quotagate.loadtest.bench.BenchPlans.YAML;
    private static final Route ITEMS = new Route("items", 1, Optional.empty(), true);

    @Param({"1", "100000"})
    int tenants;

    private Policy policy;
    private Gate gate;
    private String[] ids;

    @Setup(Level.Trial)
    public void setUp() {
        Plans plans = PlansFile.parse("bench-plans.yml", PLANS_YAML);
        BucketStore store = BucketStore.local(plans.tenants().maxTracked(), QuotaClock.system());
        gate = new Gate(store, new ConcurrencyLimits(plans, QuotaClock.system(), ConcurrencyListener.NONE),
                new FailureLog(System.getLogger("bench"), QuotaClock.system(), "tenant directory"));
        policy = gate.policy(plans, TenantDirectory.of(plans.tenants().assignments()), null);
        ids = new String[tenants];
        for (int i = 0; i < tenants; i++) {
            ids[i] = String.format("tenant-%06d", i);
            if (!(decide(ITEMS, ids[i]) instanceof Ticket)) {
                throw new IllegalStateException("setup: tenant " + ids[i] + " was refused");
            }
        }
    }

    private Outcome decide(Route route, String tenant) {
        Outcome outcome = gate.decide(policy, route, tenant, null);
        if (outcome instanceof Ticket ticket) ticket.run(); // runs: its units stay taken, as in the filter
        return outcome;
    }

    @Benchmark
    public String pickTenant() {
        return ids[ThreadLocalRandom.current().nextInt(ids.length)];
    }

    /** The decision alone, for a route already matched. */
    @Benchmark
    public Outcome decide() {
        return decide(ITEMS, ids[ThreadLocalRandom.current().nextInt(ids.length)]);
    }

    /** What the filter asks of the core per request: the route, then the decision. */
    @Benchmark
    public Outcome routeAndDecide() {
        return decide(policy.route("GET", "/items/42"), ids[ThreadLocalRandom.current().nextInt(ids.length)]);
    }
}

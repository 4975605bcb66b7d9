package io.quotagate.loadtest.bench;

import io.quotagate.plans.Algorithm;

/** The plans every benchmark of QuotaFilter's cost uses (bench command and JMH alike). */
public final class BenchPlans {
    /** The {@code max-tracked} of {@link #YAML}: below it, every tenant of a benchmark keeps its bucket. */
    static final int MAX_TRACKED = 100_000;

    private BenchPlans() {
    }

    /**
     * {@link #YAML} with its one limit counted by {@code algorithm} (a sliding window: 10^12 units in any day, no
     * refill) and {@code max-tracked} raised to {@code tenants} if it is above {@link #MAX_TRACKED}, so that every
     * tenant a benchmark sends keeps its bucket (the steady state, not evictions and rebuilds).
     */
    public static String yaml(Algorithm algorithm, int tenants) {
        String limit = algorithm == Algorithm.SLIDING_WINDOW
                ? "{ algorithm: sliding-window, capacity: 1000000000000, period: 1d }"
                : "{ algorithm: " + algorithm.fileName() + ", capacity: 1000000000000, refill: 1000000000000, period: 1d }";
        return YAML.replace("{ capacity: 1000000000000, refill: 1000000000000, period: 1d }", limit)
                .replace("max-tracked: " + MAX_TRACKED, "max-tracked: " + Math.max(MAX_TRACKED, tenants));
    }

    /**
     * One plan whose single bandwidth no benchmark can empty: 10^12 units refilled over a day (so an
     * idle bucket stays cached between runs instead of being rebuilt), behind a small route table
     * like a real application's.
     */
    public static final String YAML = """
            plans:
              bench:
                limits:
                  - { capacity: 1000000000000, refill: 1000000000000, period: 1d }
            routes:
              - { name: ops, paths: ["/health", "/metrics"], limited: false }
              - { name: reports, methods: [GET], paths: ["/reports/*"], cost: 5 }
              - { name: items, methods: [GET], paths: ["/items/*"], cost: 1 }
            tenants:
              default-plan: bench
              max-tracked: 100000
            """;
}

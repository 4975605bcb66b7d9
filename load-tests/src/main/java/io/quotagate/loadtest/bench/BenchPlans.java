package io.quotagate.loadtest.bench;

/** The plans every benchmark of QuotaFilter's cost uses (bench command and JMH alike). */
public final class BenchPlans {
    private BenchPlans() {
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

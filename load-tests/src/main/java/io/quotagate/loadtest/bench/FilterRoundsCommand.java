package io.quotagate.loadtest.bench;

import io.quotagate.plans.Algorithm;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * The {@code filter-rounds} command: {@link FilterBenchmark}'s filters, alone, measured in interleaved
 * rounds in one JVM, so a drift of the machine cancels out of their ratios.
 *
 * <p>JMH measures one filter after another, each in forks of its own: on a shared machine the state of
 * the host (its other tenants' use of the caches and of memory) changes between filters by more than
 * the filters differ, and at 10,000 tenants, where every request misses the CPU caches, the order of
 * two filters turned from one run to the next. Here every filter is set up as {@code FilterBenchmark}
 * sets it up (the same stub request, fresh tenant strings, every limiter created first), then each
 * round runs each filter for {@code --round-time}, in the reverse order every other round, and the
 * comparisons are medians of per-round ratios with the 95 % interval of the median, as {@code bench}
 * gives them. The price: the harness's own call to {@code doFilter} sees every filter class (a
 * megamorphic call, a few nanoseconds on each side), and the filters share the JVM's heap and caches.
 *
 * <p>So compare like with like, one group per run ({@code --modes}): the 1-tenant filters together,
 * the 10,000-tenant ones together (with all five, DoSFilter's sweep over its {@code long[]} slowed
 * beside the tables of 10,000 tenants). Give the JVM JMH's heap ({@code java -Xms1g -Xmx1g -jar ...}):
 * a larger young generation spreads the requests' garbage over more memory and slowed the
 * 10,000-tenant filters by half. And run it several times: within one JVM the rounds agree closely,
 * but the JIT's choices differ from one JVM to the next by more (the 1-tenant ratio moved between 0.82
 * and 1.14 over six runs), so the figure is the median over runs.
 *
 * <p>{@code --algorithms} sets QuotaFilter up once per algorithm, each measured in the same rounds (labelled
 * {@code quotagate-10000-tenants/gcra}; the token bucket keeps the plain label), each held against the peers and
 * against the token bucket. {@code --tenants} feeds every filter that many tenants instead of its label's count:
 * {@code --tenants 1000000 --modes quotagate-10000-tenants,bucket4j-map-10000-tenants} holds QuotaFilter against
 * a {@code ConcurrentHashMap} of bucket4j buckets at a million tenants, in one process (give it {@code -Xmx4g}).
 */
@Command(name = "filter-rounds", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"FilterBenchmark's filters alone (no server), measured in interleaved rounds in one JVM: "
                + "nanoseconds per request, and QuotaFilter against DoSFilter (1 tenant), a bucket4j map and "
                + "resilience4j (10,000 tenants) as medians of per-round ratios with a 95 %% interval.",
                "Run one group at a time (--modes quotagate-1-tenant,jetty-dosfilter; then the 10000-tenant ones) "
                        + "with java -Xms1g -Xmx1g, several times: JVMs differ by more than rounds do.",
                "Exit status 1 if a filter refused a request, 2 for an invalid option."})
public final class FilterRoundsCommand implements Callable<Integer> {
    /** The filters, in the order of the first round. */
    static final List<Mode> MODES = List.of(Mode.QUOTAGATE_1_TENANT, Mode.JETTY_DOSFILTER, Mode.QUOTAGATE_10000_TENANTS,
            Mode.BUCKET4J_MAP_10000_TENANTS, Mode.RESILIENCE4J_10000_TENANTS);
    /** QuotaFilter's mode, then its peer's (issue 29's goals). */
    static final List<Mode[]> PAIRS = List.of(
            new Mode[]{Mode.QUOTAGATE_1_TENANT, Mode.JETTY_DOSFILTER},
            new Mode[]{Mode.QUOTAGATE_10000_TENANTS, Mode.BUCKET4J_MAP_10000_TENANTS},
            new Mode[]{Mode.QUOTAGATE_10000_TENANTS, Mode.RESILIENCE4J_10000_TENANTS});
    /** Requests between two clock reads: the clock costs nothing per request. */
    private static final int BATCH = 1024;

    @Option(names = "--rounds", description = "Measured rounds (default ${DEFAULT-VALUE}); the 95 %% interval "
            + "of a median needs 6 or more")
    int rounds = 30;

    @Option(names = "--round-time", paramLabel = "TIME", converter = BenchCommand.DurationConverter.class,
            description = "Time each filter runs in one round, e.g. 300ms (default ${DEFAULT-VALUE})")
    Duration roundTime = Duration.ofMillis(300);

    @Option(names = "--warmup", paramLabel = "TIME", converter = BenchCommand.DurationConverter.class,
            description = "Unmeasured time of each filter, in rounds like the measured ones, 0 for none "
                    + "(default ${DEFAULT-VALUE})")
    Duration warmup = Duration.ofSeconds(6);

    @Option(names = "--modes", split = ",", paramLabel = "MODE", description = "Only these filters "
            + "(comma-separated labels; default: ${DEFAULT-VALUE})")
    List<String> modes = MODES.stream().map(Mode::label).toList();

    @Option(names = "--algorithms", split = ",", paramLabel = "ALGORITHM", description = "QuotaFilter's limit counted "
            + "by each of these, in the same rounds: token-bucket, gcra, sliding-window (default ${DEFAULT-VALUE})")
    List<String> algorithms = List.of(Algorithm.TOKEN_BUCKET.fileName());

    @Option(names = "--tenants", description = "Tenants fed to every filter, 1 to 10000000, instead of the count in "
            + "its label (e.g. 1000000 with the 10000-tenant modes; give the JVM -Xmx4g)")
    Integer tenants;

    @Spec
    CommandSpec spec;

    /** Sum of the statuses: the requests' results are used, so none is optimised away. */
    private long sink;

    /**
     * QuotaFilter against a peer over the rounds: the median of the per-round ratios of nanoseconds per
     * request (QuotaFilter's over the peer's), its 95 % interval (NaN with too few rounds) and how many
     * rounds were at most 1.
     */
    record Comparison(Filter mode, Filter peer, double ratio, double low, double high, int atMost1, int rounds) {
        String verdict() {
            return BenchReport.verdict(low, high);
        }
    }

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        String invalid = rounds <= 0 ? "--rounds must be > 0, was " + rounds
                : roundTime.isZero() || roundTime.isNegative() ? "--round-time must be > 0, was " + roundTime
                : warmup.isNegative() ? "--warmup must be >= 0, was " + warmup : null;
        List<Algorithm> chosenAlgorithms = new ArrayList<>();
        for (String text : algorithms) {
            Algorithm a = Algorithm.ofFileName(text).orElse(null);
            if (a == null && invalid == null) invalid = "unknown algorithm '" + text + "'; algorithms: token-bucket, gcra, sliding-window";
            if (a != null && !chosenAlgorithms.contains(a)) chosenAlgorithms.add(a);
        }
        if (tenants != null && (tenants < 1 || tenants > 10_000_000) && invalid == null) {
            invalid = "--tenants must be in 1..10000000, was " + tenants;
        }
        List<Filter> chosen = new ArrayList<>();
        for (String label : modes) {
            Mode m = MODES.stream().filter(x -> x.label().equals(label.trim())).findFirst().orElse(null);
            if (m == null && invalid == null) {
                invalid = "unknown mode '" + label + "'; modes: " + String.join(", ", MODES.stream().map(Mode::label).toList());
            }
            if (m == null) continue;
            for (Algorithm a : m.quotagate() ? chosenAlgorithms : List.of(Algorithm.TOKEN_BUCKET)) {
                Filter f = new Filter(m, a);
                if (!chosen.contains(f)) chosen.add(f);
            }
        }
        if (invalid != null) {
            spec.commandLine().getErr().println("filter-rounds: " + invalid);
            return 2;
        }
        Map<Filter, FilterBenchmark> benches = new LinkedHashMap<>();
        try {
            for (Filter f : chosen) {
                FilterBenchmark b = new FilterBenchmark();
                b.mode = f.mode().label();
                b.algorithm = f.algorithm().fileName();
                b.tenants = tenants == null ? "mode" : Integer.toString(tenants);
                b.setUp(); // every limiter created, each tenant admitted once
                benches.put(f, b);
            }
            out.printf(Locale.ROOT, "filter-rounds: %d filter(s) x %d round(s) of %s each, warmup %s, %d CPU(s)%s%n",
                    chosen.size(), rounds, BenchCommand.text(roundTime), BenchCommand.text(warmup),
                    Runtime.getRuntime().availableProcessors(),
                    tenants == null ? "" : String.format(Locale.ROOT, ", %,d tenants each", tenants));
            long warmupNanos = warmup.toNanos();
            for (int pass = 0; warmupNanos > 0; pass++) {
                for (Map.Entry<Filter, FilterBenchmark> b : inOrderOf(pass, benches)) {
                    if (run(b.getValue(), Math.min(roundTime.toNanos(), warmupNanos)) < 0) return refused(b.getKey());
                }
                warmupNanos -= roundTime.toNanos();
            }
            Map<Filter, double[]> nanos = new LinkedHashMap<>();
            for (Filter f : chosen) nanos.put(f, new double[rounds]);
            for (int round = 0; round < rounds; round++) {
                for (Map.Entry<Filter, FilterBenchmark> b : inOrderOf(round, benches)) {
                    double perRequest = run(b.getValue(), roundTime.toNanos());
                    if (perRequest < 0) return refused(b.getKey());
                    nanos.get(b.getKey())[round] = perRequest;
                }
            }
            print(out, nanos, compareFilters(nanos));
            return 0;
        } finally {
            for (FilterBenchmark b : benches.values()) b.tearDown();
        }
    }

    /**
     * One filter measured: a mode, and for QuotaFilter the algorithm of its limit. Labelled as the mode, with
     * {@code /gcra} or {@code /sliding-window} for those.
     */
    record Filter(Mode mode, Algorithm algorithm) {
        String label() {
            return algorithm == Algorithm.TOKEN_BUCKET ? mode.label() : mode.label() + "/" + algorithm.fileName();
        }
    }

    private int refused(Filter mode) {
        spec.commandLine().getErr().println("filter-rounds: " + mode.label() + " refused a request: its limits are out of reach "
                + "in the bench's plans, so this is a defect");
        return 1;
    }

    /** Every other round in reverse, so no filter always runs right after the same one. */
    private static List<Map.Entry<Filter, FilterBenchmark>> inOrderOf(int round, Map<Filter, FilterBenchmark> benches) {
        List<Map.Entry<Filter, FilterBenchmark>> order = new ArrayList<>(benches.entrySet());
        if (round % 2 == 1) java.util.Collections.reverse(order);
        return order;
    }

    /** Runs one filter for about {@code nanos}; nanoseconds per request, or -1 if it refused one. */
    private double run(FilterBenchmark b, long nanos) throws Exception {
        long requests = 0;
        long start = System.nanoTime();
        long elapsed;
        do {
            for (int i = 0; i < BATCH; i++) {
                int status = b.filter();
                if (status != 200) return -1;
                sink += status;
            }
            requests += BATCH;
            elapsed = System.nanoTime() - start;
        } while (elapsed < nanos);
        return (double) elapsed / requests;
    }

    /** {@link #compareFilters} of token-bucket filters keyed by their modes. */
    static List<Comparison> compare(Map<Mode, double[]> nanos) {
        Map<Filter, double[]> filters = new LinkedHashMap<>();
        nanos.forEach((m, v) -> filters.put(new Filter(m, Algorithm.TOKEN_BUCKET), v));
        return compareFilters(filters);
    }

    /**
     * QuotaFilter with each algorithm measured against each peer of {@link #PAIRS}, then each algorithm other
     * than the token bucket against the token bucket of the same mode (the peer, in that row).
     */
    static List<Comparison> compareFilters(Map<Filter, double[]> nanos) {
        List<Comparison> comparisons = new ArrayList<>();
        for (Mode[] pair : PAIRS) {
            Filter peer = new Filter(pair[1], Algorithm.TOKEN_BUCKET);
            for (Algorithm a : Algorithm.values()) compare(nanos, new Filter(pair[0], a), peer, comparisons);
        }
        for (Filter f : nanos.keySet()) {
            if (f.algorithm() != Algorithm.TOKEN_BUCKET) {
                compare(nanos, f, new Filter(f.mode(), Algorithm.TOKEN_BUCKET), comparisons);
            }
        }
        return comparisons;
    }

    private static void compare(Map<Filter, double[]> nanos, Filter mode, Filter peer, List<Comparison> into) {
        double[] ours = nanos.get(mode);
        double[] theirs = nanos.get(peer);
        if (ours == null || theirs == null) return;
        double[] ratios = new double[ours.length];
        int atMost1 = 0;
        for (int i = 0; i < ours.length; i++) {
            ratios[i] = ours[i] / theirs[i];
            if (ratios[i] <= 1) atMost1++;
        }
        double[] interval = BenchReport.medianInterval(ratios);
        into.add(new Comparison(mode, peer, BenchReport.median(ratios),
                interval == null ? Double.NaN : interval[0], interval == null ? Double.NaN : interval[1],
                atMost1, ratios.length));
    }

    private static void print(PrintWriter out, Map<Filter, double[]> nanos, List<Comparison> comparisons) {
        out.println();
        out.println("nanoseconds per request (median and quartiles of the rounds; each request a fresh tenant string, "
                + "as FilterBenchmark's bare mode: about 10 ns)");
        out.printf(Locale.ROOT, "%-38s %10s %21s%n", "filter", "median", "quartiles");
        for (var e : nanos.entrySet()) {
            double[] v = e.getValue();
            out.printf(Locale.ROOT, "%-38s %10.1f %10.1f-%-10.1f%n", e.getKey().label(), BenchReport.median(v),
                    BenchReport.quantile(v, 0.25), BenchReport.quantile(v, 0.75));
        }
        out.println();
        out.println("QuotaFilter against its peers, round by round (median of the per-round ratios of ns per request; "
                + "95 % CI: where that median lies; the verdict names a cheaper filter only if the whole CI is on its "
                + "side of 1)");
        out.printf(Locale.ROOT, "%-38s %-28s %7s %15s %10s  %s%n", "QuotaFilter", "peer", "ratio", "95 % CI",
                "rounds<=1", "verdict");
        for (Comparison c : comparisons) {
            String interval = Double.isNaN(c.low()) ? "n/a" : String.format(Locale.ROOT, "%.3f-%.3f", c.low(), c.high());
            out.printf(Locale.ROOT, "%-38s %-28s %7.3f %15s %10s  %s%n", c.mode().label(), c.peer().label(), c.ratio(),
                    interval, c.atMost1() + "/" + c.rounds(), c.verdict());
        }
        out.flush();
    }
}

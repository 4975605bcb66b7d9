package io.quotagate.loadtest.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/** The medians of every mode's runs, printed as a table and written as JSON. */
final class BenchReport {

    /**
     * One mode's medians.
     *
     * @param cpuRatioToBare median over rounds of (this mode's CPU per request / its baseline's in the same round)
     * @param ratioToBare    median over rounds of (this mode's requests/s / its baseline's in the same round)
     * @param baseline       the bare mode fed the same traffic ({@link Mode#baseline()}), or {@link Mode#BARE}
     *                       if that one was not run
     */
    record ModeSummary(Mode mode, double rps, double p50Ms, double p99Ms, double cpuMicrosPerRequest,
                       double ratioToBare, double cpuRatioToBare, Mode baseline, long requests, long non200,
                       long ioErrors) {
        boolean hasErrors() {
            return non200 > 0 || ioErrors > 0;
        }
    }

    /**
     * QuotaFilter against a peer measured in the same rounds: medians of the per-round ratios
     * (QuotaFilter's figure over the peer's), so a slow drift of the machine cancels out.
     *
     * @param cpuRatio      server CPU per request, the median ratio of the rounds; whether the two differ is
     *                      for the interval to say ({@link #verdict()})
     * @param rpsRatio      requests per second
     * @param cpuLow        lower quartile of the per-round CPU ratios
     * @param cpuHigh       upper quartile of the per-round CPU ratios
     * @param cpuMedianLow  lower end of the 95 % confidence interval of the median CPU ratio
     *                      ({@link #medianInterval}); NaN with fewer than {@value #MIN_ROUNDS_FOR_INTERVAL} rounds
     * @param cpuMedianHigh its upper end
     * @param roundsAtMost1 rounds in which QuotaFilter's CPU per request was at most the peer's
     * @param rounds        rounds compared
     */
    record Comparison(Mode mode, Mode peer, double cpuRatio, double rpsRatio, double cpuLow, double cpuHigh,
                      double cpuMedianLow, double cpuMedianHigh, int roundsAtMost1, int rounds) {
        /**
         * What the rounds say about the two filters' CPU per request: one is cheaper only if the whole
         * confidence interval of the median ratio lies on its side of 1.
         */
        String verdict() {
            return BenchReport.verdict(cpuMedianLow, cpuMedianHigh);
        }
    }

    /**
     * What the rounds say about QuotaFilter's cost over a peer's, from the 95 % interval of the median
     * ratio: one is cheaper only if the whole interval lies on its side of 1.
     */
    static String verdict(double medianLow, double medianHigh) {
        if (Double.isNaN(medianLow)) return "too few rounds for a verdict (" + MIN_ROUNDS_FOR_INTERVAL + "+)";
        if (medianHigh < 1) return "QuotaFilter costs less";
        if (medianLow > 1) return "QuotaFilter costs more";
        return "cannot tell apart";
    }

    /**
     * A shared store against the local one, fed the same tenants in the same rounds: the medians of the
     * per-round ratios of requests per second (the store's over the local store's).
     *
     * @param local        the local-store mode with the same tenants
     * @param rpsRatio     median of the per-round throughput ratios
     * @param low          lower quartile of the per-round ratios
     * @param high         upper quartile
     * @param medianLow    lower end of the 95 % confidence interval of the median ratio; NaN with fewer
     *                     than {@value #MIN_ROUNDS_FOR_INTERVAL} rounds
     * @param medianHigh   its upper end
     * @param cpuRatio     median of the per-round ratios of server CPU per request (the store's client
     *                     threads included; the store server's own CPU is not)
     * @param rounds       rounds compared
     */
    record StoreComparison(Mode mode, Mode local, double rpsRatio, double low, double high, double medianLow,
                           double medianHigh, double cpuRatio, int rounds) {
    }

    /** Fewest rounds whose median has a 95 % interval between two of them (5 rounds: the range covers 93.75 %). */
    static final int MIN_ROUNDS_FOR_INTERVAL = 6;

    /** Which QuotaFilter mode is held against which peer: the same traffic on both sides. */
    static final List<Mode[]> PEERS = List.of(
            new Mode[]{Mode.QUOTAGATE_1_TENANT, Mode.JETTY_DOSFILTER},
            new Mode[]{Mode.QUOTAGATE_10000_TENANTS, Mode.BUCKET4J_MAP_10000_TENANTS},
            new Mode[]{Mode.QUOTAGATE_10000_TENANTS, Mode.RESILIENCE4J_10000_TENANTS},
            new Mode[]{Mode.QUOTAGATE_10000_TENANTS, Mode.COUNTER_MAP_10000_TENANTS});

    /** Marks, in the table, a mode where some request was not answered 200. */
    static final String FLAG = "FLAGGED";

    private final List<ModeSummary> modes;
    private final List<Comparison> comparisons;
    private final List<StoreComparison> stores;

    private BenchReport(List<ModeSummary> modes, List<Comparison> comparisons, List<StoreComparison> stores) {
        this.modes = List.copyOf(modes);
        this.comparisons = List.copyOf(comparisons);
        this.stores = List.copyOf(stores);
    }

    /** Summarises runs; every mode must have the same number of runs, in round order. */
    static BenchReport of(Map<Mode, List<RunResult>> results) {
        List<ModeSummary> modes = new ArrayList<>();
        for (var e : results.entrySet()) {
            Mode baseline = results.containsKey(e.getKey().baseline()) ? e.getKey().baseline() : Mode.BARE;
            List<RunResult> bare = results.get(baseline);
            List<RunResult> runs = e.getValue();
            double[] rpsRatios = new double[runs.size()];
            double[] cpuRatios = new double[runs.size()];
            for (int i = 0; i < runs.size(); i++) {
                rpsRatios[i] = runs.get(i).rps() / bare.get(i).rps();
                cpuRatios[i] = runs.get(i).cpuMicrosPerRequest() / bare.get(i).cpuMicrosPerRequest();
            }
            modes.add(new ModeSummary(e.getKey(),
                    median(runs, RunResult::rps), median(runs, RunResult::p50Ms), median(runs, RunResult::p99Ms),
                    median(runs, RunResult::cpuMicrosPerRequest),
                    e.getKey() == baseline ? 1.0 : median(rpsRatios),
                    e.getKey() == baseline ? 1.0 : median(cpuRatios),
                    baseline,
                    runs.stream().mapToLong(RunResult::requests).sum(),
                    runs.stream().mapToLong(RunResult::non200).sum(),
                    runs.stream().mapToLong(RunResult::ioErrors).sum()));
        }
        List<Comparison> comparisons = new ArrayList<>();
        for (Mode[] pair : PEERS) {
            List<RunResult> ours = results.get(pair[0]);
            List<RunResult> theirs = results.get(pair[1]);
            if (ours == null || theirs == null) continue;
            double[] cpu = new double[ours.size()];
            double[] rps = new double[ours.size()];
            for (int i = 0; i < ours.size(); i++) {
                cpu[i] = ours.get(i).cpuMicrosPerRequest() / theirs.get(i).cpuMicrosPerRequest();
                rps[i] = ours.get(i).rps() / theirs.get(i).rps();
            }
            int atMost1 = (int) Arrays.stream(cpu).filter(r -> r <= 1).count();
            double[] interval = medianInterval(cpu);
            comparisons.add(new Comparison(pair[0], pair[1], median(cpu), median(rps), quantile(cpu, 0.25),
                    quantile(cpu, 0.75), interval == null ? Double.NaN : interval[0],
                    interval == null ? Double.NaN : interval[1], atMost1, cpu.length));
        }
        List<StoreComparison> stores = new ArrayList<>();
        for (var e : results.entrySet()) {
            Mode local = e.getKey().local();
            if (local == null || !results.containsKey(local)) continue;
            List<RunResult> shared = e.getValue();
            List<RunResult> theirs = results.get(local);
            double[] rps = new double[shared.size()];
            double[] cpu = new double[shared.size()];
            for (int i = 0; i < shared.size(); i++) {
                rps[i] = shared.get(i).rps() / theirs.get(i).rps();
                cpu[i] = shared.get(i).cpuMicrosPerRequest() / theirs.get(i).cpuMicrosPerRequest();
            }
            double[] interval = medianInterval(rps);
            stores.add(new StoreComparison(e.getKey(), local, median(rps), quantile(rps, 0.25), quantile(rps, 0.75),
                    interval == null ? Double.NaN : interval[0], interval == null ? Double.NaN : interval[1],
                    median(cpu), rps.length));
        }
        return new BenchReport(modes, comparisons, stores);
    }

    List<StoreComparison> stores() {
        return stores;
    }

    List<ModeSummary> modes() {
        return modes;
    }

    List<Comparison> comparisons() {
        return comparisons;
    }

    boolean anyErrors() {
        return modes.stream().anyMatch(ModeSummary::hasErrors);
    }

    void print(PrintWriter out) {
        out.println();
        out.println("medians of the runs (ratios: median of the per-round ratios to the bare server fed the same traffic)");
        out.printf(Locale.ROOT, "%-28s %10s %8s %8s %12s %9s %9s %-19s %10s %s%n",
                "mode", "req/s", "p50 ms", "p99 ms", "CPU µs/req", "rps/bare", "CPU/bare", "bare", "requests", "errors");
        for (ModeSummary m : modes) {
            out.printf(Locale.ROOT, "%-28s %10.0f %8.3f %8.3f %12.2f %9.3f %9.3f %-19s %10d %s%n",
                    m.mode().label(), m.rps(), m.p50Ms(), m.p99Ms(), m.cpuMicrosPerRequest(),
                    m.ratioToBare(), m.cpuRatioToBare(), m.baseline().label(), m.requests(),
                    m.hasErrors() ? FLAG + ": " + m.non200() + " non-200, " + m.ioErrors() + " I/O errors" : "0");
        }
        if (!comparisons.isEmpty()) {
            out.println();
            out.println("QuotaFilter against its peers in the same rounds (medians of the per-round ratios; "
                    + "CPU/req: QuotaFilter's server CPU per request over the peer's; req/s ratio: its throughput over the peer's; 95 % CI: where that median lies, "
                    + "from the rounds' spread; the verdict names a cheaper filter only if the whole CI is on its side "
                    + "of 1)");
            out.printf(Locale.ROOT, "%-24s %-28s %9s %15s %15s %10s %11s  %s%n", "QuotaFilter", "peer", "CPU/req",
                    "95 % CI", "quartiles", "rounds<=1", "req/s ratio", "verdict");
            for (Comparison c : comparisons) {
                String interval = Double.isNaN(c.cpuMedianLow()) ? "n/a"
                        : String.format(Locale.ROOT, "%.3f-%.3f", c.cpuMedianLow(), c.cpuMedianHigh());
                out.printf(Locale.ROOT, "%-24s %-28s %9.3f %15s %7.3f-%-7.3f %10s %11.3f  %s%n", c.mode().label(),
                        c.peer().label(), c.cpuRatio(), interval, c.cpuLow(), c.cpuHigh(),
                        c.roundsAtMost1() + "/" + c.rounds(), c.rpsRatio(), c.verdict());
            }
        }
        if (!stores.isEmpty()) {
            out.println();
            out.println("Redis store against the local store with the same tenants, in the same rounds (medians of the "
                    + "per-round ratios; req/s: the Redis mode's throughput over the local mode's; 95 % CI: where that "
                    + "median lies; CPU/req: server CPU per request, the store's client threads included)");
            out.printf(Locale.ROOT, "%-28s %-24s %9s %15s %15s %9s %7s%n", "mode", "local", "req/s", "95 % CI",
                    "quartiles", "CPU/req", "rounds");
            for (StoreComparison c : stores) {
                String interval = Double.isNaN(c.medianLow()) ? "n/a"
                        : String.format(Locale.ROOT, "%.3f-%.3f", c.medianLow(), c.medianHigh());
                out.printf(Locale.ROOT, "%-28s %-24s %9.3f %15s %7.3f-%-7.3f %9.3f %7d%n", c.mode().label(),
                        c.local().label(), c.rpsRatio(), interval, c.low(), c.high(), c.cpuRatio(), c.rounds());
            }
        }
        out.flush();
    }

    void writeJson(Path file) throws IOException {
        ObjectMapper mapper = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
        ObjectNode root = mapper.createObjectNode();
        ArrayNode array = root.putArray("modes");
        for (ModeSummary m : modes) {
            array.addObject()
                    .put("mode", m.mode().label())
                    .put("rps", round(m.rps(), 1))
                    .put("p50Ms", round(m.p50Ms(), 3))
                    .put("p99Ms", round(m.p99Ms(), 3))
                    .put("cpuMicrosPerRequest", round(m.cpuMicrosPerRequest(), 3))
                    .put("ratioToBare", round(m.ratioToBare(), 4))
                    .put("cpuRatioToBare", round(m.cpuRatioToBare(), 4))
                    .put("baseline", m.baseline().label());
        }
        ArrayNode peers = root.putArray("comparisons");
        for (Comparison c : comparisons) {
            peers.addObject()
                    .put("mode", c.mode().label())
                    .put("peer", c.peer().label())
                    .put("cpuRatio", round(c.cpuRatio(), 4))
                    .put("rpsRatio", round(c.rpsRatio(), 4))
                    .put("cpuRatioLowerQuartile", round(c.cpuLow(), 4))
                    .put("cpuRatioUpperQuartile", round(c.cpuHigh(), 4))
                    .put("cpuRatioMedianCi95Low", Double.isNaN(c.cpuMedianLow()) ? null : round(c.cpuMedianLow(), 4))
                    .put("cpuRatioMedianCi95High", Double.isNaN(c.cpuMedianHigh()) ? null : round(c.cpuMedianHigh(), 4))
                    .put("verdict", c.verdict())
                    .put("roundsAtMost1", c.roundsAtMost1())
                    .put("rounds", c.rounds());
        }
        // only a --redis run has them: the JSON of the other runs keeps its two arrays
        ArrayNode local = stores.isEmpty() ? null : root.putArray("storeComparisons");
        for (StoreComparison c : stores) {
            // a ratio of a run without requests is NaN: null, not the 0 that rounding would make of it
            local.addObject()
                    .put("mode", c.mode().label())
                    .put("local", c.local().label())
                    .put("rpsRatio", finite(c.rpsRatio()))
                    .put("rpsRatioLowerQuartile", finite(c.low()))
                    .put("rpsRatioUpperQuartile", finite(c.high()))
                    .put("rpsRatioMedianCi95Low", finite(c.medianLow()))
                    .put("rpsRatioMedianCi95High", finite(c.medianHigh()))
                    .put("cpuRatio", finite(c.cpuRatio()))
                    .put("rounds", c.rounds());
        }
        mapper.writeValue(file.toFile(), root);
    }

    private static double median(List<RunResult> runs, ToDoubleFunction<RunResult> figure) {
        return median(runs.stream().mapToDouble(figure).toArray());
    }

    static double median(double[] values) {
        return quantile(values, 0.5);
    }

    /** The {@code q} quantile, interpolated between the two nearest values (q = 0.5: the median). */
    static double quantile(double[] values, double q) {
        double[] v = values.clone();
        Arrays.sort(v);
        double at = q * (v.length - 1);
        int below = (int) Math.floor(at);
        int above = Math.min(below + 1, v.length - 1);
        return v[below] + (at - below) * (v[above] - v[below]);
    }

    /**
     * A 95 % confidence interval of the median of {@code values}, free of any assumption on their
     * distribution: the {@code k}-th smallest and the {@code k}-th largest value, for the largest
     * {@code k} such that the median lies between them with probability at least 0.95 (each value
     * falls below the median with probability ½, so the count below it is binomial). Rounds are taken
     * as independent draws; the serpentine order keeps a drift from favouring either side of a ratio.
     *
     * @return {lower, upper}, or null for fewer than {@value #MIN_ROUNDS_FOR_INTERVAL} values
     */
    static double[] medianInterval(double[] values) {
        int n = values.length;
        // exclude the j smallest and j largest: the median lies below what is left with probability
        // P(Binomial(n, 1/2) <= j), above it with the same; take the largest j missing at most 5 % in all
        double logHalfToN = n * Math.log(0.5);
        double logChoose = 0; // log C(n, i)
        double cdf = 0; // P(Binomial(n, 1/2) <= i)
        int j = -1;
        for (int i = 0; i < (n + 1) / 2; i++) {
            cdf += Math.exp(logChoose + logHalfToN);
            if (2 * cdf > 0.05) break;
            j = i;
            logChoose += Math.log((double) (n - i) / (i + 1));
        }
        if (j < 0) return null; // fewer than MIN_ROUNDS_FOR_INTERVAL values: even their range covers less
        double[] v = values.clone();
        Arrays.sort(v);
        return new double[]{v[j], v[n - 1 - j]};
    }

    /** A ratio for the JSON, to 4 decimals, or null if it is not a number (NaN, infinite). */
    private static Double finite(double ratio) {
        return Double.isFinite(ratio) ? round(ratio, 4) : null;
    }

    private static double round(double value, int decimals) {
        double scale = Math.pow(10, decimals);
        return Math.round(value * scale) / scale;
    }
}

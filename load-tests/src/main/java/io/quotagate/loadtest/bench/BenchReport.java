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
     * @param cpuRatio   server CPU per request; at most 1: QuotaFilter costs no more than the peer
     * @param rpsRatio   requests per second
     * @param cpuLow     lower quartile of the per-round CPU ratios
     * @param cpuHigh    upper quartile of the per-round CPU ratios: a median whose quartiles straddle 1
     *                   says the rounds cannot tell the two apart
     * @param roundsAtMost1 rounds in which QuotaFilter's CPU per request was at most the peer's
     * @param rounds     rounds compared
     */
    record Comparison(Mode mode, Mode peer, double cpuRatio, double rpsRatio, double cpuLow, double cpuHigh,
                      int roundsAtMost1, int rounds) {
    }

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

    private BenchReport(List<ModeSummary> modes, List<Comparison> comparisons) {
        this.modes = List.copyOf(modes);
        this.comparisons = List.copyOf(comparisons);
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
            comparisons.add(new Comparison(pair[0], pair[1], median(cpu), median(rps), quantile(cpu, 0.25),
                    quantile(cpu, 0.75), atMost1, cpu.length));
        }
        return new BenchReport(modes, comparisons);
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
        out.printf(Locale.ROOT, "%-24s %10s %8s %8s %12s %9s %9s %-19s %10s %s%n",
                "mode", "req/s", "p50 ms", "p99 ms", "CPU µs/req", "rps/bare", "CPU/bare", "bare", "requests", "errors");
        for (ModeSummary m : modes) {
            out.printf(Locale.ROOT, "%-24s %10.0f %8.3f %8.3f %12.2f %9.3f %9.3f %-19s %10d %s%n",
                    m.mode().label(), m.rps(), m.p50Ms(), m.p99Ms(), m.cpuMicrosPerRequest(),
                    m.ratioToBare(), m.cpuRatioToBare(), m.baseline().label(), m.requests(),
                    m.hasErrors() ? FLAG + ": " + m.non200() + " non-200, " + m.ioErrors() + " I/O errors" : "0");
        }
        if (!comparisons.isEmpty()) {
            out.println();
            out.println("QuotaFilter against its peers in the same rounds (medians of the per-round ratios; "
                    + "CPU/req <= 1: QuotaFilter costs no more server CPU per request; quartiles straddling 1: "
                    + "the rounds cannot tell them apart)");
            out.printf(Locale.ROOT, "%-24s %-28s %9s %15s %10s %9s%n", "QuotaFilter", "peer", "CPU/req", "quartiles",
                    "rounds<=1", "req/s");
            for (Comparison c : comparisons) {
                out.printf(Locale.ROOT, "%-24s %-28s %9.3f %7.3f-%-7.3f %10s %9.3f%n", c.mode().label(),
                        c.peer().label(), c.cpuRatio(), c.cpuLow(), c.cpuHigh(), c.roundsAtMost1() + "/" + c.rounds(),
                        c.rpsRatio());
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
                    .put("roundsAtMost1", c.roundsAtMost1())
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

    private static double round(double value, int decimals) {
        double scale = Math.pow(10, decimals);
        return Math.round(value * scale) / scale;
    }
}

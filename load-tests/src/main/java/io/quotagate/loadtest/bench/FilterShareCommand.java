package io.quotagate.loadtest.bench;

import io.quotagate.filter.QuotaFilter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The {@code filter-share} command: each filter's own work inside Jetty, from a CPU profile of a
 * {@code bench} run, measured against the application's work behind it.
 *
 * <p>{@code bench} compares whole servers, whose CPU per request moves by ±10 % between rounds on a
 * shared machine, while the filters differ by about 1 % of it. A sampling profile of the same run
 * splits each server's samples instead: those inside its filter but not in the rest of the chain
 * (the filter's own work, {@code own}), and those in the chain's end (the servlet and what it
 * writes, {@code app}). The servlet does the same work per request in every mode, so
 * {@code own / app} is the filter's cost per request in units of the application's, comparable
 * between filters of the same run without counting requests or trusting the sampler's clock. Runs
 * differ by more than their samples' error (compilation and cache placement differ between JVMs), so
 * give it several runs' profiles: it prints the median ratio and the range. Work QuotaFilter causes
 * inside the chain counts as its own: a sample there with a frame of its request wrapper counts whole,
 * including the container's own lookup the wrapper passes on (which overstates QuotaFilter a little).
 *
 * <p>Input: async-profiler's collapsed stacks with thread names ({@code threads,collapsed}), as
 * {@code bench --profile p.txt} writes them for its measured runs (run java with
 * {@code -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints}); the server threads of mode
 * {@code m} are named {@code bench-server-m-pool-N}. A profile of the whole process
 * ({@code -agentpath}) also counts the warm-up: code not yet compiled, and each tenant's state created.
 */
@Command(name = "filter-share", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Each bench filter's own CPU inside Jetty, per unit of the application's work behind it, "
                + "from async-profiler collapsed stacks (threads,collapsed) of bench runs; give several runs' files.",
                "Example: java -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints -jar load-tests.jar bench "
                        + "--profile p.txt ...; then: filter-share p.txt",
                "Exit status 1 if a file holds no bench server samples, 2 if one cannot be read."})
public final class FilterShareCommand implements Callable<Integer> {
    private static final Pattern SERVER_THREAD = Pattern.compile("^\\[bench-server-(.+)-pool-\\d+(?: tid=\\d+)?]$");
    private static final String FILTER_HOLDER = "FilterHolder.doFilter";
    private static final String CHAIN_END = "ServletHandler$ChainEnd.doFilter";
    /** QuotaFilter's own classes: their frames behind the chain's end are still its work. */
    private static final String QUOTAGATE_FRAMES = "io/quotagate/filter/";
    private static final String QUOTA_FILTER = QuotaFilter.class.getName().replace('.', '/') + ".";
    /** The comparisons of issue 14's goal: QuotaFilter's mode, then its peer's. */
    static final List<String[]> PAIRS = List.of(
            new String[]{Mode.QUOTAGATE_1_TENANT.label(), Mode.JETTY_DOSFILTER.label()},
            new String[]{Mode.QUOTAGATE_10000_TENANTS.label(), Mode.BUCKET4J_MAP_10000_TENANTS.label()},
            new String[]{Mode.QUOTAGATE_10000_TENANTS.label(), Mode.RESILIENCE4J_10000_TENANTS.label()});

    @Spec
    CommandSpec spec;

    @Parameters(arity = "1..*", paramLabel = "FILE",
            description = "async-profiler collapsed stacks with thread names, one file per bench run")
    List<Path> files;

    /** One mode's samples: all of its server threads', its filter's own, and the chain end's. */
    record Share(long total, long own, long app) {
        Share plus(Share other) {
            return new Share(total + other.total, own + other.own, app + other.app);
        }

        /** The filter's own samples per application sample. */
        double perApp() {
            return app == 0 ? Double.NaN : (double) own / app;
        }
    }

    @Override
    public Integer call() throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        Map<String, List<Double>> ratios = new TreeMap<>();
        for (Path file : files) {
            Map<String, Share> shares;
            try (BufferedReader in = Files.newBufferedReader(file)) {
                shares = read(in);
            } catch (IOException e) {
                spec.commandLine().getErr().println("filter-share: cannot read " + file + " ("
                        + (e instanceof java.nio.file.NoSuchFileException ? "no such file" : e.toString()) + ")");
                return 2;
            }
            if (shares.isEmpty()) {
                out.println("no samples of bench-server-* threads in " + file + " (profile with the 'threads' option)");
                out.flush();
                return 1;
            }
            out.println(file);
            out.printf(Locale.ROOT, "%-28s %9s %9s %9s %8s %13s%n", "mode", "samples", "filter", "app", "filter%",
                    "filter/app");
            shares.forEach((mode, s) -> out.printf(Locale.ROOT, "%-28s %9d %9d %9d %7.2f%% %8.3f ± %.3f%n", mode,
                    s.total(), s.own(), s.app(), 100.0 * s.own() / s.total(), s.perApp(), error(s)));
            out.println();
            for (String[] pair : PAIRS) {
                Share q = shares.get(pair[0]);
                Share p = shares.get(pair[1]);
                if (q == null || p == null || q.own() == 0 || p.own() == 0 || q.app() == 0 || p.app() == 0) continue;
                ratios.computeIfAbsent(pair[0] + " / " + pair[1], k -> new ArrayList<>()).add(q.perApp() / p.perApp());
            }
        }
        // the samples' own error (± above) understates the spread: compilation and cache placement
        // differ between JVMs, so the figure is the median of several runs, with their range
        out.println("QuotaFilter's own work per request / its peer's (filter/app ratios of the same run; "
                + "median and range of the runs)");
        ratios.forEach((pair, r) -> {
            double[] v = r.stream().mapToDouble(Double::doubleValue).toArray();
            out.printf(Locale.ROOT, "%-58s %6.3f  (%.3f-%.3f, %d run%s)%n", pair, BenchReport.median(v),
                    Arrays.stream(v).min().orElseThrow(), Arrays.stream(v).max().orElseThrow(), v.length,
                    v.length == 1 ? "" : "s");
        });
        out.flush();
        return 0;
    }

    /** Standard error of {@code own / app} from the counts (Poisson). */
    private static double error(Share s) {
        if (s.own() == 0 || s.app() == 0) return 0;
        return s.perApp() * Math.sqrt(1.0 / s.own() + 1.0 / s.app());
    }

    /** Per mode (by server thread name), in name order. */
    static Map<String, Share> read(BufferedReader in) throws IOException {
        Map<String, Share> shares = new TreeMap<>();
        for (String line; (line = in.readLine()) != null; ) {
            int space = line.lastIndexOf(' ');
            if (space < 0) continue;
            long count;
            try {
                count = Long.parseLong(line.substring(space + 1).trim());
            } catch (NumberFormatException notASample) {
                continue;
            }
            String[] frames = line.substring(0, space).split(";");
            Matcher thread = SERVER_THREAD.matcher(frames[0]);
            if (!thread.matches()) continue;
            long own = 0;
            long app = 0;
            int holder = indexOf(frames, FILTER_HOLDER, 1);
            int end = indexOf(frames, CHAIN_END, 1);
            if (end >= 0) {
                boolean ours = holder >= 0 && holder + 1 < end && frames[holder + 1].startsWith(QUOTA_FILTER)
                        && indexOf(frames, QUOTAGATE_FRAMES, end + 1) >= 0;
                if (ours) own = count;
                else app = count;
            } else if (holder >= 0) {
                own = count;
            }
            shares.merge(thread.group(1), new Share(count, own, app), Share::plus);
        }
        return shares;
    }

    /** The first frame at or after {@code from} that contains {@code text}, or -1. */
    private static int indexOf(String[] frames, String text, int from) {
        for (int i = from; i < frames.length; i++) {
            if (frames[i].contains(text)) return i;
        }
        return -1;
    }
}

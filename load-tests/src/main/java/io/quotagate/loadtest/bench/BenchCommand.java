package io.quotagate.loadtest.bench;

import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The {@code bench} command: measures what {@code QuotaFilter} costs a real Jetty 12 server.
 *
 * <p>It starts one embedded server per {@link Mode} (bare, bare fed 10,000 tenant ids, QuotaFilter
 * with 1 and with 10,000 tenants, Jetty's DoSFilter, a bare per-tenant counter map, and the peers a
 * Java team would pick: a map of bucket4j buckets and resilience4j's registry), then drives them
 * in turn, interleaved and in serpentine order (A B C D, D C B A, A B C D ...), with the same load
 * generator for the same time, so slow drifts of a shared machine hit every mode alike: a drift within
 * a round favours no mode's place in it, as every other round runs them the other way. Each mode's
 * figures are the medians of its runs; the ratios to bare are the medians of the ratios within each
 * round, against the bare server fed the same traffic ({@link Mode#baseline()}); QuotaFilter's ratios to
 * each peer come with a 95 % interval of their median and a verdict ({@link BenchReport#medianInterval}).
 * Exits with 1 if any request was not answered 200.
 */
@Command(name = "bench", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Throughput, latency and server CPU per request of Jetty bare, behind QuotaFilter "
                + "(1 and 10,000 tenants), behind Jetty's DoSFilter, behind a one-map-lookup per-tenant counter, "
                + "a ConcurrentHashMap of bucket4j buckets and resilience4j's RateLimiterRegistry (10,000 tenants), "
                + "measured interleaved (each round in the reverse order of the one before).",
                "Exit status 1 if any request was not answered 200, 2 for an invalid option."})
public final class BenchCommand implements Callable<Integer> {
    /** Thread hand-offs measured after a {@code --redis} run (about 1.5 s at 14 µs each). */
    private static final int HAND_OFFS = 100_000;

    @Option(names = "--duration", paramLabel = "TIME", converter = DurationConverter.class,
            description = "Length of one measured run of one mode, e.g. 10s, 500ms (default ${DEFAULT-VALUE})")
    Duration duration = Duration.ofSeconds(10);

    @Option(names = "--runs", description = {"Measured runs per mode, interleaved (default ${DEFAULT-VALUE}); "
            + "the peer comparison's 95%% interval needs 6 or more; 36 made it 4-11%% wide on a 2-core machine"})
    int runs = 6;

    @Option(names = "--connections", description = "Keep-alive connections, one client thread each (default ${DEFAULT-VALUE})")
    int connections = 8;

    @Option(names = "--warmup", paramLabel = "TIME", converter = DurationConverter.class,
            description = "Unmeasured run of each mode before the first round, 0 for none (default ${DEFAULT-VALUE})")
    Duration warmup = Duration.ofSeconds(5);

    @Option(names = "--json", paramLabel = "FILE", description = "Also write the medians as JSON to this file")
    Path json;

    @Option(names = "--redis", paramLabel = "URI", description = {
            "Run the store modes instead: bare, local store (1 and 1,000 tenants) and Redis store at URI "
                    + "(1 and 1,000 tenants, exact and with a local allowance), with Redis commands per request "
                    + "from INFO commandstats (summed over the primaries for a redis-cluster:// URI). Use a Redis "
                    + "of its own (redis-server --port 6390 --save '' --appendonly no): other clients would count "
                    + "in the commandstats."})
    String redis;

    @Option(names = "--algorithm", paramLabel = "ALGORITHM", description = {"How QuotaFilter's limit counts in the "
            + "quotagate and redis modes: token-bucket (default), gcra or sliding-window; the other filters are what "
            + "they are. One per run: compare algorithms over runs of the same modes (with --redis: the local store "
            + "and the Redis store's script with that algorithm)."})
    String algorithm = io.quotagate.plans.Algorithm.TOKEN_BUCKET.fileName();

    @Option(names = "--modes", split = ",", paramLabel = "MODE", description = {
            "Run only these modes (comma-separated labels, e.g. quotagate-10000-tenants); bare, and the bare mode "
                    + "fed the same traffic, are always run, as every ratio is to one of them, and with a Redis mode "
                    + "the local store with its tenants. Default: all modes of the command (with or without --redis)."})
    List<String> modes;

    @Option(names = "--profile", paramLabel = "FILE", description = {
            "Sample the servers' CPU time during the measured runs (not the warm-up) with async-profiler (Linux "
                    + "x64) and write collapsed stacks per thread to FILE, for filter-share. Run java with "
                    + "-XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints."})
    Path profile;

    @Spec
    CommandSpec spec;

    /**
     * Checks before the first run, not after the last, that the {@code option}'s {@code file} can be
     * written (creating its directory).
     */
    private static void writable(String option, Path file) {
        Path dir = file.toAbsolutePath().getParent();
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot write " + option + " " + file + ": cannot create " + dir
                    + " (" + e + ")");
        }
        if (Files.isDirectory(file)) throw new IllegalArgumentException(option + " " + file + " is a directory");
        if (!Files.isWritable(dir) || Files.exists(file) && !Files.isWritable(file)) {
            throw new IllegalArgumentException("cannot write " + option + " " + file + ": not writable");
        }
    }

    /**
     * The modes to run: all of the command's, or the chosen ones with their baselines (bare, and a Redis
     * mode's local store).
     */
    Set<Mode> modesToRun() {
        Set<Mode> all = redis == null ? Mode.DEFAULT : Mode.WITH_REDIS;
        if (modes == null || modes.isEmpty()) return all;
        Set<Mode> chosen = EnumSet.of(Mode.BARE);
        for (String label : modes) {
            Mode m = Mode.ofLabel(label.trim());
            if (!all.contains(m)) {
                throw new IllegalArgumentException("mode " + label + (redis == null ? " needs --redis URI" : " is not run with --redis"));
            }
            chosen.add(m);
            chosen.add(m.baseline());
            if (m.local() != null) chosen.add(m.local()); // a Redis mode is held against the local store
        }
        return chosen;
    }

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        Set<Mode> toRun;
        RedisCommandStats stats;
        try {
            toRun = checkedOptions();
            stats = redis == null ? null : redisStats(redis); // last: nothing to close if a check above fails
        } catch (IllegalArgumentException e) {
            spec.commandLine().getErr().println("bench: " + e.getMessage());
            return 2;
        }
        Map<Mode, List<RunResult>> results = new EnumMap<>(Mode.class);
        Map<Mode, List<double[]>> redisCalls = new EnumMap<>(Mode.class);
        boolean written = measure(out, toRun, stats, results, redisCalls); // false once an output file could not be written

        BenchReport report = BenchReport.of(results);
        report.print(out);
        if (stats != null) printRedisCalls(out, redisCalls);
        if (json != null && !wroteJson(out, report)) written = false;
        return report.anyErrors() || !written ? 1 : 0;
    }

    /** The options checked, or an {@link IllegalArgumentException} naming the first wrong one; the modes to run. */
    private Set<Mode> checkedOptions() {
        if (runs <= 0) throw new IllegalArgumentException("--runs must be > 0, was " + runs);
        if (duration.isZero() || duration.isNegative()) {
            throw new IllegalArgumentException("--duration must be > 0, was " + text(duration));
        }
        if (warmup.isNegative()) throw new IllegalArgumentException("--warmup must be >= 0, was " + text(warmup));
        if (connections <= 0) throw new IllegalArgumentException("--connections must be > 0, was " + connections);
        if (io.quotagate.plans.Algorithm.ofFileName(algorithm).isEmpty()) {
            throw new IllegalArgumentException("--algorithm: unknown algorithm '" + algorithm
                    + "'; algorithms: token-bucket, gcra, sliding-window");
        }
        Set<Mode> toRun = modesToRun();
        if (json != null) writable("--json", json);
        if (profile != null) {
            writable("--profile", profile);
            BenchProfiler.requireLoadable();
        }
        return toRun;
    }

    /**
     * Starts a server per mode, warms them up, then runs them {@code --runs} times (under the profiler, if
     * asked), into {@code results} and, for the Redis modes, {@code redisCalls}; closes the servers and
     * {@code stats}. False if the profile could not be written.
     */
    private boolean measure(PrintWriter out, Set<Mode> toRun, RedisCommandStats stats,
                            Map<Mode, List<RunResult>> results, Map<Mode, List<double[]>> redisCalls) throws Exception {
        LoadGenerator generator = new LoadGenerator(connections);
        List<BenchServer> servers = new ArrayList<>();
        BenchProfiler profiler = null;
        try {
            for (Mode mode : toRun) {
                servers.add(BenchServer.start(mode, redis, FilterBenchmark.algorithm(algorithm)));
                results.put(mode, new ArrayList<>());
                redisCalls.put(mode, new ArrayList<>());
            }
            out.printf(Locale.ROOT, "bench: %d mode(s) x %d run(s) of %s, %d connection(s), warmup %s, %d CPU(s), "
                            + "QuotaFilter's algorithm %s%n",
                    servers.size(), runs, text(duration), connections, text(warmup),
                    Runtime.getRuntime().availableProcessors(), algorithm);
            if (!warmup.isZero()) {
                for (BenchServer server : servers) {
                    RunResult r = generator.run(server, warmup);
                    out.printf(Locale.ROOT, "warmup  %-28s %9.0f req/s%s%n", server.mode().label(), r.rps(), flag(r));
                }
            }
            if (profile != null) {
                String warning = BenchProfiler.warning();
                if (warning != null) out.println("WARNING " + warning);
                profiler = BenchProfiler.start(profile);
            }
            for (int run = 1; run <= runs; run++) {
                for (BenchServer server : inOrderOf(run, servers)) {
                    runOnce(out, generator, server, run, stats, results.get(server.mode()), redisCalls.get(server.mode()));
                }
            }
            if (profiler == null) return true;
            BenchProfiler sampling = profiler;
            profiler = null;
            return stopped(sampling);
        } finally {
            if (profiler != null) { // a run failed: keep what was sampled, without hiding the failure
                try {
                    profiler.stop();
                } catch (IOException | RuntimeException e) {
                    spec.commandLine().getErr().println("--profile: " + e.getMessage());
                }
            }
            for (BenchServer s : servers) s.close();
            if (stats != null) stats.close();
        }
    }

    /** One measured run of one server, printed; a Redis mode's commands per request counted too. */
    private void runOnce(PrintWriter out, LoadGenerator generator, BenchServer server, int run, RedisCommandStats stats,
                         List<RunResult> results, List<double[]> redisCalls) throws Exception {
        boolean counted = stats != null && server.mode().redis();
        long[] before = counted ? stats.calls() : null;
        long redisCpuBefore = counted ? stats.cpuMicros() : 0;
        long localBefore = server.localDecisions();
        RunResult r = generator.run(server, duration);
        results.add(r);
        String calls = "";
        if (counted) {
            long[] after = stats.calls();
            // commandstats also counts the GETs run inside scripts. bucket4j's modes: one per
            // compare-and-swap EVAL, taken off (a script that fails before its GET, a time-out
            // on a loaded machine, would make the difference negative: 0 then). The store's
            // script (EVALSHA) sends no GET of its own: its column is the keys its calls read
            // (one per distinct key of a call, so fewer than the requests when combined)
            double evals = (after[1] - before[1]) / (double) r.requests();
            double evalshas = (after[2] - before[2]) / (double) r.requests();
            double allGets = (after[0] - before[0]) / (double) r.requests();
            double gets = server.mode().script() ? allGets : Math.max(0, allGets - evals - evalshas);
            double local = (server.localDecisions() - localBefore) / (double) r.requests();
            // Redis's own CPU (the server's column counts the client's threads, not Redis's)
            double redisCpu = (stats.cpuMicros() - redisCpuBefore) / (double) r.requests();
            redisCalls.add(new double[]{gets, evals, evalshas, local, redisCpu});
            calls = server.mode().script()
                    ? String.format(Locale.ROOT, "  Redis/req: %.3f EVALSHA + %.3f EVAL (%.3f keys read), %.4f local, %.2f µs Redis CPU",
                            evalshas, evals, gets, local, redisCpu)
                    : String.format(Locale.ROOT, "  Redis/req: %.3f GET + %.3f EVAL + %.3f EVALSHA, %.4f local, %.2f µs Redis CPU",
                            gets, evals, evalshas, local, redisCpu);
        }
        out.printf(Locale.ROOT, "run %d/%d %-28s %9.0f req/s  p50 %6.3f ms  p99 %6.3f ms  %7.2f µs CPU/req%s%s%n",
                run, runs, server.mode().label(), r.rps(), r.p50Ms(), r.p99Ms(), r.cpuMicrosPerRequest(),
                calls, flag(r));
    }

    /** The Redis modes' medians of commands per request, and what a thread hand-off costs on this machine. */
    private static void printRedisCalls(PrintWriter out, Map<Mode, List<double[]>> redisCalls)
            throws InterruptedException {
        out.println();
        out.println("Redis commands per request (medians; GET + EVAL = bucket4j compare-and-swap, EVAL also the "
                + "heartbeats of every server running, one per server every 2 s; EVALSHA = the "
                + "store's script, its GET column the keys its calls read, not commands sent; local = decided "
                + "from local buckets: fallback or retries exhausted; Redis CPU: Redis's own CPU time during the run "
                + "per request, its idle work and the other servers' heartbeats included, beside the server's column, "
                + "which counts the store's client threads)");
        for (var e : redisCalls.entrySet()) {
            if (e.getValue().isEmpty()) continue;
            double[] gets = e.getValue().stream().mapToDouble(a -> a[0]).toArray();
            double[] evals = e.getValue().stream().mapToDouble(a -> a[1]).toArray();
            double[] evalshas = e.getValue().stream().mapToDouble(a -> a[2]).toArray();
            double[] local = e.getValue().stream().mapToDouble(a -> a[3]).toArray();
            double[] redisCpu = e.getValue().stream().mapToDouble(a -> a[4]).toArray();
            double sent = (e.getKey().script() ? 0 : BenchReport.median(gets)) + BenchReport.median(evals)
                    + BenchReport.median(evalshas);
            out.printf(Locale.ROOT, "%-28s %6.3f GET %6.3f EVAL %6.3f EVALSHA  = %6.3f commands %7.4f local %8.2f µs Redis CPU%n",
                    e.getKey().label(), BenchReport.median(gets), BenchReport.median(evals),
                    BenchReport.median(evalshas), sent, BenchReport.median(local), BenchReport.median(redisCpu));
        }
        HandOff.Cost handOff = HandOff.measure(HAND_OFFS);
        String cpu = handOff.cpuMeasured() ? String.format(Locale.ROOT, "%.1f µs of CPU", handOff.cpuMicros())
                : "an unmeasured CPU time (the process CPU clock did not advance)";
        out.printf(Locale.ROOT, "This machine: one thread hand-off (park, unpark, wake) costs %s, %.1f µs "
                + "elapsed (%,d after the runs). A request decided on Redis pays at least one: its thread waits "
                + "for the reply and is woken.%n", cpu, handOff.wallMicros(), handOff.count());
        out.flush();
    }

    /** Writes {@code --json}; false (and why, on stderr) if it could not be written. */
    private boolean wroteJson(PrintWriter out, BenchReport report) {
        try {
            report.writeJson(json);
            out.println("wrote " + json);
            return true;
        } catch (IOException e) {
            spec.commandLine().getErr().println("bench: could not write --json " + json + ": " + e);
            return false;
        }
    }

    /** Stops the profiler and says where its stacks went; false (and why, on stderr) if they could not be written. */
    private boolean stopped(BenchProfiler profiler) {
        try {
            profiler.stop();
            spec.commandLine().getOut().println("wrote " + profile);
            return true;
        } catch (IOException | RuntimeException e) { // the report still follows: the runs were measured
            spec.commandLine().getErr().println("bench: could not write --profile " + profile + ": " + e.getMessage());
            return false;
        }
    }

    /** The Redis command counter of {@code --redis}, or an {@link IllegalArgumentException} naming why not. */
    private static RedisCommandStats redisStats(String uri) {
        try {
            return new RedisCommandStats(uri);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("cannot use --redis " + uri + ": " + e.getMessage(), e);
        }
    }

    /**
     * The servers in the order of round {@code run} (from 1): as given in odd rounds, reversed in even
     * ones, so a mode measured late in one round is measured early in the next.
     */
    private static <T> List<T> inOrderOf(int run, List<T> servers) {
        if (run % 2 == 1) return servers;
        List<T> reversed = new ArrayList<>(servers);
        Collections.reverse(reversed);
        return reversed;
    }

    private static String flag(RunResult r) {
        return r.errors() == 0 ? "" : "  ERRORS: " + r.non200() + " non-200, " + r.ioErrors() + " I/O";
    }

    /** A duration as the options take it: {@code 300ms}, {@code 5s}. */
    static String text(Duration d) {
        return d.toMillis() % 1000 == 0 ? d.toSeconds() + "s" : d.toMillis() + "ms";
    }

    /** {@code 500ms}, {@code 20s}, {@code 2m} (0 allowed), or ISO-8601 ({@code PT20S}); shared by the load-tests commands. */
    public static final class DurationConverter implements ITypeConverter<Duration> {
        private static final Pattern SHORT = Pattern.compile("(\\d+)(ms|s|m)");

        @Override
        public Duration convert(String value) {
            Matcher m = SHORT.matcher(value.trim());
            if (m.matches()) {
                long n;
                try {
                    n = Long.parseLong(m.group(1));
                } catch (NumberFormatException e) {
                    throw new TypeConversionException("'" + value + "' is too long a duration");
                }
                return switch (m.group(2)) {
                    case "ms" -> Duration.ofMillis(n);
                    case "s" -> Duration.ofSeconds(n);
                    default -> Duration.ofMinutes(n);
                };
            }
            if (value.trim().equals("0")) return Duration.ZERO;
            try {
                return Duration.parse(value.trim());
            } catch (DateTimeParseException e) {
                throw new TypeConversionException("'" + value
                        + "' is not a duration: give e.g. 500ms, 10s, 2m, 0 or PT1M30S");
            }
        }
    }
}

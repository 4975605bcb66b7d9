package io.quotagate.loadtest.scenario;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintStream;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * {@code scenario NAME}: adaptive clients learning the hidden quota of the example app over real
 * HTTP. Without {@code --target}, each mode gets its own in-process example app on a free port of
 * 127.0.0.1 (its own hidden quota), and the modes run at the same time; with {@code --target},
 * the modes run one after the other against that server.
 *
 * <p>{@code scenario slow-backend} is of another kind: server-side adaptive concurrency, an adaptive
 * group beside a fixed cap while a report backend slows down 5× ({@link SlowBackend}); it takes
 * {@code --speed} and the options marked "slow-backend".
 */
@Command(name = "scenario", mixinStandardHelpOptions = true,
        description = {"Runs adaptive clients (none, fixed, aimd, cubic, headers) against a hidden global quota.",
                "Scenarios: race, steady, neighbour, scale-out, quota-drop; and slow-backend (an adaptive concurrency "
                        + "group beside a fixed cap while the report backend slows down 5x for a minute).",
                "Exit status: 0 every check passed; 1 a check failed (named on stderr with its figure and threshold); "
                        + "2 bad arguments; 3 the checks passed but a mode was SATURATED (the machine could not keep the "
                        + "schedule: use a lower --speed)."})
public final class ScenarioCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "NAME", description = "race | steady | neighbour | scale-out | quota-drop | slow-backend")
    String name;

    @Option(names = "--speed", paramLabel = "N", description = "compress time: rates × N, durations ÷ N (default ${DEFAULT-VALUE})")
    double speed = 1;

    @Option(names = "--target", paramLabel = "URL", description = "a running server with the scenario's quota (default: in-process example app)")
    URI target;

    @Option(names = "--out", paramLabel = "DIR", description = "write summary.json, per-second.csv and report.html here")
    Path out;

    @Option(names = "--modes", split = ",", paramLabel = "MODE",
            description = "modes to run (default: the scenario's; race runs none,fixed,aimd,cubic,headers)")
    List<String> modes;

    @Option(names = "--scale", paramLabel = "F", description = "multiply every rate (quota, burst, demand, neighbour) by F; "
            + "keeps the story, sends F times the requests (default ${DEFAULT-VALUE})")
    double scale = 1;

    @Option(names = "--target-management", paramLabel = "URL",
            description = "where the target serves PUT /admin/quota (the example app: its management port, "
                    + "http://127.0.0.1:8081); default: the --target URL")
    URI targetManagement;

    @Option(names = "--admin-token", paramLabel = "TOKEN",
            description = "bearer token of the target's PUT /admin/quota (quota-drop with --target)")
    String adminToken;

    @Option(names = "--quiet", description = "no progress lines")
    boolean quiet;

    @Option(names = "--no-calibration", negatable = false,
            description = "skip the short measurement before an in-process run that warns when this machine cannot keep the schedule")
    boolean noCalibration;

    @Option(names = "--service-ms", paramLabel = "MS",
            description = "slow-backend: a report's service time in the normal phases, 5x in the slow one (default ${DEFAULT-VALUE})")
    long serviceMillis = 100;

    @Option(names = "--rate", paramLabel = "N",
            description = "slow-backend: requests per second to each route, all tenants together (default ${DEFAULT-VALUE})")
    double rate = 40;

    @Option(names = "--fixed-cap", paramLabel = "N",
            description = "slow-backend: max-inflight of the fixed group run beside the adaptive one (default ${DEFAULT-VALUE})")
    int fixedCap = 40;

    @Option(names = "--algorithm", paramLabel = "NAME",
            description = "slow-backend: the adaptive group's algorithm, gradient2 | vegas (default ${DEFAULT-VALUE})")
    String algorithm = "gradient2";

    PrintStream stdout = System.out;

    /** Exit status of a run whose checks passed but whose generator could not keep the schedule. */
    static final int SATURATED = 3;

    /** Requests per client before the clock starts ({@link ModeRun#warmUp}). */
    static final int WARM_UP_REQUESTS = 3_000;

    // the in-process servers log every rejection (rate-limited) at INFO: noise in a run that provokes 429s on purpose
    private static final java.util.logging.Logger SERVER_LOGS = java.util.logging.Logger.getLogger("io.quotagate");

    @Override
    public Integer call() throws Exception {
        if (SlowBackend.NAME.equals(name)) {
            if (!(speed > 0) || serviceMillis < 1 || !(rate > 0) || fixedCap < 1
                    || !List.of("gradient2", "vegas").contains(algorithm)) {
                System.err.println("scenario: slow-backend needs --speed > 0, --service-ms >= 1, --rate > 0, --fixed-cap >= 1"
                        + " and --algorithm gradient2 or vegas");
                return 2;
            }
            return new SlowBackend(speed, serviceMillis, rate, fixedCap, algorithm, stdout, quiet).run();
        }
        Scenario scenario;
        List<Mode> chosen;
        try {
            if (!(speed > 0) || !(scale > 0)) throw new IllegalArgumentException("--speed and --scale must be > 0");
            scenario = Scenario.named(name).scaledRates(scale);
            chosen = modes == null ? scenario.defaultModes() : modes.stream().map(Mode::parse).distinct().toList();
            if (target != null && !"127.0.0.1".equals(target.getHost()) && !"localhost".equals(target.getHost())) {
                throw new IllegalArgumentException("--target must be on 127.0.0.1 (load tests never leave this machine), was " + target);
            }
            if (targetManagement != null && !"127.0.0.1".equals(targetManagement.getHost()) && !"localhost".equals(targetManagement.getHost())) {
                throw new IllegalArgumentException("--target-management must be on 127.0.0.1 (load tests never leave this machine), was "
                        + targetManagement);
            }
        } catch (IllegalArgumentException e) {
            System.err.println("scenario: " + e.getMessage());
            return 2;
        }
        if (scenario.quotaDrop().isPresent() && target != null && adminToken == null) {
            System.err.println("scenario: " + scenario.name() + " changes the target's quota through PUT /admin/quota: give --admin-token");
            return 2;
        }
        stdout.printf(Locale.ROOT, "scenario %s: %s, hidden quota %,.0f units/min (burst %,d), %d workers wanting %,.0f units/min each, "
                        + "speed %s (%s of real time), modes %s%n", scenario.name(), ModeRun.mmss(scenario.duration().toNanos()),
                scenario.quota(), scenario.burst(), scenario.workers().size(), scenario.demand(), Reports.fmt(speed),
                ModeRun.mmss((long) (scenario.duration().toNanos() / speed)), chosen.stream().map(m -> m.id).toList());
        Capacity.warning(scenario, chosen, speed).ifPresent(stdout::println);
        if (target == null && !noCalibration) Calibration.warning(scenario, chosen, speed).ifPresent(stdout::println);
        List<ModeResult> results = target == null ? runInProcess(scenario, chosen) : runAgainst(scenario, chosen, target);
        stdout.println();
        stdout.print(Reports.table(results));
        if (out != null) {
            Reports.writeAll(out, scenario, speed, target == null ? "in-process" : target.toString(), results);
            stdout.println("wrote " + out.resolve("summary.json") + ", per-second.csv, report.html");
        }
        for (ModeResult r : results) {
            if (!r.pace().saturated()) continue;
            stdout.printf(Locale.ROOT, "SATURATED: %s: the generator could not keep the schedule at speed %s (%s); "
                            + "these figures are not those of --speed 1: run again with a lower --speed or --scale, on a quieter machine%n",
                    r.mode().id, Reports.fmt(speed), String.join("; ", r.pace().reasons()));
        }
        int exit = 0;
        long quotaChangeFailures = results.stream().mapToLong(r -> r.run().quotaChangeFailures.get()).sum();
        if (quotaChangeFailures > 0) {
            System.err.println("scenario: " + quotaChangeFailures + " quota change(s) failed: the story did not happen as written");
            exit = 1;
        }
        for (ModeResult r : results) {
            Pace.Verdict p = r.pace();
            if (p.tooManyFailed()) {
                System.err.printf(Locale.ROOT, "scenario: %s: %,d of %,d requests failed (%.1f%%, more than %.0f%%): the figures are not trustworthy%n",
                        r.mode().id, p.failed(), p.sent(), 100 * p.failedShare(), 100 * Pace.FAILED_LIMIT);
                exit = 1;
            }
        }
        for (ModeResult r : results) {
            if (!r.window().passed()) {
                System.err.printf(Locale.ROOT, "scenario: %s: the server-side window check failed: a 60 s window admitted "
                                + "%,d units, more than the %,.0f allowed (quota + burst + counting delay)%n",
                        r.mode().id, r.window().worstAccepted(), r.window().worstAllowed());
                exit = 1;
            }
        }
        if (exit == 0 && results.stream().anyMatch(r -> r.pace().saturated())) {
            // the checks passed, but on figures that are not those of --speed 1: a script must notice
            System.err.printf(Locale.ROOT, "scenario: exit status %d: saturated at speed %s (see SATURATED above)%n",
                    SATURATED, Reports.fmt(speed));
            exit = SATURATED;
        }
        return exit;
    }

    private List<ModeResult> runInProcess(Scenario scenario, List<Mode> chosen) throws Exception {
        if (SERVER_LOGS.getLevel() == null) SERVER_LOGS.setLevel(java.util.logging.Level.WARNING);
        ScenarioClock clock = new ScenarioClock(speed);
        List<InProcessServer> servers = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(chosen.size());
        try {
            for (Mode mode : chosen) servers.add(InProcessServer.start(scenario, clock, mode == Mode.HEADERS));
            List<ModeRun> runs = new ArrayList<>();
            for (int i = 0; i < chosen.size(); i++) {
                runs.add(new ModeRun(scenario, chosen.get(i), URI.create(servers.get(i).baseUri()),
                        URI.create(servers.get(i).managementUri()), clock, quiet ? null : stdout,
                        servers.get(i).published, servers.get(i).adminToken));
            }
            for (ModeRun run : runs) run.warmUp(WARM_UP_REQUESTS);
            // the warm-up emptied every hidden quota: the story starts from full buckets, as without it
            Thread.sleep(java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(InProcessServer.refillNanos(scenario, clock)) + 100);
            // one clock for every mode, started once all is ready: all modes live the same story at the same moments
            clock.restart();
            List<Future<ModeResult>> futures = new ArrayList<>();
            for (int i = 0; i < chosen.size(); i++) {
                Mode mode = chosen.get(i);
                InProcessServer server = servers.get(i);
                ModeRun run = runs.get(i);
                futures.add(pool.submit(() -> {
                    run.run();
                    return ModeResult.of(mode, scenario, run, server.admitted, server.countingDelaySeconds());
                }));
            }
            List<ModeResult> results = new ArrayList<>();
            for (Future<ModeResult> f : futures) results.add(f.get());
            return results;
        } finally {
            pool.shutdownNow();
            for (InProcessServer s : servers) s.close();
        }
    }

    private List<ModeResult> runAgainst(Scenario scenario, List<Mode> chosen, URI base) {
        List<ModeResult> results = new ArrayList<>();
        for (Mode mode : chosen) {
            ScenarioClock clock = new ScenarioClock(speed);
            ModeRun run = new ModeRun(scenario, mode, base, targetManagement != null ? targetManagement : base, clock,
                    quiet ? null : stdout, mode == Mode.HEADERS, adminToken);
            clock.restart();
            run.run();
            results.add(ModeResult.of(mode, scenario, run, null, new double[0]));
        }
        return results;
    }
}

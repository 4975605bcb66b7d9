package io.quotagate.loadtest.colleagues;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.quotagate.example.ExampleApp;
import io.quotagate.loadtest.bench.BenchCommand.DurationConverter;
import io.quotagate.loadtest.bench.RawHttpConnection;
import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.Plan;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.LongAdder;

/**
 * The {@code colleagues} command: one user's script inside a tenant, and what is left of the tenant's
 * rate for a colleague, without and with the plan's {@code per-user} limit, over real HTTP against the
 * example app started in this JVM (127.0.0.1, a free port) with the plans of {@link #PLANS}.
 *
 * <p>Two phases send the same traffic, each to a tenant of its own: {@code before} to {@value #BEFORE_TENANT}
 * (plan {@code team}: a bucket of 100 a second, burst 200, and nothing per user), {@code after} to
 * {@value #AFTER_TENANT} (plan {@code team-per-user}: the same bucket, and each user at most a quarter of
 * it, 25 a second, burst 50). In each, the user {@value #SCRIPT} sends {@code GET /items/1} on
 * {@code --script-connections} keep-alive connections, each sending its next request as soon as the last
 * is answered, and the user {@value #COLLEAGUE} sends {@code GET /items/2} at {@code --colleague-rate} a
 * second on one connection, from half a second after the script started. The table gives per phase the
 * colleague's admitted share (answered 200 / sent), its latency (p50 and p99 of admitted requests and of
 * all), and the script's sent and admitted rates.
 *
 * <p>Checks: in {@code after} the colleague's share is at least 95 % of what the plans guarantee it
 * ({@link #guaranteedShare}); in {@code before} it is at most half of {@code after}'s; every request of
 * either user is answered 200 or 429. A phase whose generator could not do its part is SATURATED: the
 * colleague sent less than 95 % of its rate or left late (p99 lag over 250 ms), or the script sent less
 * than 10 times the tenant's rate (it could not empty the bucket the way a script does). Exit status 0
 * when every check passed, 1 when one failed (each named with its figure and threshold), 2 for an
 * invalid option, 3 when a phase was SATURATED (whether its share checks passed or not: figures the
 * generator did not produce as meant are not judged).
 */
@Command(name = "colleagues", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"A colleague's admitted share and latency while one user's script hammers the same "
                + "tenant, on a plan without and with a per-user limit, against the example app in this JVM.",
                "Exit status 0 every check passed; 1 a check failed (each named with its figure and threshold); "
                        + "2 an invalid option; 3 a phase was SATURATED (the generator could not send the "
                        + "colleague's rate or the script's flood): not judged."})
public final class ColleaguesCommand implements Callable<Integer> {
    /** Two plans alike but for {@code per-user}, shaped like the example app's {@code team} plan, per second. */
    public static final String PLANS = """
            plans:
              team:                          # before: one bucket for the whole tenant
                limits:
                  - { name: burst, capacity: 200, refill: 100, period: 1s }
              team-per-user:                 # after: the same bucket, and each user at most a quarter of it
                limits:
                  - { name: burst, capacity: 200, refill: 100, period: 1s }
                per-user:
                  limits:
                    - { name: seat, capacity: 50, refill: 25, period: 1s }
            routes:
              - { name: items, methods: [GET], paths: ["/items/*"], cost: 1 }
            tenants:
              default-plan: team
              unresolved: reject
              users:
                - { type: header, name: X-User-Id }
              assignments:
                initech: team
                hooli: team-per-user
                warm-up-a: team
                warm-up-b: team-per-user
            """;
    static final String BEFORE_TENANT = "initech";
    static final String AFTER_TENANT = "hooli";
    static final String SCRIPT = "script";
    static final String COLLEAGUE = "ann";

    /** Exit status when a phase was SATURATED: its figures are not those the command means to measure. */
    static final int SATURATED = 3;
    /** The share of its guarantee the colleague must get in {@code after}. */
    static final double AFTER_MIN_OF_GUARANTEE = 0.95;
    /** {@code before}'s share at most this fraction of {@code after}'s: clearly lower. */
    static final double BEFORE_MAX_OF_AFTER = 0.5;
    /** A colleague's request that left more than this late (p99) means the generator fell behind. */
    static final double MAX_LAG_P99_MILLIS = 250;
    /** A script slower than this many times the tenant's rate cannot show starvation. */
    static final double MIN_SCRIPT_OVER_TENANT_RATE = 10;
    /** Fewer samples than this, and a p99 is their slowest: said under the table. */
    static final int MIN_P99_SAMPLES = 100;
    /** The head start of the script: the tenant's burst is spent before the colleague's first request. */
    private static final Duration SCRIPT_HEAD_START = Duration.ofMillis(500);
    // the server logs every refused tenant and second at INFO: noise in a run that provokes 429s on purpose
    // (held here: java.util.logging keeps loggers weakly, and a collected one forgets its level)
    private static final java.util.logging.Logger SERVER_LOGS = java.util.logging.Logger.getLogger("io.quotagate");

    @Option(names = "--duration", paramLabel = "TIME", converter = DurationConverter.class,
            description = "length of each phase's measurement (default: ${DEFAULT-VALUE})")
    Duration duration = Duration.ofSeconds(15);

    @Option(names = "--warmup", paramLabel = "TIME", converter = DurationConverter.class,
            description = "unmeasured traffic before the phases, on tenants of their own (default: ${DEFAULT-VALUE})")
    Duration warmup = Duration.ofSeconds(4);

    @Option(names = "--colleague-rate", paramLabel = "N",
            description = "the colleague's requests per second (default: ${DEFAULT-VALUE})")
    int colleagueRate = 20;

    @Option(names = "--script-connections", paramLabel = "N",
            description = "the script's keep-alive connections, each sending as soon as answered (default: ${DEFAULT-VALUE})")
    int scriptConnections = 4;

    @Option(names = "--json", paramLabel = "FILE", description = "also write the figures and checks as JSON to this file")
    Path json;

    @Spec
    CommandSpec spec;

    /** What one user sent in a phase, and what it was answered. */
    record UserFigures(long sent, long admitted, long refused, long failed) {
        double share() {
            return sent == 0 ? 0 : (double) admitted / sent;
        }
    }

    /**
     * One phase's figures: the colleague's answers and latencies (ms; NaN without samples), the lag of its
     * requests behind their schedule, and the script's answers over the measured {@code seconds}.
     */
    record Phase(String name, String tenant, String plan, double seconds, int expectedColleagueRequests,
                 UserFigures colleague, double admittedP50Millis, double admittedP99Millis, double allP50Millis,
                 double allP99Millis, double lagP99Millis, UserFigures script) {
        double scriptSentPerSecond() {
            return script.sent() / seconds;
        }

        double scriptAdmittedPerSecond() {
            return script.admitted() / seconds;
        }
    }

    /** The plans' figures the checks are derived from, in units per second. */
    record Sizes(double tenantRate, long tenantBurst, double userRate, long userBurst) {
        static Sizes of(Plans plans) {
            Plan fair = plans.plan("team-per-user").orElseThrow();
            Bandwidth tenant = fair.limits().get(0);
            Bandwidth user = fair.perUser().get(0);
            return new Sizes(perSecond(tenant), tenant.capacity(), perSecond(user), user.capacity());
        }

        private static double perSecond(Bandwidth b) {
            return b.refill() * 1e9 / b.period().toNanos();
        }
    }

    /**
     * The share of the colleague's requests the {@code after} plan guarantees: the script takes at most one
     * user's rate from the tenant's refill, and the colleague may itself send at most one user's rate.
     */
    static double guaranteedShare(Sizes sizes, double colleagueRate) {
        double left = Math.min(sizes.tenantRate() - sizes.userRate(), sizes.userRate());
        return Math.max(0, Math.min(1, left / colleagueRate));
    }

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        String invalid = duration.isZero() || duration.isNegative() ? "--duration must be > 0, was " + duration
                : warmup.isNegative() ? "--warmup must be >= 0, was " + warmup
                : colleagueRate <= 0 ? "--colleague-rate must be > 0, was " + colleagueRate
                : scriptConnections <= 0 ? "--script-connections must be > 0, was " + scriptConnections
                : json != null && json.toAbsolutePath().getParent() != null
                        && !Files.isDirectory(json.toAbsolutePath().getParent())
                        ? "--json " + json + ": no such directory" : null;
        if (invalid != null) {
            spec.commandLine().getErr().println("colleagues: " + invalid);
            return 2;
        }
        Plans plans = PlansFile.parse("colleagues-plans.yml", PLANS);
        Sizes sizes = Sizes.of(plans);
        double guaranteed = guaranteedShare(sizes, colleagueRate);
        if (SERVER_LOGS.getLevel() == null) SERVER_LOGS.setLevel(java.util.logging.Level.WARNING);
        List<Phase> phases = new ArrayList<>();
        try (ExampleApp.Running app = ExampleApp.start("127.0.0.1", 0, plans)) {
            InetSocketAddress address = new InetSocketAddress("127.0.0.1", app.port());
            out.printf(Locale.ROOT, "example app on 127.0.0.1:%d; tenant bucket %s/s (burst %d), per user %s/s "
                            + "(burst %d) in 'after' only; user '%s' on %d connection%s as fast as answered, user '%s' at "
                            + "%d/s; %s s per phase; the plans guarantee the colleague %.0f %% in 'after'%n",
                    app.port(), fmt(sizes.tenantRate()), sizes.tenantBurst(), fmt(sizes.userRate()), sizes.userBurst(),
                    SCRIPT, scriptConnections, scriptConnections == 1 ? "" : "s", COLLEAGUE, colleagueRate,
                    fmt(duration.toMillis() / 1000.0), 100 * guaranteed);
            out.flush();
            if (!warmup.isZero()) { // JIT and connections on tenants of their own, not recorded
                Duration half = warmup.dividedBy(2);
                phase("warm-up", "warm-up-a", "team", address, half);
                phase("warm-up", "warm-up-b", "team-per-user", address, half);
            }
            phases.add(report(out, phase("before", BEFORE_TENANT, "team", address, duration)));
            phases.add(report(out, phase("after", AFTER_TENANT, "team-per-user", address, duration)));
        }
        out.println();
        out.print(table(phases));
        out.println();
        int exit = verdict(phases.get(0), phases.get(1), sizes, guaranteed, colleagueRate, out);
        if (json != null) {
            try {
                writeJson(json, sizes, guaranteed, phases, exit);
                out.println("wrote " + json);
            } catch (IOException e) {
                spec.commandLine().getErr().println("colleagues: could not write --json " + json + ": " + e);
                if (exit == 0) exit = 1;
            }
        }
        out.flush();
        return exit;
    }

    private static Phase report(PrintWriter out, Phase p) {
        out.printf(Locale.ROOT, "%-7s colleague %d/%d admitted (%.1f %%), p99 of all %.2f ms; script %.0f/s sent, "
                        + "%.1f/s admitted%n", p.name(), p.colleague().admitted(), p.colleague().sent(),
                100 * p.colleague().share(), p.allP99Millis(), p.scriptSentPerSecond(), p.scriptAdmittedPerSecond());
        out.flush();
        return p;
    }

    /** The readable table: one row per phase. */
    static String table(List<Phase> phases) {
        StringBuilder b = new StringBuilder();
        b.append("| Phase | Tenant (plan) | Colleague sent | admitted | share | p50 / p99 admitted ms | p50 / p99 all ms "
                + "| Script sent/s | Script admitted/s |\n");
        b.append("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (Phase p : phases) {
            b.append(String.format(Locale.ROOT, "| %s | %s (%s) | %d | %d | %.1f %% | %s / %s | %s / %s | %,.0f | %.1f |%n",
                    p.name(), p.tenant(), p.plan(), p.colleague().sent(), p.colleague().admitted(),
                    100 * p.colleague().share(), ms(p.admittedP50Millis()), ms(p.admittedP99Millis()),
                    ms(p.allP50Millis()), ms(p.allP99Millis()), p.scriptSentPerSecond(), p.scriptAdmittedPerSecond()));
        }
        for (Phase p : phases) {
            long n = p.colleague().admitted();
            if (n > 0 && n < MIN_P99_SAMPLES) {
                b.append(String.format(Locale.ROOT, "(%s: the admitted p99 is over %d request%s, i.e. the slowest)%n",
                        p.name(), n, n == 1 ? "" : "s"));
            }
        }
        return b.toString();
    }

    /** Why a phase's generator did not do its part, or an empty list. */
    static List<String> saturation(Phase p, Sizes sizes) {
        List<String> reasons = new ArrayList<>();
        if (p.colleague().sent() < 0.95 * p.expectedColleagueRequests()) {
            reasons.add(String.format(Locale.ROOT, "the colleague sent %d of the %d requests of its rate (< 95 %%)",
                    p.colleague().sent(), p.expectedColleagueRequests()));
        }
        if (p.lagP99Millis() > MAX_LAG_P99_MILLIS) {
            reasons.add(String.format(Locale.ROOT, "the colleague's requests left late: p99 lag %.0f ms > %.0f ms",
                    p.lagP99Millis(), MAX_LAG_P99_MILLIS));
        }
        double floor = MIN_SCRIPT_OVER_TENANT_RATE * sizes.tenantRate();
        if (p.scriptSentPerSecond() < floor) {
            reasons.add(String.format(Locale.ROOT, "the script sent %.0f/s, less than %.0f × the tenant's rate (%.0f/s)",
                    p.scriptSentPerSecond(), MIN_SCRIPT_OVER_TENANT_RATE, floor));
        }
        return reasons;
    }

    /**
     * Prints one line per check, each naming its figure and threshold, then any SATURATED phase with its
     * reasons, and answers the exit status: 1 if a request failed, or a share check failed while no phase was
     * saturated; {@value #SATURATED} if a phase was saturated and nothing else failed; else 0.
     */
    static int verdict(Phase before, Phase after, Sizes sizes, double guaranteed, int colleagueRate, PrintWriter out) {
        boolean failedRequests = false;
        for (Phase p : List.of(before, after)) {
            long failed = p.colleague().failed() + p.script().failed();
            if (failed > 0) {
                failedRequests = true;
                out.printf(Locale.ROOT, "FAILED %s: %d request%s answered neither 200 nor 429 (colleague %d, script %d; "
                                + "threshold: 0)%n", p.name(), failed, failed == 1 ? " was" : "s were",
                        p.colleague().failed(), p.script().failed());
            }
        }
        boolean sharesFailed = false;
        double afterMin = AFTER_MIN_OF_GUARANTEE * guaranteed;
        String afterFigure = String.format(Locale.ROOT, "colleague's share %.3f (%d of %d) %s %.3f (%.0f %% of the "
                        + "%.3f the plans guarantee at %d/s: min(tenant %s/s − user %s/s, user %s/s) / %d)",
                after.colleague().share(), after.colleague().admitted(), after.colleague().sent(),
                after.colleague().share() >= afterMin ? ">=" : "<", afterMin, 100 * AFTER_MIN_OF_GUARANTEE, guaranteed,
                colleagueRate, fmt(sizes.tenantRate()), fmt(sizes.userRate()), fmt(sizes.userRate()), colleagueRate);
        if (after.colleague().share() >= afterMin) {
            out.println("passed after: " + afterFigure);
        } else {
            sharesFailed = true;
            out.println("FAILED after: " + afterFigure);
        }
        double beforeMax = BEFORE_MAX_OF_AFTER * after.colleague().share();
        String beforeFigure = String.format(Locale.ROOT, "colleague's share %.3f (%d of %d) %s %.3f (half of after's "
                        + "%.3f)", before.colleague().share(), before.colleague().admitted(), before.colleague().sent(),
                before.colleague().share() <= beforeMax ? "<=" : ">", beforeMax, after.colleague().share());
        if (before.colleague().share() <= beforeMax) {
            out.println("passed before: " + beforeFigure);
        } else {
            sharesFailed = true;
            out.println("FAILED before: " + beforeFigure);
        }
        boolean saturated = false;
        for (Phase p : List.of(before, after)) {
            List<String> reasons = saturation(p, sizes);
            if (reasons.isEmpty()) continue;
            saturated = true;
            out.printf(Locale.ROOT, "SATURATED %s: %s; its figures are not the ones meant: run again on a quieter "
                    + "machine, with fewer --script-connections or a lower --colleague-rate%n", p.name(),
                    String.join("; ", reasons));
        }
        if (failedRequests) return 1;
        if (saturated) {
            if (sharesFailed) out.println("the failed share checks above are not judged: a phase was SATURATED");
            return SATURATED;
        }
        return sharesFailed ? 1 : 0;
    }

    /** Runs one phase: the script from the start, the colleague from half a second later, both until the end. */
    private Phase phase(String name, String tenant, String plan, InetSocketAddress address, Duration length)
            throws Exception {
        int port = address.getPort();
        byte[] scriptRequest = RawHttpConnection.get("127.0.0.1", port, "/items/1", "X-Tenant-Id: " + tenant,
                "X-User-Id: " + SCRIPT);
        byte[] colleagueRequest = RawHttpConnection.get("127.0.0.1", port, "/items/2", "X-Tenant-Id: " + tenant,
                "X-User-Id: " + COLLEAGUE);
        long measuredFrom = System.nanoTime() + SCRIPT_HEAD_START.toNanos();
        long end = measuredFrom + length.toNanos();
        LongAdder[] scriptCounts = {new LongAdder(), new LongAdder(), new LongAdder(), new LongAdder()};
        List<Thread> scripts = new ArrayList<>();
        for (int i = 0; i < scriptConnections; i++) {
            Thread t = new Thread(() -> script(address, scriptRequest, measuredFrom, end, scriptCounts),
                    "colleagues-script-" + i);
            t.setDaemon(true);
            t.start();
            scripts.add(t);
        }
        long interval = 1_000_000_000L / colleagueRate;
        int expected = (int) (length.toNanos() / interval);
        long[] all = new long[expected + 1];
        long[] admittedNanos = new long[expected + 1];
        long[] lags = new long[expected + 1];
        int sent = 0;
        int admitted = 0;
        int refused = 0;
        int failed = 0;
        try (RawHttpConnection connection = new RawHttpConnection(address)) {
            // a colleague that fell behind sends its late requests in a row, but none after the end: what it
            // could not send shows as fewer sent than its rate asks (SATURATED), not as a longer phase
            for (long next = measuredFrom; next < end && sent < all.length && System.nanoTime() < end;
                 next += interval) {
                long wait = next - System.nanoTime();
                if (wait > 0) Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                long start = System.nanoTime();
                lags[sent] = Math.max(0, start - next);
                int status;
                try {
                    status = connection.exchange(colleagueRequest);
                } catch (IOException e) {
                    status = -1; // the connection reconnects on the next exchange
                }
                long took = System.nanoTime() - start;
                all[sent++] = took;
                if (status == 200) admittedNanos[admitted++] = took;
                else if (status == 429) refused++;
                else failed++;
            }
        }
        for (Thread t : scripts) t.join(15_000);
        double seconds = length.toNanos() / 1e9;
        long[] a = Arrays.copyOf(all, sent);
        long[] ok = Arrays.copyOf(admittedNanos, admitted);
        long[] lag = Arrays.copyOf(lags, sent);
        Arrays.sort(a);
        Arrays.sort(ok);
        Arrays.sort(lag);
        return new Phase(name, tenant, plan, seconds, expected, new UserFigures(sent, admitted, refused, failed),
                percentile(ok, 0.50), percentile(ok, 0.99), percentile(a, 0.50), percentile(a, 0.99),
                percentile(lag, 0.99), new UserFigures(scriptCounts[0].sum(), scriptCounts[1].sum(),
                scriptCounts[2].sum(), scriptCounts[3].sum()));
    }

    /**
     * One script connection: the next request as soon as the last is answered, until {@code end}; counts
     * (sent, admitted, refused, failed) the requests that started from {@code measuredFrom} on.
     */
    private static void script(InetSocketAddress address, byte[] request, long measuredFrom, long end,
                               LongAdder[] counts) {
        RawHttpConnection connection = null;
        try {
            for (long now = System.nanoTime(); now < end; now = System.nanoTime()) {
                int status;
                try {
                    if (connection == null) connection = new RawHttpConnection(address);
                    status = connection.exchange(request);
                } catch (IOException e) {
                    status = -1;
                }
                if (now < measuredFrom) continue;
                counts[0].increment();
                counts[status == 200 ? 1 : status == 429 ? 2 : 3].increment();
            }
        } finally {
            if (connection != null) connection.close();
        }
    }

    /** The nearest-rank percentile in milliseconds, or NaN without samples. */
    static double percentile(long[] sortedNanos, double q) {
        if (sortedNanos.length == 0) return Double.NaN;
        int i = (int) Math.ceil(q * sortedNanos.length) - 1;
        return sortedNanos[Math.max(0, Math.min(sortedNanos.length - 1, i))] / 1e6;
    }

    private static String ms(double millis) {
        return Double.isNaN(millis) ? "-" : String.format(Locale.ROOT, "%.2f", millis);
    }

    private static String fmt(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : String.format(Locale.ROOT, "%.2f", v);
    }

    private void writeJson(Path file, Sizes sizes, double guaranteed, List<Phase> phases, int exit) throws IOException {
        ObjectMapper mapper = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
        ObjectNode root = mapper.createObjectNode();
        root.put("command", "colleagues")
                .put("durationSeconds", duration.toMillis() / 1000.0)
                .put("colleagueRate", colleagueRate)
                .put("scriptConnections", scriptConnections);
        root.putObject("plans")
                .put("tenantRatePerSecond", sizes.tenantRate()).put("tenantBurst", sizes.tenantBurst())
                .put("userRatePerSecond", sizes.userRate()).put("userBurst", sizes.userBurst());
        root.put("guaranteedShare", guaranteed);
        ArrayNode array = root.putArray("phases");
        boolean saturated = false;
        for (Phase p : phases) {
            ObjectNode o = array.addObject().put("phase", p.name()).put("tenant", p.tenant()).put("plan", p.plan());
            ObjectNode c = o.putObject("colleague");
            c.put("sent", p.colleague().sent()).put("admitted", p.colleague().admitted())
                    .put("refused", p.colleague().refused()).put("failed", p.colleague().failed())
                    .put("share", round(p.colleague().share(), 4));
            putMillis(c, "admittedP50Ms", p.admittedP50Millis());
            putMillis(c, "admittedP99Ms", p.admittedP99Millis());
            putMillis(c, "allP50Ms", p.allP50Millis());
            putMillis(c, "allP99Ms", p.allP99Millis());
            putMillis(c, "lagP99Ms", p.lagP99Millis());
            o.putObject("script").put("sent", p.script().sent()).put("admitted", p.script().admitted())
                    .put("refused", p.script().refused()).put("failed", p.script().failed())
                    .put("sentPerSecond", round(p.scriptSentPerSecond(), 1))
                    .put("admittedPerSecond", round(p.scriptAdmittedPerSecond(), 2));
            List<String> reasons = saturation(p, sizes);
            o.put("saturated", !reasons.isEmpty());
            ArrayNode r = o.putArray("saturationReasons");
            reasons.forEach(r::add);
            saturated |= !reasons.isEmpty();
        }
        root.put("saturated", saturated);
        root.put("exitStatus", exit);
        mapper.writeValue(file.toFile(), root);
    }

    private static void putMillis(ObjectNode o, String field, double millis) {
        if (Double.isNaN(millis)) o.putNull(field);
        else o.put(field, round(millis, 3));
    }

    private static double round(double v, int places) {
        double f = Math.pow(10, places);
        return Math.round(v * f) / f;
    }
}

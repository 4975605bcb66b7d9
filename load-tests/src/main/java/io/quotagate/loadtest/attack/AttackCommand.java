package io.quotagate.loadtest.attack;

import io.quotagate.example.ExampleApp;
import io.quotagate.loadtest.bench.BenchCommand.DurationConverter;
import io.quotagate.plans.PlansFile;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The {@code attack} command: what one hostile client does to another tenant's latency, over real HTTP
 * against the example app (its embedded plans) started in this JVM.
 *
 * <p>A victim ({@code acme}, pro plan) sends {@code GET /items/N} at a steady pace through every phase:
 * first alone (the baseline), then while an attacker runs one shape of attack against
 * {@code POST /v1/completions}, the cost-estimated route whose body the filter reads:
 * <ul>
 *   <li>{@code slow-body}: one tenant, many connections, each announcing a 100-byte body and sending 1;</li>
 *   <li>{@code rotating-slow-body}: the same with a fresh made-up tenant id on every connection;</li>
 *   <li>{@code big-body}: one tenant sending valid 1 MB bodies (2 units each) as fast as it can, so it is
 *       soon over its limit.</li>
 * </ul>
 * Each attacking connection waits {@code --pause} after an answer before it tries again, so the
 * attack measures what the filter controls (bodies, slots, units) rather than a raw connection flood,
 * which only the container can limit (and which, on a machine shared with this generator, mostly
 * measures the generator). The table gives the victim's p50, p99 and max per phase and the p99 ratio
 * to the baseline, then one line per check that failed, naming its figure and threshold. Exit status 1 if a
 * victim request failed or a ratio exceeds {@code --max-ratio} (default 2); 3 if no victim request failed but a
 * phase had fewer than {@code --min-samples} victim requests, too few for a p99 to mean anything.
 */
@Command(name = "attack", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Another tenant's latency while one client attacks the body-reading route (slow bodies, "
                + "rotating ids, big bodies), against the example app in this JVM.",
                "Exit status 1 if a victim request failed or its p99 grew more than --max-ratio times (each "
                        + "failed check is named with its figure and threshold), 2 for an invalid option, 3 when a "
                        + "phase had too few victim requests (--min-samples) for its p99 to be judged."})
public final class AttackCommand implements Callable<Integer> {
    /** Held: java.util.logging keeps loggers weakly, and a collected one would forget its level. */
    private static final java.util.logging.Logger SERVER_LOGS = java.util.logging.Logger.getLogger("io.quotagate");

    static final String VICTIM = "acme";
    static final String PATH = "/v1/completions";
    private static final int CHUNK = 64 * 1024;

    @Option(names = "--duration", paramLabel = "TIME", converter = DurationConverter.class,
            description = "length of each phase (default: ${DEFAULT-VALUE})")
    Duration duration = Duration.ofSeconds(30);

    @Option(names = "--connections", description = "attacking connections (default: ${DEFAULT-VALUE})")
    int connections = 230;

    @Option(names = "--pause", paramLabel = "TIME", converter = DurationConverter.class,
            description = "how long an attacking connection waits after an answer before it tries again "
                    + "(default: ${DEFAULT-VALUE}); 0ms makes it a connection flood, which the container must limit")
    Duration pause = Duration.ofMillis(500);

    @Option(names = "--victim-rate", description = "victim requests per second (default: ${DEFAULT-VALUE}; "
            + "the pro plan refills 10/s)")
    int victimRate = 8;

    @Option(names = "--shapes", split = ",", description = "slow-body, rotating-slow-body, big-body (default: all)")
    List<String> shapes = List.of("slow-body", "rotating-slow-body", "big-body");

    @Option(names = "--max-ratio", description = "largest acceptable p99 ratio to the baseline (default: ${DEFAULT-VALUE})")
    double maxRatio = 2.0;

    @Option(names = "--min-samples", description = "fewest victim requests per phase for its p99 to be judged "
            + "(default: ${DEFAULT-VALUE}: a p99 of fewer is the slowest request or two)")
    int minSamples = 100;

    /** Exit status when a phase had too few victim requests for its p99 to be judged. */
    static final int TOO_FEW_SAMPLES = 3;

    @Spec
    CommandSpec spec;
    private PrintWriter out;

    /** One phase's victim figures and what the attacker was answered. */
    record Phase(String name, int sent, int ok, double p50Millis, double p99Millis, double maxMillis,
                 Map<String, Long> attackerAnswers) {
    }

    @Override
    public Integer call() throws Exception {
        out = spec.commandLine().getOut();
        String invalid = duration.isZero() || duration.isNegative() ? "--duration must be > 0, was " + duration
                : pause.isNegative() ? "--pause must be >= 0, was " + pause
                : connections <= 0 ? "--connections must be > 0, was " + connections
                : victimRate <= 0 ? "--victim-rate must be > 0, was " + victimRate
                : !(maxRatio > 0) ? "--max-ratio must be > 0, was " + maxRatio
                : minSamples <= 0 ? "--min-samples must be > 0, was " + minSamples : null;
        if (invalid != null) {
            spec.commandLine().getErr().println("attack: " + invalid);
            return 2;
        }
        for (String s : shapes) {
            if (!List.of("slow-body", "rotating-slow-body", "big-body").contains(s)) {
                spec.commandLine().getErr().println("attack: unknown shape " + s
                        + "; known: slow-body, rotating-slow-body, big-body");
                return 2;
            }
        }
        // one line per refused tenant and second is the filter's normal log; here it would bury the table
        SERVER_LOGS.setLevel(java.util.logging.Level.WARNING);
        try (ExampleApp.Running app = ExampleApp.start("127.0.0.1", 0, PlansFile.load(ExampleApp.DEFAULT_PLANS))) {
            int port = app.port();
            out.printf(Locale.ROOT, "example app on 127.0.0.1:%d; victim %s at %d requests/s; %d attacking "
                    + "connections, each pausing %d ms between attempts; %d s per phase%n", port, VICTIM, victimRate,
                    connections, pause.toMillis(), duration.toSeconds());
            phase("warm-up", port, null, Duration.ofSeconds(5)); // JIT and connections, not recorded
            List<Phase> phases = new ArrayList<>();
            phases.add(phase("baseline", port, null, duration));
            for (String shape : shapes) {
                // the last slow bodies of the previous shape time out (5 s) and the victim's bucket refills
                if (phases.size() > 1) Thread.sleep(6_000);
                phases.add(phase(shape, port, shape, duration));
            }
            out.println();
            out.println("| Phase | Victim requests | 200 | p50 ms | p99 ms | max ms | p99 / baseline | Attacker answered |");
            out.println("|---|---|---|---|---|---|---|---|");
            double base = phases.get(0).p99Millis();
            for (Phase p : phases) {
                out.printf(Locale.ROOT, "| %s | %d | %d | %.2f | %.2f | %.2f | %.2f | %s |%n", p.name(), p.sent(),
                        p.ok(), p.p50Millis(), p.p99Millis(), p.maxMillis(), p.p99Millis() / base,
                        p.attackerAnswers().isEmpty() ? "-" : p.attackerAnswers().toString());
            }
            out.println();
            return verdict(phases, maxRatio, minSamples, out);
        }
    }

    /**
     * Prints one line per check, each naming its figure and threshold, and answers the exit status: 1 if a check
     * failed on enough samples (a failed victim request always counts), {@value #TOO_FEW_SAMPLES} if a ratio
     * could not be judged for want of samples, else 0.
     */
    static int verdict(List<Phase> phases, double maxRatio, int minSamples, PrintWriter out) {
        Phase baseline = phases.get(0);
        boolean failed = false;
        boolean tooFew = false;
        for (Phase p : phases) {
            if (p.ok() != p.sent()) {
                failed = true;
                out.printf(Locale.ROOT, "FAILED %s: %d of %d victim requests were not answered 200 (threshold: 0)%n",
                        p.name(), p.sent() - p.ok(), p.sent());
            }
            if (p == baseline) continue;
            double ratio = p.p99Millis() / baseline.p99Millis();
            int samples = Math.min(p.sent(), baseline.sent());
            String figure = String.format(Locale.ROOT, "p99 / baseline %.2f (%.2f ms / %.2f ms) %s --max-ratio %.2f",
                    ratio, p.p99Millis(), baseline.p99Millis(), ratio <= maxRatio ? "<=" : ">", maxRatio);
            if (samples < minSamples) {
                tooFew = true;
                out.printf(Locale.ROOT, "TOO FEW SAMPLES %s: %s, but over %d victim requests, fewer than --min-samples "
                        + "%d: not judged (a longer --duration or a higher --victim-rate gives more)%n",
                        p.name(), figure, samples, minSamples);
            } else if (ratio > maxRatio) {
                failed = true;
                out.printf(Locale.ROOT, "FAILED %s: %s, over %d victim requests%n", p.name(), figure, samples);
            } else {
                out.printf(Locale.ROOT, "passed %s: %s%n", p.name(), figure);
            }
        }
        return failed ? 1 : tooFew ? TOO_FEW_SAMPLES : 0;
    }

    private Phase phase(String name, int port, String shape, Duration length) throws Exception {
        long end = System.nanoTime() + length.toNanos();
        Map<String, LongAdder> answers = new ConcurrentHashMap<>();
        List<Thread> attackers = new ArrayList<>();
        if (shape != null) {
            AtomicInteger ids = new AtomicInteger();
            byte[] body = shape.equals("big-body") ? bigBody() : null; // one copy for every attacker
            int n = shape.equals("big-body") ? Math.max(1, connections / 10) : connections;
            for (int i = 0; i < n; i++) {
                Thread t = new Thread(() -> attack(shape, body, port, end, pause, ids, answers), "attacker-" + i);
                t.setDaemon(true);
                t.start();
                attackers.add(t);
            }
            Thread.sleep(500); // the attack is under way before the victim measures
        }
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5)).build();
        List<Long> nanos = new ArrayList<>();
        int sent = 0;
        int ok = 0;
        long interval = 1_000_000_000L / victimRate;
        for (long next = System.nanoTime(); next < end; next += interval) {
            long wait = next - System.nanoTime();
            if (wait > 0) Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
            HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/items/" + sent))
                    .header("X-Tenant-Id", VICTIM).timeout(Duration.ofSeconds(15)).GET().build();
            long start = System.nanoTime();
            sent++;
            try {
                HttpResponse<Void> r = client.send(request, HttpResponse.BodyHandlers.discarding());
                if (r.statusCode() == 200) ok++;
            } catch (IOException e) {
                // a timed-out or refused request counts as sent and not ok
            }
            nanos.add(System.nanoTime() - start);
        }
        for (Thread t : attackers) t.join(10_000);
        long[] sorted = nanos.stream().mapToLong(Long::longValue).sorted().toArray();
        Map<String, Long> attackerAnswers = new TreeMap<>();
        answers.forEach((k, v) -> attackerAnswers.put(k, v.sum()));
        Phase p = new Phase(name, sent, ok, percentile(sorted, 0.50), percentile(sorted, 0.99),
                sorted.length == 0 ? 0 : sorted[sorted.length - 1] / 1e6, attackerAnswers);
        out.printf(Locale.ROOT, "%-20s victim %d/%d ok, p99 %.2f ms; attacker %s%n", name, ok, sent,
                p.p99Millis(), attackerAnswers);
        return p;
    }

    private static double percentile(long[] sorted, double q) {
        if (sorted.length == 0) return 0;
        int i = (int) Math.ceil(q * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))] / 1e6;
    }

    /** One attacking connection after another until {@code end}, counting what the server answered. */
    private static void attack(String shape, byte[] bigBody, int port, long end, Duration pause, AtomicInteger ids,
                               Map<String, LongAdder> answers) {
        while (System.nanoTime() < end) {
            String tenant = shape.equals("rotating-slow-body") ? "made-up-" + ids.incrementAndGet() : "mallory";
            String outcome;
            try (Socket s = new Socket("127.0.0.1", port)) {
                s.setSoTimeout(15_000);
                OutputStream out = s.getOutputStream();
                int length = bigBody == null ? 100 : bigBody.length;
                out.write(("POST " + PATH + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: "
                        + "application/json\r\nX-Tenant-Id: " + tenant + "\r\nContent-Length: " + length + "\r\n\r\n")
                        .getBytes(StandardCharsets.ISO_8859_1));
                InputStream in = s.getInputStream();
                if (bigBody == null) {
                    out.write('{'); // one byte of the hundred announced, then nothing
                    out.flush();
                } else {
                    // as an HTTP client does: stop sending once the server has answered
                    try {
                        for (int at = 0; at < bigBody.length && in.available() == 0; at += CHUNK) {
                            out.write(bigBody, at, Math.min(CHUNK, bigBody.length - at));
                        }
                    } catch (IOException refusedEarly) {
                        // the server answered and closed without reading the body: read its answer
                    }
                }
                outcome = statusOf(in);
            } catch (IOException e) {
                outcome = "error";
            }
            answers.computeIfAbsent(outcome, k -> new LongAdder()).increment();
            try {
                Thread.sleep(pause.toMillis());
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private static String statusOf(InputStream in) throws IOException {
        byte[] head = in.readNBytes(12);
        if (head.length < 12) return "closed";
        return new String(head, 9, 3, StandardCharsets.ISO_8859_1);
    }

    /** A valid completions body of about 1 MB that costs 2 units: the padding is a field nobody reads. */
    private static byte[] bigBody() {
        char[] padding = new char[1_000_000];
        Arrays.fill(padding, 'a');
        return ("{\"prompt\":\"a\",\"max_tokens\":1,\"padding\":\"" + new String(padding) + "\"}")
                .getBytes(StandardCharsets.US_ASCII);
    }
}

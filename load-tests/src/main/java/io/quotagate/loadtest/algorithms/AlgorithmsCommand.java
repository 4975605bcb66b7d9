package io.quotagate.loadtest.algorithms;

import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.store.BucketLimits;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.store.QuotaBucket;
import io.quotagate.plans.Algorithm;
import io.quotagate.plans.Bandwidth;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;

/**
 * The {@code algorithms} command: the three algorithms of a limit ({@code token-bucket}, {@code gcra},
 * {@code sliding-window}) under the same bursty traffic, decided by the local store on a manual clock (no
 * HTTP: this is the arithmetic), drawn as an SVG: every request admitted or refused over time, and the most
 * admitted in the window of one period ending at each moment. docs/algorithms.md shows its picture.
 */
@Command(name = "algorithms", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"The token bucket, GCRA and the sliding window under the same bursty traffic, on the local store "
                + "and a manual clock: admissions over time and the most any window of the period saw, as an SVG.",
                "Exit status 1 if the sliding window admitted more than its capacity in a window, 2 for an invalid option."})
public final class AlgorithmsCommand implements Callable<Integer> {
    @Option(names = "--capacity", description = "Capacity: the token bucket's and GCRA's burst, the window's most (default ${DEFAULT-VALUE})")
    long capacity = 10;

    @Option(names = "--period", description = "Period in seconds: the window's length; the bucket refills its capacity in it (default ${DEFAULT-VALUE})")
    long periodSeconds = 10;

    @Option(names = "--seconds", description = "Length of the traffic in seconds (default ${DEFAULT-VALUE})")
    long seconds = 60;

    @Option(names = "--seed", description = "Random seed of the traffic (default ${DEFAULT-VALUE})")
    long seed = 57;

    @Option(names = "--out", description = "The SVG written (default ${DEFAULT-VALUE})")
    Path out = Path.of("docs/img/algorithms.svg");

    @Spec
    CommandSpec spec;

    /** One request: its time (ns from the start), whether each algorithm admitted it. */
    record Request(long atNanos, boolean[] admitted) {
    }

    /** What one run found: the requests, and per algorithm the most admitted in any window of the period. */
    record Run(List<Request> requests, long[] mostInAWindow, long[][] windowCurve, long stepNanos) {
    }

    static final Algorithm[] ALGORITHMS = Algorithm.values();

    @Override
    public Integer call() throws Exception {
        PrintWriter o = spec.commandLine().getOut();
        String invalid = capacity <= 0 ? "--capacity must be > 0, was " + capacity
                : periodSeconds <= 0 ? "--period must be > 0, was " + periodSeconds
                : seconds <= 0 || seconds > 3_600 ? "--seconds must be in 1..3600, was " + seconds : null;
        if (invalid != null) {
            spec.commandLine().getErr().println("algorithms: " + invalid);
            return 2;
        }
        Run run = run(capacity, Duration.ofSeconds(periodSeconds), Duration.ofSeconds(seconds), seed);
        if (out.getParent() != null) Files.createDirectories(out.getParent());
        Files.writeString(out, svg(run, capacity, periodSeconds, seconds), StandardCharsets.UTF_8);
        o.printf(Locale.ROOT, "algorithms: capacity %d, period %d s, %d requests over %d s (seed %d)%n", capacity,
                periodSeconds, run.requests().size(), seconds, seed);
        for (int a = 0; a < ALGORITHMS.length; a++) {
            int admitted = 0;
            for (Request r : run.requests()) if (r.admitted()[a]) admitted++;
            o.printf(Locale.ROOT, "  %-15s admitted %5d  refused %5d  most in any %d s window %4d%n", ALGORITHMS[a].fileName(),
                    admitted, run.requests().size() - admitted, periodSeconds, run.mostInAWindow()[a]);
        }
        o.printf(Locale.ROOT, "wrote %s%n", out);
        return run.mostInAWindow()[Algorithm.SLIDING_WINDOW.ordinal()] > capacity ? 1 : 0;
    }

    /**
     * Bursty traffic: quiet stretches at a trickle, bursts of many requests within a few milliseconds, some
     * right before and right after the edge of a period, and a stretch of steady overload.
     */
    static List<Long> traffic(Duration period, Duration length, long capacity, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        long p = period.toNanos();
        long end = length.toNanos();
        List<Long> times = new ArrayList<>();
        long t = 0;
        while (t < end) {
            long phase = (t / p) % 6;
            if (phase == 0 || phase == 3) { // a trickle: a request every period/capacity × 2 or so
                t += random.nextLong(p / capacity, 3 * p / capacity + 1);
                times.add(t);
            } else if (phase == 1 || phase == 4) { // a burst at the period's end, another at the next one's start
                long edge = (t / p + 1) * p;
                for (int i = 0; i < 2 * capacity; i++) times.add(edge - p / 50 + random.nextLong(0, p / 100));
                for (int i = 0; i < 2 * capacity; i++) times.add(edge + random.nextLong(0, p / 100));
                t = edge + p / 2;
            } else { // steady overload: three times the rate
                t += random.nextLong(1, p / capacity / 3 * 2);
                times.add(t);
            }
        }
        times.removeIf(x -> x >= end);
        times.sort(Long::compare);
        return times;
    }

    /** Decides the traffic on three buckets of the local store, one per algorithm, on one manual clock. */
    static Run run(long capacity, Duration period, Duration length, long seed) {
        long[] now = {0};
        BucketStore store = BucketStore.local(16, () -> now[0]);
        BucketLimits[] limits = new BucketLimits[ALGORITHMS.length];
        for (int a = 0; a < ALGORITHMS.length; a++) {
            // a token bucket and GCRA refill their capacity in a period: the same long-run rate as the window
            limits[a] = BucketLimits.of(List.of(new Bandwidth("limit", capacity, capacity, period, ALGORITHMS[a])));
        }
        List<Request> requests = new ArrayList<>();
        for (long at : traffic(period, length, capacity, seed)) {
            now[0] = at;
            boolean[] admitted = new boolean[ALGORITHMS.length];
            for (int a = 0; a < ALGORITHMS.length; a++) {
                QuotaBucket b = store.bucket(BucketKind.TENANT, ALGORITHMS[a].fileName(), limits[a]);
                admitted[a] = b.take(1) == 0;
            }
            requests.add(new Request(at, admitted));
        }
        long p = period.toNanos();
        long[] most = new long[ALGORITHMS.length];
        long step = Math.max(1, length.toNanos() / 600);
        long[][] curve = new long[ALGORITHMS.length][(int) (length.toNanos() / step) + 1];
        for (int a = 0; a < ALGORITHMS.length; a++) {
            // every window [t - period, t] ending at an admission: the most any window saw
            List<Long> admittedAt = new ArrayList<>();
            for (Request r : requests) if (r.admitted()[a]) admittedAt.add(r.atNanos());
            int from = 0;
            for (int to = 0; to < admittedAt.size(); to++) {
                while (admittedAt.get(from) < admittedAt.get(to) - p) from++;
                most[a] = Math.max(most[a], to - from + 1);
            }
            int lo = 0;
            int hi = 0;
            for (int s = 0; s < curve[a].length; s++) {
                long t = s * step;
                while (hi < admittedAt.size() && admittedAt.get(hi) <= t) hi++;
                while (lo < hi && admittedAt.get(lo) < t - p) lo++;
                curve[a][s] = hi - lo;
            }
        }
        return new Run(requests, most, curve, step);
    }

    private static final String[] COLOURS = {"#1f77b4", "#2ca02c", "#d62728"};

    /** The picture's geometry: lanes of requests on top, the window counts below. */
    private record Frame(int width, int left, int right, int lane, int top, int chartTop, int chartHeight, double plot,
                         double nanos) {
        static Frame of(long seconds) {
            int width = 960;
            int left = 130;
            int right = 20;
            int lane = 70;
            int top = 50;
            int chartTop = top + ALGORITHMS.length * lane + 40;
            return new Frame(width, left, right, lane, top, chartTop, 220, width - left - right, seconds * 1e9);
        }

        int height() {
            return chartTop + chartHeight + 70;
        }

        double x(double atNanos) {
            return left + plot * atNanos / nanos;
        }
    }

    /** The picture, written by hand: a lane of requests per algorithm, then the window counts over time. */
    static String svg(Run run, long capacity, long periodSeconds, long seconds) {
        Frame f = Frame.of(seconds);
        StringBuilder s = new StringBuilder();
        s.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(f.width()).append("\" height=\"")
                .append(f.height()).append("\" viewBox=\"0 0 ").append(f.width()).append(' ').append(f.height())
                .append("\" font-family=\"sans-serif\" font-size=\"12\">\n");
        s.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"22\" font-size=\"15\" font-weight=\"bold\">The same bursty "
                + "traffic, three algorithms: capacity %d, period %d s (token bucket and GCRA refill %d per %d s)</text>%n",
                f.left() - 110, capacity, periodSeconds, capacity, periodSeconds));
        s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"40\" fill=\"#555\">each tick a request: tall and coloured "
                + "if admitted, short and grey if refused. Generated by: load-tests algorithms</text>%n", f.left() - 110));
        for (long e = 0; e <= seconds; e += periodSeconds) { // period edges
            double x = f.left() + f.plot() * e / seconds;
            s.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>%n",
                    x, f.top(), x, f.chartTop() + f.chartHeight()));
            s.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">%d s</text>%n",
                    x, f.chartTop() + f.chartHeight() + 16, e));
        }
        lanes(s, f, run);
        counts(s, f, run, capacity, periodSeconds);
        s.append("</svg>\n");
        return s.toString();
    }

    /** One lane per algorithm: every request a tick, tall and coloured if admitted, short and grey if not. */
    private static void lanes(StringBuilder s, Frame f, Run run) {
        int lane = f.lane();
        for (int a = 0; a < ALGORITHMS.length; a++) {
            int y = f.top() + a * lane;
            int at = a;
            long admitted = run.requests().stream().filter(r -> r.admitted()[at]).count();
            s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" fill=\"%s\" font-weight=\"bold\">%s</text>%n",
                    10, y + lane / 2 - 4, COLOURS[a], ALGORITHMS[a].fileName()));
            s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" fill=\"#555\">%d admitted</text>%n",
                    10, y + lane / 2 + 12, admitted));
            s.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#999\"/>%n",
                    f.left(), y + lane - 10, f.width() - f.right(), y + lane - 10));
            StringBuilder yes = new StringBuilder();
            StringBuilder no = new StringBuilder();
            for (Request r : run.requests()) {
                double x = f.x(r.atNanos());
                if (r.admitted()[a]) yes.append(String.format(Locale.ROOT, "M%.1f %dV%d", x, y + lane - 10, y + 8));
                else no.append(String.format(Locale.ROOT, "M%.1f %dV%d", x, y + lane - 10, y + lane - 26));
            }
            s.append("<path d=\"").append(no).append("\" stroke=\"#bbb\" stroke-width=\"1\"/>\n");
            s.append("<path d=\"").append(yes).append("\" stroke=\"").append(COLOURS[a]).append("\" stroke-width=\"1\"/>\n");
        }
    }

    /** The count admitted in the period before each moment, per algorithm, against the capacity. */
    private static void counts(StringBuilder s, Frame f, Run run, long capacity, long periodSeconds) {
        int chartTop = f.chartTop();
        int chartHeight = f.chartHeight();
        long most = capacity;
        for (long m : run.mostInAWindow()) most = Math.max(most, m);
        double yMax = Math.ceil(most * 1.15);
        s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">admitted in the %d s before each "
                + "moment</text>%n", f.left(), chartTop - 8, periodSeconds));
        s.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#999\"/>%n", f.left(),
                chartTop + chartHeight, f.width() - f.right(), chartTop + chartHeight));
        for (long v = 0; v <= yMax; v += Math.max(1, (long) yMax / 5)) {
            double y = chartTop + chartHeight - chartHeight * v / yMax;
            s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"#555\">%d</text>%n",
                    f.left() - 6, y + 4, v));
        }
        double capY = chartTop + chartHeight - chartHeight * capacity / yMax;
        s.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#000\" "
                + "stroke-dasharray=\"6 4\"/>%n", f.left(), capY, f.width() - f.right(), capY));
        s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">capacity %d</text>%n",
                f.width() - f.right(), capY - 4, capacity));
        for (int a = 0; a < ALGORITHMS.length; a++) {
            StringBuilder d = new StringBuilder();
            long[] curve = run.windowCurve()[a];
            for (int i = 0; i < curve.length; i++) {
                double x = f.x(i * (double) run.stepNanos());
                if (x > f.width() - f.right()) break;
                double y = chartTop + chartHeight - chartHeight * curve[i] / yMax + (a - 1) * 1.2; // apart where equal
                d.append(i == 0 ? "M" : "L").append(String.format(Locale.ROOT, "%.1f %.1f", x, y));
            }
            s.append("<path d=\"").append(d).append("\" fill=\"none\" stroke=\"").append(COLOURS[a])
                    .append("\" stroke-width=\"1.5\"").append(a == 1 ? " stroke-dasharray=\"4 3\"" : "").append("/>\n");
            s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" fill=\"%s\">%s: at most %d in any %d s</text>%n",
                    f.left() + a * 260, chartTop + chartHeight + 40, COLOURS[a], ALGORITHMS[a].fileName(),
                    run.mostInAWindow()[a], periodSeconds));
        }
    }
}

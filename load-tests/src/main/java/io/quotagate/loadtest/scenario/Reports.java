package io.quotagate.loadtest.scenario;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Writes a scenario's results: the table, summary.json, the per-second CSV and report.html. */
final class Reports {
    static final String UPLOT = "META-INF/resources/webjars/uplot/1.6.30/dist/";

    private Reports() {
    }

    /** The seeds' table, plus utilization and fairness, and the server-side check below it. */
    static String table(List<ModeResult> results) {
        StringBuilder out = new StringBuilder();
        out.append("| Mode | Units accepted per minute | 429s | Rejected by the limiter | Gave up after 3 retries | Utilization | Fairness (Jain) |\n");
        out.append("|---|---:|---:|---:|---:|---:|---:|\n");
        for (ModeResult r : results) {
            String label = r.mode() == Mode.FIXED
                    ? String.format(Locale.ROOT, "Fixed rate of %,.0f", r.scenario().fixedRate()) : r.mode().label;
            if (r.mode() == Mode.HEADERS && !r.publishedFieldsSeen()) label += " (none published: n/a)";
            out.append(String.format(Locale.ROOT, "| %s | %,.0f | %,d | %,d | %,d | %.1f%% | %.3f |%n", label, r.unitsPerMinute(),
                    r.throttled(), r.rejectedByLimiter(), r.gaveUp(), 100 * r.utilization(), r.fairness()));
        }
        out.append('\n');
        for (ModeResult r : results) {
            Measures.WindowCheck w = r.window();
            out.append(String.format(Locale.ROOT, "%s: %s window check %s: worst 60 s window (from %s) admitted %,d of at most %,.0f (quota + burst%s)",
                    r.mode().id, r.serverSide() ? "server-side" : "client-side", w.passed() ? "passed" : "FAILED",
                    ModeRun.mmss(w.worstStart() * 1_000_000_000L), w.worstAccepted(), w.worstAllowed(),
                    w.slackUnits() < 0.05 ? "" : String.format(Locale.ROOT, " + %.1f refilled while the server counted", w.slackUnits())));
            if (r.errors() > 0) out.append(String.format(Locale.ROOT, "; %,d errors", r.errors()));
            Pace.Verdict p = r.pace();
            out.append(String.format(Locale.ROOT, "; sent %,d, failed %,d (%.2f%%), lag p99 %.0f ms, response p99 %.0f ms",
                    p.sent(), p.failed(), 100 * p.failedShare(), p.lagP99Ms(), p.responseP99Ms()));
            if (p.saturated()) out.append(": SATURATED");
            if (r.neighbourAccepted() > 0 || r.neighbourThrottled() > 0) {
                out.append(String.format(Locale.ROOT, "; neighbour accepted %,d, 429s %,d", r.neighbourAccepted(), r.neighbourThrottled()));
            }
            out.append('\n');
            for (ModeResult.Convergence c : r.convergence()) {
                out.append(String.format(Locale.ROOT, "%s: %s at %s: %s, %s (target %,.0f/min ±%.0f%%, %d s average, held %d s)%n",
                        r.mode().id, c.event(), ModeRun.mmss(c.atSecond() * 1_000_000_000L),
                        c.reachSeconds() < 0 ? "never reached" : "reached within " + c.reachSeconds() + " s",
                        c.seconds() < 0 ? "never held" : "held from " + c.seconds() + " s",
                        c.targetPerMinute(), 100 * ModeResult.CONVERGENCE_TOLERANCE, ModeResult.CONVERGENCE_SMOOTHING,
                        ModeResult.CONVERGENCE_HOLD));
            }
        }
        return out.toString();
    }

    static Map<String, Object> summary(Scenario scenario, double speed, String target, List<ModeResult> results) {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("scenario", scenario.name());
        root.put("speed", speed);
        root.put("target", target);
        root.put("durationSeconds", scenario.seconds());
        root.put("quotaPerMinute", scenario.quota());
        root.put("burst", scenario.burst());
        // the generator's own health first: a saturated run does not tell the story of --speed 1
        root.put("saturated", results.stream().anyMatch(r -> r.pace().saturated()));
        root.put("lagP99Ms", round(results.stream().mapToDouble(r -> r.pace().lagP99Ms()).max().orElse(0), 1));
        root.put("lagMaxMs", round(results.stream().mapToDouble(r -> r.pace().lagMaxMs()).max().orElse(0), 1));
        List<Map<String, Object>> modes = new ArrayList<>();
        for (ModeResult r : results) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("mode", r.mode().id);
            m.put("unitsPerMinute", round(r.unitsPerMinute(), 1));
            m.put("throttled", r.throttled());
            m.put("rejectedByLimiter", r.rejectedByLimiter());
            m.put("gaveUp", r.gaveUp());
            m.put("utilization", round(r.utilization(), 4));
            m.put("fairness", round(r.fairness(), 4));
            m.put("acceptedUnits", r.accepted());
            m.put("errors", r.errors());
            m.put("neighbourAccepted", r.neighbourAccepted());
            m.put("neighbourThrottled", r.neighbourThrottled());
            if (r.mode() == Mode.HEADERS) m.put("publishedFieldsSeen", r.publishedFieldsSeen());
            Pace.Verdict p = r.pace();
            Map<String, Object> pace = new LinkedHashMap<>();
            pace.put("saturated", p.saturated());
            pace.put("reasons", p.reasons());
            pace.put("sent", p.sent());
            pace.put("failed", p.failed());
            pace.put("refusedByPool", p.refusedByPool());
            pace.put("lagP99Ms", round(p.lagP99Ms(), 1));
            pace.put("lagMaxMs", round(p.lagMaxMs(), 1));
            pace.put("responseP99Ms", round(p.responseP99Ms(), 1));
            m.put("pace", pace);
            Map<String, Object> w = new LinkedHashMap<>();
            w.put("countedBy", r.serverSide() ? "server" : "clients");
            w.put("passed", r.window().passed());
            w.put("worstStartSecond", r.window().worstStart());
            w.put("worstAccepted", r.window().worstAccepted());
            w.put("worstAllowed", round(r.window().worstAllowed(), 1));
            w.put("countingDelayUnits", round(r.window().slackUnits(), 1));
            m.put("window", w);
            List<Map<String, Object>> conv = new ArrayList<>();
            for (ModeResult.Convergence c : r.convergence()) {
                Map<String, Object> cm = new LinkedHashMap<>();
                cm.put("event", c.event());
                cm.put("atSecond", c.atSecond());
                cm.put("targetPerMinute", c.targetPerMinute());
                cm.put("reachSeconds", c.reachSeconds() < 0 ? null : c.reachSeconds());
                cm.put("holdSeconds", c.seconds() < 0 ? null : c.seconds());
                conv.add(cm);
            }
            m.put("convergence", conv);
            modes.add(m);
        }
        root.put("modes", modes);
        return root;
    }

    private static double round(double v, int digits) {
        double f = Math.pow(10, digits);
        return Math.round(v * f) / f;
    }

    static void writeAll(Path dir, Scenario scenario, double speed, String target, List<ModeResult> results) throws IOException {
        Files.createDirectories(dir);
        ObjectMapper json = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
        json.writeValue(dir.resolve("summary.json").toFile(), summary(scenario, speed, target, results));
        try (Writer csv = Files.newBufferedWriter(dir.resolve("per-second.csv"))) {
            writeCsv(csv, results);
        }
        Files.writeString(dir.resolve("report.html"), html(scenario, speed, results, json));
    }

    static void writeCsv(Writer out, List<ModeResult> results) throws IOException {
        out.write("mode,second,client,rate_units_per_minute,accepted_units,throttled,rejected_by_limiter,gave_up,errors\n");
        for (ModeResult r : results) {
            for (int s = 0; s < r.scenario().seconds(); s++) {
                for (Series series : seriesOf(r)) {
                    double rate = series.rate[s];
                    out.write(String.format(Locale.ROOT, "%s,%d,%s,%s,%d,%d,%d,%d,%d%n", r.mode().id, s, series.name,
                            Double.isNaN(rate) ? "" : String.format(Locale.ROOT, "%.1f", rate), series.accepted.get(s),
                            series.throttled.get(s), series.rejected.get(s), series.gaveUp.get(s), series.errors.get(s)));
                }
            }
        }
    }

    private static List<Series> seriesOf(ModeResult r) {
        List<Series> all = new ArrayList<>();
        for (ModeRun.Worker w : r.run().workers) all.add(w.series);
        if (r.scenario().neighbour().isPresent()) all.add(r.run().neighbour);
        all.add(r.admitted());
        return all;
    }

    static String html(Scenario scenario, double speed, List<ModeResult> results, ObjectMapper json) throws IOException {
        List<Map<String, Object>> charts = new ArrayList<>();
        for (ModeResult r : results) {
            int n = r.scenario().seconds();
            List<Integer> x = new ArrayList<>();
            for (int s = 0; s < n; s++) x.add(s);
            List<Series> all = seriesOf(r);
            Map<String, Object> chart = new LinkedHashMap<>();
            chart.put("mode", r.mode().label);
            chart.put("x", x);
            List<Map<String, Object>> rate = new ArrayList<>(), accepted = new ArrayList<>(), throttled = new ArrayList<>();
            for (Series series : all) {
                if (series != r.admitted() && series != r.run().neighbour && r.mode() != Mode.NONE) {
                    List<Double> v = new ArrayList<>();
                    for (int s = 0; s < n; s++) v.add(Double.isNaN(series.rate[s]) ? null : round(series.rate[s], 1));
                    rate.add(Map.of("label", series.name, "values", v));
                }
                accepted.add(Map.of("label", series.name, "values", smoothedPerMinute(series, n, 5)));
                if (series != r.admitted()) {
                    List<Long> t = new ArrayList<>();
                    for (int s = 0; s < n; s++) t.add(series.throttled.get(s));
                    throttled.add(Map.of("label", series.name, "values", t));
                }
            }
            chart.put("rate", rate);
            chart.put("accepted", accepted);
            chart.put("throttled", throttled);
            charts.add(chart);
        }
        String data = json.writeValueAsString(charts).replace("</", "<\\/");
        String table = table(results).replace("&", "&amp;").replace("<", "&lt;");
        return """
                <!doctype html>
                <html lang="en"><head><meta charset="utf-8">
                <title>quotagate scenario %s</title>
                <style>%s
                body{font-family:system-ui,sans-serif;margin:1.5em;color:#222} h2{margin-top:2em} pre{background:#f4f4f4;padding:1em;overflow:auto}
                .charts{display:flex;flex-wrap:wrap;gap:1em}
                </style>
                <script>%s</script>
                </head><body>
                <h1>Scenario <code>%s</code></h1>
                <p>Hidden quota %,.0f units/min (burst %,d), %d s of scenario time at speed %s. Rates are scenario units per minute;
                accepted units are a 5 s moving average, in units per minute; 429s are per scenario second.</p>
                <pre>%s</pre>
                <div id="modes"></div>
                <script>
                const charts = %s;
                const palette = ["#1f77b4","#ff7f0e","#2ca02c","#d62728","#9467bd","#8c564b","#e377c2","#7f7f7f","#bcbd22"];
                function plot(parent, title, x, lines, bars) {
                  if (lines.length === 0) return;
                  const div = document.createElement("div"); parent.appendChild(div);
                  const opts = {title, width: 620, height: 260, scales: {x: {time: false}},
                    axes: [{label: "scenario seconds"}, {}],
                    series: [{label: "s"}].concat(lines.map((l, i) => ({label: l.label, stroke: palette[i %% palette.length],
                      width: 1.5, paths: bars ? uPlot.paths.bars({size: [0.9, 8]}) : undefined, fill: bars ? palette[i %% palette.length] + "66" : undefined})))};
                  new uPlot(opts, [x].concat(lines.map(l => l.values)), div);
                }
                for (const c of charts) {
                  const section = document.createElement("section");
                  section.innerHTML = "<h2>" + c.mode + "</h2>";
                  const box = document.createElement("div"); box.className = "charts"; section.appendChild(box);
                  document.getElementById("modes").appendChild(section);
                  plot(box, "Limiter rate per instance (units/min)", c.x, c.rate, false);
                  plot(box, "Accepted (units/min, 5 s average)", c.x, c.accepted, false);
                  plot(box, "429s per second", c.x, c.throttled, true);
                }
                </script>
                </body></html>
                """.formatted(scenario.name(), resource("uPlot.min.css"), resource("uPlot.iife.min.js"), scenario.name(),
                scenario.quota(), scenario.burst(), scenario.seconds(), fmt(speed), table, data);
    }

    private static List<Double> smoothedPerMinute(Series series, int n, int window) {
        List<Double> out = new ArrayList<>();
        for (int s = 0; s < n; s++) {
            int from = Math.max(0, s - window + 1);
            long sum = Series.sum(series.accepted, from, s + 1);
            out.add(round(sum * 60.0 / (s + 1 - from), 1));
        }
        return out;
    }

    static String fmt(double v) {
        return v == Math.rint(v) ? String.valueOf((long) v) : String.valueOf(v);
    }

    private static String resource(String name) {
        try (InputStream in = Reports.class.getClassLoader().getResourceAsStream(UPLOT + name)) {
            if (in == null) throw new IllegalStateException("uPlot WebJar missing from the classpath: " + UPLOT + name);
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).replace("</script", "<\\/script");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

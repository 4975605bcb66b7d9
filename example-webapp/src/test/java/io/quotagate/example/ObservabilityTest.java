package io.quotagate.example;

import io.quotagate.filter.testing.Http;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/** /metrics (Prometheus text) and /dashboard (in a real headless Chromium), on the management port. */
class ObservabilityTest {
    private static ExampleApp.Running app;

    @BeforeAll
    static void start() throws Exception {
        app = ExampleApp.start("127.0.0.1", 0, PlansFile.load(ExampleApp.DEFAULT_PLANS));
        // acme (pro) gets through; globex (free, burst 20) is refused after 20. Both are assigned, so
        // both have their own tenant tag from their first request (an unknown id has to earn one by
        // its recent traffic: RequestStatisticsNamingTest)
        for (int i = 0; i < 5; i++) Http.get(uri("/items/1"), "acme");
        for (int i = 0; i < 30; i++) Http.get(uri("/items/1"), "globex");
        assertThat(completion().statusCode()).isEqualTo(200); // a settled reservation (cost meters)
    }

    private static HttpResponse<String> completion() throws Exception {
        var request = java.net.http.HttpRequest.newBuilder(uri("/v1/completions"))
                .header("X-Tenant-Id", "acme").header("Content-Type", "application/json")
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"prompt\": \"tell me about token buckets\", \"max_tokens\": 100}"))
                .build();
        return java.net.http.HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
    }

    @AfterAll
    static void stop() throws Exception {
        app.close();
    }

    private static URI uri(String path) {
        return URI.create(app.baseUri() + path);
    }

    /** On the management port, where /metrics and /dashboard live. */
    private static URI management(String path) {
        return URI.create(app.managementUri() + path);
    }

    // one sample line of the Prometheus text format: name{labels} value
    private static final Pattern SAMPLE = Pattern.compile(
            "[a-zA-Z_:][a-zA-Z0-9_:]*(\\{([a-zA-Z_][a-zA-Z0-9_]*=\"([^\"\\\\\\n]|\\\\.)*\",?)*\\})? -?[0-9.eE+-]+|.* (NaN|[+-]Inf)");

    @Test
    void metricsExposeRequestsByTenantOutcomeAndReasonInPrometheusText() throws Exception {
        HttpResponse<String> r = Http.get(management("/metrics"), null);
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("text/plain");
        String text = r.body();
        for (String line : text.split("\n")) {
            if (line.isBlank() || line.startsWith("# HELP ") || line.startsWith("# TYPE ")) continue;
            assertThat(line).as("exposition line").matches(SAMPLE);
        }
        assertThat(text).contains("# TYPE quotagate_requests_total counter");
        assertThat(text).containsPattern("quotagate_requests_total\\{(?=[^}]*outcome=\"rejected\")(?=[^}]*plan=\"free\")"
                + "(?=[^}]*reason=\"tenant_rate\")(?=[^}]*route=\"items\")(?=[^}]*tenant=\"globex\")[^}]*\\} 10\\.0");
        assertThat(text).containsPattern("quotagate_requests_total\\{(?=[^}]*outcome=\"allowed\")(?=[^}]*route=\"items\")"
                + "(?=[^}]*tenant=\"globex\")[^}]*\\} 20\\.0");
        assertThat(text).contains("quotagate_global_capacity_units 3000.0");
        assertThat(text).containsPattern("quotagate_inflight\\{group=\"reports\",tenant=\"other\"\\} 0\\.0");
        assertThat(text).contains("quotagate_queue_wait_seconds_bucket{group=\"reports\"");
        assertThat(text).containsPattern("quotagate_global_available_units [0-9.]+");
    }

    @Test
    void reservedAndActualCostsAreMeasuredPerRoute() throws Exception {
        assertThat(completion().statusCode()).isEqualTo(200);
        String text = Http.get(management("/metrics"), null).body();
        var reserved = Pattern.compile("quotagate_cost_reserved_units_sum\\{route=\"completions\"\\} ([0-9.]+)").matcher(text);
        var actual = Pattern.compile("quotagate_cost_actual_units_sum\\{route=\"completions\"\\} ([0-9.]+)").matcher(text);
        assertThat(reserved.find()).as(text).isTrue();
        assertThat(actual.find()).isTrue();
        assertThat(Double.parseDouble(reserved.group(1))).isGreaterThanOrEqualTo(100);
        assertThat(Double.parseDouble(actual.group(1))).isPositive().isLessThan(Double.parseDouble(reserved.group(1)));
    }

    @Test
    void promtoolAcceptsTheExpositionWhenInstalled(@TempDir Path dir) throws Exception {
        String promtool = promtool("the exposition check (its format is checked by the test above) is");
        Path file = dir.resolve("metrics.txt");
        Files.writeString(file, Http.get(management("/metrics"), null).body());
        Process p = new ProcessBuilder(promtool, "check", "metrics").redirectInput(file.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        // promtool lints naming too; only errors (not lint hints) fail the exposition
        assertThat(out).doesNotContainIgnoringCase("error");
    }

    @Test
    void theDashboardLoadsWithoutErrorsAndShowsTrafficInAHeadlessBrowser(@TempDir Path profile) throws Exception {
        String chromium = which("chromium");
        if (chromium == null) chromium = which("chromium-browser");
        if (chromium == null) {
            if ("true".equals(System.getenv("CI"))) fail("CI=true but no chromium on PATH: .ci/run installs Debian's chromium");
            Assumptions.abort("chromium is not installed: the dashboard browser test is skipped (CI installs it)");
        }
        app.sampleDashboard();
        Http.get(uri("/items/2"), "acme");
        app.sampleDashboard();

        Process p = new ProcessBuilder(List.of(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0",
                "--virtual-time-budget=5000", "--dump-dom", app.managementUri() + "/dashboard"))
                .redirectError(profile.resolve("stderr.txt").toFile())
                .start();
        String dom = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("chromium finished").isTrue();
        String stderr = Files.readString(profile.resolve("stderr.txt"));

        assertThat(dom).contains("quotagate — live").contains("class=\"uplot");
        assertThat(dom).containsPattern("data-points=\"[1-9][0-9]*\"");
        assertThat(dom).containsPattern("data-requests=\"[1-9][0-9]*\"");
        assertThat(dom).contains("acme", "globex", "reports");
        assertThat(dom).as("the page says which tenants have a line").contains("by recent traffic")
                .containsPattern("the top <span id=\"top\">50</span>");
        assertThat(dom).containsPattern("<pre id=\"errors\"></pre>");
        assertThat(stderr.lines().filter(l -> l.contains("CONSOLE") && (l.contains("Uncaught") || l.contains("rror"))))
                .as("console errors").isEmpty();
    }

    @Test
    void theGrafanaDashboardQueriesOnlyMetricsTheAppExposes() throws Exception {
        var json = new com.fasterxml.jackson.databind.ObjectMapper().readTree(Path.of("grafana/quotagate-dashboard.json").toFile());
        String exposition = Http.get(management("/metrics"), null).body();
        var names = new java.util.TreeSet<String>();
        for (var panel : json.get("panels")) {
            for (var target : panel.get("targets")) {
                var m = Pattern.compile("quotagate_[a-z_]+").matcher(target.get("expr").asText());
                while (m.find()) names.add(m.group().replaceAll("_(bucket|sum|count)$", ""));
            }
        }
        assertThat(names).isNotEmpty();
        for (String name : names) {
            if (name.startsWith("quotagate_store_")) continue; // registered only with a Redis store (RedisStoreTest covers them)
            assertThat(exposition).as("metric used by the dashboard").contains(name);
        }
        assertThat(names).contains("quotagate_store_fallback_total");
    }

    @Test
    void promtoolAcceptsTheScrapeConfigWhenInstalled() throws Exception {
        String promtool = promtool("the scrape config check is");
        Process p = new ProcessBuilder(promtool, "check", "config", "grafana/prometheus.yml").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
    }

    /** promtool, or the test skipped on a machine without it; under CI (which installs it) a failure, not a skip. */
    private static String promtool(String what) {
        String promtool = which("promtool");
        if (promtool == null) {
            if ("true".equals(System.getenv("CI"))) fail("CI=true but no promtool on PATH: .ci/run installs Debian's prometheus");
            Assumptions.abort("promtool is not installed: " + what + " skipped (CI installs it)");
        }
        return promtool;
    }

    private static String which(String name) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            File f = new File(dir, name);
            if (f.canExecute()) return f.getPath();
        }
        return null;
    }
}

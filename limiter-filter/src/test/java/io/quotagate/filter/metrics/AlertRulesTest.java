package io.quotagate.filter.metrics;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * The shipped Prometheus alert rules ({@code prometheus/quotagate-alerts.yml}) pass their unit tests
 * ({@code promtool test rules}): each rule fires on the series it is meant for, and not before. CI
 * installs promtool ({@code .ci/run}); without it the test is skipped locally and fails under CI.
 */
class AlertRulesTest {
    private static final Path DIR = Path.of("..", "prometheus");

    @Test
    void everyShippedAlertRulePassesPromtoolTestRules() throws Exception {
        String promtool = which("promtool");
        if (promtool == null) {
            if ("true".equals(System.getenv("CI"))) fail("CI=true but no promtool on PATH: .ci/run installs Debian's prometheus");
            Assumptions.abort("promtool is not installed: the alert rule tests are skipped (CI installs it)");
        }
        assertThat(DIR.resolve("quotagate-alerts.yml")).exists();
        String check = run(promtool, "check", "rules", "quotagate-alerts.yml");
        assertThat(check).contains("SUCCESS: 8 rules found");
        String test = run(promtool, "test", "rules", "quotagate-alerts.test.yml");
        assertThat(test).contains("SUCCESS");
        // every alert of the rules file has a test case
        String rules = Files.readString(DIR.resolve("quotagate-alerts.yml"));
        String tests = Files.readString(DIR.resolve("quotagate-alerts.test.yml"));
        rules.lines().filter(l -> l.trim().startsWith("- alert:")).map(l -> l.trim().substring("- alert:".length()).trim())
                .forEach(alert -> assertThat(tests).as("a test of " + alert).contains("alertname: " + alert));
    }

    private static String run(String... command) throws Exception {
        Process p = new ProcessBuilder(command).directory(DIR.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        return out;
    }

    private static String which(String name) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            File f = new File(dir, name);
            if (f.canExecute()) return f.getPath();
        }
        return null;
    }
}

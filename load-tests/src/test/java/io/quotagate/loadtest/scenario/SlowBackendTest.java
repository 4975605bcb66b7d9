package io.quotagate.loadtest.scenario;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code scenario slow-backend}, compressed (phases of 2 s), over real HTTP to an in-process Jetty: the
 * table has every group and phase, and the adaptive limit's summary is printed. Figures are
 * benchmarks (BENCHMARKS.md), not asserted.
 */
class SlowBackendTest {
    private String run(int expectedExit, String... args) {
        ScenarioCommand command = new ScenarioCommand();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        command.stdout = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        int exit = new CommandLine(command).execute(args);
        String out = bytes.toString(StandardCharsets.UTF_8);
        assertThat(exit).as(out).isEqualTo(expectedExit);
        return out;
    }

    @Test
    void printsEachGroupsPhasesAndTheAdaptiveLimitOverTime() {
        String out = run(0, "slow-backend", "--speed", "30", "--quiet", "--rate", "20", "--service-ms", "20");
        assertThat(out).contains("| Group | Phase | Admitted/s | p50 ms | p99 ms | 429s | 503s |")
                .contains("| adaptive | normal |").contains("| adaptive | slow (5x) |").contains("| adaptive | recovered |")
                .contains("| fixed | normal |").contains("| fixed | slow (5x) |").contains("| fixed | recovered |")
                .contains("| Adaptive limit | min | max | at the end |")
                .containsPattern("limit before the slowdown \\d+; it began to fall ");
    }

    @Test
    void refusesAnUnknownAlgorithm() {
        run(2, "slow-backend", "--algorithm", "aimd");
    }
}

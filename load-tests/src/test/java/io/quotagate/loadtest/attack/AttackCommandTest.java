package io.quotagate.loadtest.attack;

import io.quotagate.loadtest.LoadTests;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Correctness of the attack command at a tiny duration; the latency ratio is for a quiet machine, not asserted here. */
class AttackCommandTest {

    @Test
    void theVictimIsServedThroughASlowBodyAttackThatIsRefused() {
        StringWriter output = new StringWriter();
        CommandLine cli = new CommandLine(new LoadTests());
        cli.setOut(new PrintWriter(output, true));

        int exit = cli.execute("attack", "--duration", "2s", "--connections", "20", "--victim-rate", "5",
                "--shapes", "slow-body", "--max-ratio", "1000", "--min-samples", "3");

        assertThat(exit).as(output.toString()).isZero();
        String row = Arrays.stream(output.toString().split("\n")).filter(l -> l.startsWith("| slow-body |"))
                .findFirst().orElseThrow();
        String[] cells = row.split("\\|");
        // 5 a second for 2 s: how many of the 10 are sent in time depends on how loaded the machine is
        assertThat(Integer.parseInt(cells[2].trim())).as("victim requests").isGreaterThanOrEqualTo(3);
        assertThat(cells[3].trim()).as("every victim request answered 200").isEqualTo(cells[2].trim());
        // the attacker's two slots hold bodies; every other connection is refused before its body is read
        assertThat(cells[8]).contains("429=");
    }

    @Test
    void aFailedRatioIsNamedWithItsFigureAndThreshold() {
        StringWriter out = new StringWriter();
        int exit = AttackCommand.verdict(List.of(phase("baseline", 240, 240, 2.5), phase("slow-body", 240, 240, 32.4)),
                2.0, 100, new PrintWriter(out, true));
        assertThat(exit).isEqualTo(1);
        assertThat(out.toString()).contains(
                "FAILED slow-body: p99 / baseline 12.96 (32.40 ms / 2.50 ms) > --max-ratio 2.00, over 240 victim requests");
    }

    @Test
    void tooFewSamplesIsSaidAsSuchWithItsOwnExitStatus() {
        StringWriter out = new StringWriter();
        int exit = AttackCommand.verdict(List.of(phase("baseline", 40, 40, 2.5), phase("slow-body", 36, 36, 32.4)),
                2.0, 100, new PrintWriter(out, true));
        assertThat(exit).isEqualTo(AttackCommand.TOO_FEW_SAMPLES).isEqualTo(3);
        assertThat(out.toString()).contains("TOO FEW SAMPLES slow-body: p99 / baseline 12.96",
                "over 36 victim requests, fewer than --min-samples 100: not judged").doesNotContain("FAILED");
    }

    @Test
    void aFailedVictimRequestFailsWhateverTheSamples() {
        StringWriter out = new StringWriter();
        int exit = AttackCommand.verdict(List.of(phase("baseline", 40, 40, 2.5), phase("big-body", 36, 35, 2.6)),
                2.0, 100, new PrintWriter(out, true));
        assertThat(exit).isEqualTo(1);
        assertThat(out.toString()).contains("FAILED big-body: 1 of 36 victim requests were not answered 200");
    }

    @Test
    void passingChecksExitZero() {
        StringWriter out = new StringWriter();
        assertThat(AttackCommand.verdict(List.of(phase("baseline", 240, 240, 2.5), phase("slow-body", 240, 240, 3.0)),
                2.0, 100, new PrintWriter(out, true))).isZero();
        assertThat(out.toString()).contains("passed slow-body: p99 / baseline 1.20 (3.00 ms / 2.50 ms) <= --max-ratio 2.00");
    }

    private static AttackCommand.Phase phase(String name, int sent, int ok, double p99) {
        return new AttackCommand.Phase(name, sent, ok, p99 / 2, p99, p99 * 2, Map.of());
    }

    @Test
    void anUnknownShapeIsABadArgument() {
        CommandLine cli = new CommandLine(new LoadTests());
        cli.setErr(new PrintWriter(new StringWriter(), true));
        assertThat(cli.execute("attack", "--shapes", "fast-body")).isEqualTo(2);
    }

    @Test
    void anOutOfRangeOptionIsNamedBeforeTheAppStarts() {
        for (String[] args : new String[][]{
                {"--duration", "0", "--duration must be > 0, was PT0S"},
                {"--connections", "0", "--connections must be > 0, was 0"},
                {"--victim-rate", "-1", "--victim-rate must be > 0, was -1"},
                {"--max-ratio", "0", "--max-ratio must be > 0, was 0.0"},
                {"--min-samples", "0", "--min-samples must be > 0, was 0"}}) {
            StringWriter err = new StringWriter();
            CommandLine cli = new CommandLine(new LoadTests());
            cli.setOut(new PrintWriter(new StringWriter(), true));
            cli.setErr(new PrintWriter(err, true));
            assertThat(cli.execute("attack", args[0], args[1])).as(args[0]).isEqualTo(2);
            assertThat(err.toString()).isEqualTo("attack: " + args[2] + System.lineSeparator());
        }
    }
}

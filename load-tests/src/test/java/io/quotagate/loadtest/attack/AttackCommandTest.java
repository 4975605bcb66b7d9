package io.quotagate.loadtest.attack;

import io.quotagate.loadtest.LoadTests;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;

/** Correctness of the attack command at a tiny duration; the latency ratio is for a quiet machine, not asserted here. */
class AttackCommandTest {

    @Test
    void theVictimIsServedThroughASlowBodyAttackThatIsRefused() {
        StringWriter output = new StringWriter();
        CommandLine cli = new CommandLine(new LoadTests());
        cli.setOut(new PrintWriter(output, true));

        int exit = cli.execute("attack", "--duration", "2s", "--connections", "20", "--victim-rate", "5",
                "--shapes", "slow-body", "--max-ratio", "1000");

        assertThat(exit).as(output.toString()).isZero();
        String row = Arrays.stream(output.toString().split("\n")).filter(l -> l.startsWith("| slow-body |"))
                .findFirst().orElseThrow();
        String[] cells = row.split("\\|");
        assertThat(Integer.parseInt(cells[2].trim())).as("victim requests").isGreaterThanOrEqualTo(8);
        assertThat(cells[3].trim()).as("every victim request answered 200").isEqualTo(cells[2].trim());
        // the attacker's two slots hold bodies; every other connection is refused before its body is read
        assertThat(cells[8]).contains("429=");
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
                {"--max-ratio", "0", "--max-ratio must be > 0, was 0.0"}}) {
            StringWriter err = new StringWriter();
            CommandLine cli = new CommandLine(new LoadTests());
            cli.setOut(new PrintWriter(new StringWriter(), true));
            cli.setErr(new PrintWriter(err, true));
            assertThat(cli.execute("attack", args[0], args[1])).as(args[0]).isEqualTo(2);
            assertThat(err.toString()).isEqualTo("attack: " + args[2] + System.lineSeparator());
        }
    }
}

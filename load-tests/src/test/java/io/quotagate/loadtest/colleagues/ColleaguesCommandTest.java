package io.quotagate.loadtest.colleagues;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quotagate.loadtest.LoadTests;
import io.quotagate.loadtest.colleagues.ColleaguesCommand.Phase;
import io.quotagate.loadtest.colleagues.ColleaguesCommand.Sizes;
import io.quotagate.loadtest.colleagues.ColleaguesCommand.UserFigures;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The colleagues command over real HTTP at a short duration: the colleague's admitted share before and
 * after the plan's per-user limit (its latencies are for a quiet machine, not asserted here), and the
 * verdict's lines and exit statuses on made-up figures.
 */
class ColleaguesCommandTest {
    private static final Sizes SIZES = new Sizes(100, 200, 25, 50);

    @Test
    void aPerUserLimitLeavesTheColleagueItsRequestsWhereTheScriptTookThemAllBefore(@TempDir Path dir) throws Exception {
        StringWriter output = new StringWriter();
        CommandLine cli = new CommandLine(new LoadTests());
        cli.setOut(new PrintWriter(output, true));
        Path json = dir.resolve("colleagues.json");

        int exit = cli.execute("colleagues", "--duration", "3s", "--warmup", "1s", "--script-connections", "2",
                "--json", json.toString());

        assertThat(exit).as("0, or 3 on a machine too busy to judge\n" + output).isIn(0, ColleaguesCommand.SATURATED);
        assertThat(output.toString()).contains("| before | initech (team) |", "| after | hooli (team-per-user) |");
        JsonNode phases = new ObjectMapper().readTree(json.toFile()).get("phases");
        JsonNode before = phases.get(0).get("colleague");
        JsonNode after = phases.get(1).get("colleague");
        assertThat(before.get("sent").asInt()).as("colleague's requests before").isGreaterThanOrEqualTo(40);
        assertThat(after.get("sent").asInt()).as("colleague's requests after").isGreaterThanOrEqualTo(40);
        assertThat(after.get("share").asDouble()).as("colleague's admitted share with per-user\n" + output)
                .isGreaterThanOrEqualTo(0.95);
        if (phases.get(0).get("saturated").asBoolean()) {
            // a stalled machine lets the bucket refill while nobody sends: the colleague's late requests take it
            assertThat(before.get("share").asDouble()).as("colleague's admitted share without per-user, SATURATED\n"
                    + output).isLessThan(after.get("share").asDouble());
        } else {
            assertThat(before.get("share").asDouble()).as("colleague's admitted share without per-user\n" + output)
                    .isLessThanOrEqualTo(0.5);
        }
        assertThat(before.get("failed").asInt() + after.get("failed").asInt()).isZero();
        assertThat(phases.get(1).get("script").get("admitted").asLong())
                .as("the script's admitted requests after: its seat's burst (50) and 25 a second for 3 s, at most")
                .isLessThanOrEqualTo(50 + 25 * 4);
    }

    @Test
    void theGuaranteeIsWhatTheScriptAndTheColleaguesOwnSeatLeave() {
        assertThat(ColleaguesCommand.guaranteedShare(SIZES, 20)).isEqualTo(1.0);
        assertThat(ColleaguesCommand.guaranteedShare(SIZES, 50)).as("the colleague's own seat: 25 of 50").isEqualTo(0.5);
        assertThat(ColleaguesCommand.guaranteedShare(new Sizes(30, 60, 25, 50), 20)).as("5 of 20 left")
                .isEqualTo(0.25);
    }

    @Test
    void passingChecksExitZeroAndNameTheirFigures() {
        StringWriter out = new StringWriter();
        int exit = ColleaguesCommand.verdict(phase("before", 300, 9, 0, 20_000), phase("after", 300, 300, 0, 20_000),
                SIZES, 1.0, 20, new PrintWriter(out, true));
        assertThat(exit).isZero();
        assertThat(out.toString()).contains(
                "passed after: colleague's share 1.000 (300 of 300) >= 0.950 (95 % of the 1.000 the plans guarantee",
                "passed before: colleague's share 0.030 (9 of 300) <= 0.500 (half of after's 1.000)");
    }

    @Test
    void aColleagueStillStarvedAfterIsAFailureNamedWithItsFigureAndThreshold() {
        StringWriter out = new StringWriter();
        int exit = ColleaguesCommand.verdict(phase("before", 300, 9, 0, 20_000), phase("after", 300, 12, 0, 20_000),
                SIZES, 1.0, 20, new PrintWriter(out, true));
        assertThat(exit).isEqualTo(1);
        assertThat(out.toString()).contains("FAILED after: colleague's share 0.040 (12 of 300) < 0.950",
                "FAILED before: colleague's share 0.030 (9 of 300) > 0.020 (half of after's 0.040)");
    }

    @Test
    void aSaturatedGeneratorIsSaidAsSuchAndItsShareChecksAreNotJudged() {
        StringWriter out = new StringWriter();
        // the script managed 400 a second: it cannot keep a bucket of 100 a second empty
        int exit = ColleaguesCommand.verdict(phase("before", 300, 240, 0, 400), phase("after", 300, 300, 0, 400),
                SIZES, 1.0, 20, new PrintWriter(out, true));
        assertThat(exit).isEqualTo(ColleaguesCommand.SATURATED).isEqualTo(3);
        assertThat(out.toString()).contains("FAILED before: colleague's share 0.800",
                "SATURATED before: the script sent 400/s, less than 10 × the tenant's rate (1000/s)",
                "the failed share checks above are not judged: a phase was SATURATED");
    }

    @Test
    void aColleagueThatCouldNotSendItsRateIsSaturated() {
        StringWriter out = new StringWriter();
        int exit = ColleaguesCommand.verdict(phase("before", 300, 9, 0, 20_000), phase("after", 200, 200, 0, 20_000),
                SIZES, 1.0, 20, new PrintWriter(out, true));
        assertThat(exit).isEqualTo(ColleaguesCommand.SATURATED);
        assertThat(out.toString()).contains("SATURATED after: the colleague sent 200 of the 300 requests of its rate");
    }

    @Test
    void aRequestAnsweredNeither200Nor429FailsWhateverElse() {
        StringWriter out = new StringWriter();
        int exit = ColleaguesCommand.verdict(phase("before", 300, 9, 1, 400), phase("after", 300, 300, 0, 20_000),
                SIZES, 1.0, 20, new PrintWriter(out, true));
        assertThat(exit).isEqualTo(1);
        assertThat(out.toString()).contains("FAILED before: 1 request was answered neither 200 nor 429 (colleague 1, "
                + "script 0; threshold: 0)");
    }

    @Test
    void anOutOfRangeOptionIsNamedBeforeTheAppStarts() {
        for (String[] args : new String[][]{
                {"--duration", "0", "--duration must be > 0, was PT0S"},
                {"--colleague-rate", "0", "--colleague-rate must be > 0, was 0"},
                {"--script-connections", "-1", "--script-connections must be > 0, was -1"},
                {"--json", "/no/such/dir/c.json", "--json /no/such/dir/c.json: no such directory"}}) {
            StringWriter err = new StringWriter();
            CommandLine cli = new CommandLine(new LoadTests());
            cli.setOut(new PrintWriter(new StringWriter(), true));
            cli.setErr(new PrintWriter(err, true));
            assertThat(cli.execute("colleagues", args[0], args[1])).as(args[0]).isEqualTo(2);
            assertThat(err.toString()).isEqualTo("colleagues: " + args[2] + System.lineSeparator());
        }
    }

    /** 15 s of a colleague at 20 a second (300 scheduled), answered quickly, and a script at {@code scriptRate}. */
    private static Phase phase(String name, int sent, int admitted, int failed, int scriptRate) {
        return new Phase(name, "t", "p", 15, 300, new UserFigures(sent, admitted, sent - admitted - failed, failed),
                0.2, 1.0, 0.2, 1.0, 0.5, new UserFigures(15L * scriptRate, 1500, 15L * scriptRate - 1500, 0));
    }
}

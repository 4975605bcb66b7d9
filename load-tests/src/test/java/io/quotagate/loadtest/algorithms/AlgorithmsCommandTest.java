package io.quotagate.loadtest.algorithms;

import io.quotagate.loadtest.LoadTests;
import io.quotagate.plans.Algorithm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

class AlgorithmsCommandTest {

    @Test
    void drawsTheThreeAlgorithmsAndTheWindowNeverSeesMoreThanItsCapacity(@TempDir Path dir) throws Exception {
        Path svg = dir.resolve("img/algorithms.svg");
        StringWriter out = new StringWriter();
        CommandLine cli = new CommandLine(new LoadTests());
        cli.setOut(new PrintWriter(out));
        int status = cli.execute("algorithms", "--out", svg.toString());
        assertThat(status).as(out.toString()).isZero();
        String picture = Files.readString(svg);
        assertThat(picture).startsWith("<svg").contains("token-bucket").contains("gcra").contains("sliding-window")
                .contains("capacity 10").endsWith("</svg>\n");
        assertThat(out.toString()).contains("wrote " + svg);
    }

    @Test
    void gcraAdmitsWhatTheTokenBucketAdmitsAndOnlyTheWindowHoldsItsCapacityInEveryWindow() {
        for (long seed = 1; seed <= 5; seed++) {
            AlgorithmsCommand.Run run = AlgorithmsCommand.run(10, Duration.ofSeconds(10), Duration.ofSeconds(60), seed);
            int tb = Algorithm.TOKEN_BUCKET.ordinal();
            int gcra = Algorithm.GCRA.ordinal();
            int window = Algorithm.SLIDING_WINDOW.ordinal();
            for (AlgorithmsCommand.Request r : run.requests()) {
                assertThat(r.admitted()[gcra]).as("at %d ns", r.atNanos()).isEqualTo(r.admitted()[tb]);
            }
            assertThat(run.mostInAWindow()[window]).isLessThanOrEqualTo(10);
            assertThat(run.mostInAWindow()[tb]).as("a burst after a full refill, and the refill during it").isGreaterThan(10);
        }
    }

    @Test
    void refusesAnInvalidOption(@TempDir Path dir) {
        StringWriter err = new StringWriter();
        CommandLine cli = new CommandLine(new LoadTests());
        cli.setErr(new PrintWriter(err));
        assertThat(cli.execute("algorithms", "--capacity", "0", "--out", dir.resolve("a.svg").toString())).isEqualTo(2);
        assertThat(err.toString()).contains("--capacity must be > 0, was 0");
    }
}

package io.quotagate.loadtest.bench;

import io.quotagate.loadtest.LoadTests;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class FilterRoundsCommandTest {

    @Test
    void measuresEveryFilterInRoundsAndHoldsQuotaFilterAgainstEachPeer() {
        StringWriter output = new StringWriter();
        StringWriter errors = new StringWriter();
        CommandLine cli = new CommandLine(new LoadTests());
        cli.setOut(new PrintWriter(output, true));
        cli.setErr(new PrintWriter(errors, true));

        int exit = cli.execute("filter-rounds", "--rounds", "2", "--round-time", "20ms", "--warmup", "40ms");

        String text = output.toString();
        assertThat(exit).as("%s\n%s", text, errors).isZero();
        for (Mode m : FilterRoundsCommand.MODES) {
            java.util.regex.Matcher row = java.util.regex.Pattern
                    .compile("(?m)^" + m.label() + " +([0-9.]+) +([0-9.]+)-([0-9.]+)").matcher(text);
            assertThat(row.find()).as("%s in\n%s", m.label(), text).isTrue();
            double median = Double.parseDouble(row.group(1));
            // a request through any of these filters takes longer than nothing and less than a millisecond
            assertThat(median).as(m.label()).isGreaterThan(1).isLessThan(1_000_000);
        }
        assertThat(text).containsPattern("(?m)^quotagate-1-tenant +jetty-dosfilter +[0-9.]+ +n/a +[0-2]/2  too few rounds")
                .containsPattern("(?m)^quotagate-10000-tenants +bucket4j-map-10000-tenants ")
                .containsPattern("(?m)^quotagate-10000-tenants +resilience4j-10000-tenants ");
    }

    @Test
    void theComparisonIsTheMedianOfPerRoundRatiosWithItsInterval() {
        // the machine slows down round by round; QuotaFilter takes 0.8 of the peer's time in every round but one
        Map<Mode, double[]> nanos = new LinkedHashMap<>();
        nanos.put(Mode.QUOTAGATE_1_TENANT, new double[]{80, 160, 240, 320, 400, 600});
        nanos.put(Mode.JETTY_DOSFILTER, new double[]{100, 200, 300, 400, 500, 500});
        List<FilterRoundsCommand.Comparison> comparisons = FilterRoundsCommand.compare(nanos);

        assertThat(comparisons).singleElement().satisfies(c -> {
            assertThat(c.ratio()).isCloseTo(0.8, org.assertj.core.data.Offset.offset(1e-9));
            // 6 rounds: the interval is their range, 0.8 to 1.2, so no verdict either way
            assertThat(c.low()).isCloseTo(0.8, org.assertj.core.data.Offset.offset(1e-9));
            assertThat(c.high()).isCloseTo(1.2, org.assertj.core.data.Offset.offset(1e-9));
            assertThat(c.atMost1()).isEqualTo(5);
            assertThat(c.verdict()).isEqualTo("cannot tell apart");
        });
        nanos.put(Mode.QUOTAGATE_1_TENANT, new double[]{80, 160, 240, 320, 400, 450});
        assertThat(FilterRoundsCommand.compare(nanos).get(0).verdict()).isEqualTo("QuotaFilter costs less");
    }

    @Test
    void anInvalidOptionIsRefusedWithItsName() {
        StringWriter errors = new StringWriter();
        CommandLine cli = new CommandLine(new LoadTests());
        cli.setErr(new PrintWriter(errors, true));

        assertThat(cli.execute("filter-rounds", "--rounds", "0")).isEqualTo(2);
        assertThat(cli.execute("filter-rounds", "--modes", "quotagate-1-tenant,bare")).isEqualTo(2);
        assertThat(errors.toString()).contains("filter-rounds: --rounds must be > 0, was 0")
                .contains("filter-rounds: unknown mode 'bare'; modes: quotagate-1-tenant, jetty-dosfilter")
                .doesNotContain("Exception");
    }

    @Test
    void onlyTheChosenFiltersRunAndOnlyTheirComparisonsArePrinted() {
        StringWriter output = new StringWriter();
        CommandLine cli = new CommandLine(new LoadTests());
        cli.setOut(new PrintWriter(output, true));

        int exit = cli.execute("filter-rounds", "--modes", "quotagate-1-tenant,jetty-dosfilter", "--rounds", "6",
                "--round-time", "10ms", "--warmup", "0");

        String text = output.toString();
        assertThat(exit).as(text).isZero();
        assertThat(text).contains("2 filter(s) x 6 round(s)").doesNotContain("resilience4j").doesNotContain("bucket4j")
                // six rounds: the interval of the median is their range, and a verdict is given
                .containsPattern("(?m)^quotagate-1-tenant +jetty-dosfilter +[0-9.]+ +[0-9.]+-[0-9.]+ +[0-6]/6  "
                        + "(QuotaFilter costs less|QuotaFilter costs more|cannot tell apart)$");
    }

    @Test
    void eachAlgorithmIsMeasuredInTheSameRoundsAgainstThePeerAndTheTokenBucketAtTheTenantsGiven() {
        StringWriter output = new StringWriter();
        StringWriter errors = new StringWriter();
        CommandLine cli = new CommandLine(new LoadTests());
        cli.setOut(new PrintWriter(output, true));
        cli.setErr(new PrintWriter(errors, true));

        int exit = cli.execute("filter-rounds", "--modes", "quotagate-10000-tenants,bucket4j-map-10000-tenants",
                "--algorithms", "token-bucket,gcra,sliding-window", "--tenants", "2000", "--rounds", "2",
                "--round-time", "10ms", "--warmup", "0");

        String text = output.toString();
        assertThat(exit).as("%s\n%s", text, errors).isZero();
        assertThat(text).contains("4 filter(s) x 2 round(s)").contains("2,000 tenants each");
        for (String label : List.of("quotagate-10000-tenants", "quotagate-10000-tenants/gcra",
                "quotagate-10000-tenants/sliding-window", "bucket4j-map-10000-tenants")) {
            assertThat(text).containsPattern("(?m)^" + java.util.regex.Pattern.quote(label) + " +[0-9.]+ +[0-9.]+-[0-9.]+");
        }
        assertThat(text).containsPattern("(?m)^quotagate-10000-tenants/gcra +bucket4j-map-10000-tenants +[0-9.]+ ")
                .containsPattern("(?m)^quotagate-10000-tenants/sliding-window +bucket4j-map-10000-tenants +[0-9.]+ ")
                .containsPattern("(?m)^quotagate-10000-tenants/gcra +quotagate-10000-tenants +[0-9.]+ ")
                .containsPattern("(?m)^quotagate-10000-tenants/sliding-window +quotagate-10000-tenants +[0-9.]+ ");

        StringWriter err = new StringWriter();
        cli.setErr(new PrintWriter(err, true));
        assertThat(cli.execute("filter-rounds", "--algorithms", "leaky-bucket")).isEqualTo(2);
        assertThat(cli.execute("filter-rounds", "--tenants", "0")).isEqualTo(2);
        assertThat(err.toString()).contains("filter-rounds: unknown algorithm 'leaky-bucket'; algorithms: token-bucket, gcra, sliding-window")
                .contains("filter-rounds: --tenants must be in 1..10000000, was 0").doesNotContain("Exception");
    }
}

package io.quotagate.loadtest.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quotagate.loadtest.LoadTests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.BufferedReader;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Correctness of the bench command at a tiny duration; how fast anything is, is not asserted here. */
class BenchCommandTest {

    @Test
    void measuresEveryModeInterleavedAndWritesTheirMediansAsJsonWithEveryRequestAnswered200(@TempDir Path dir)
            throws Exception {
        Path json = dir.resolve("results").resolve("bench.json"); // a directory the command creates
        StringWriter output = new StringWriter();
        CommandLine cli = new CommandLine(new LoadTests());
        cli.setOut(new PrintWriter(output, true));

        int exit = cli.execute("bench", "--duration", "1s", "--runs", "2", "--warmup", "0s",
                "--connections", "2", "--json", json.toString());

        assertThat(exit).as("exit status (1 = some request not answered 200)\n%s", output).isZero();
        assertThat(output.toString()).doesNotContain(BenchReport.FLAG).doesNotContain("ERRORS");
        // interleaved: every mode's run 1 before any run 2; serpentine: round 2 runs them the other way
        String text = output.toString();
        assertThat(text.indexOf("run 1/2 resilience4j-10000-tenants")).isPositive()
                .isLessThan(text.indexOf("run 2/2 resilience4j-10000-tenants"));
        List<String> round2 = text.lines().filter(l -> l.startsWith("run 2/2 "))
                .map(l -> l.substring("run 2/2 ".length()).split(" +")[0]).toList();
        assertThat(round2).containsExactly("resilience4j-10000-tenants", "bucket4j-map-10000-tenants",
                "counter-map-10000-tenants", "jetty-dosfilter", "quotagate-10000-tenants", "quotagate-1-tenant",
                "bare-10000-tenants", "bare");

        JsonNode root = new ObjectMapper().readTree(json.toFile());
        assertThat(fieldNames(root)).containsExactly("modes", "comparisons");
        JsonNode modes = root.get("modes");
        assertThat(modes.size()).isEqualTo(8);
        List<String> labels = new ArrayList<>();
        for (JsonNode m : modes) {
            labels.add(m.get("mode").asText());
            assertThat(fieldNames(m)).containsExactly("mode", "rps", "p50Ms", "p99Ms", "cpuMicrosPerRequest",
                    "ratioToBare", "cpuRatioToBare", "baseline");
            // every mode is compared with the bare server fed the same traffic
            assertThat(m.get("baseline").asText()).isEqualTo(m.get("mode").asText().endsWith("10000-tenants")
                    ? "bare-10000-tenants" : "bare");
            for (String figure : List.of("rps", "p50Ms", "p99Ms", "cpuMicrosPerRequest", "ratioToBare", "cpuRatioToBare")) {
                assertThat(m.get(figure).isNumber()).as("%s of %s is a number", figure, m).isTrue();
                assertThat(m.get(figure).asDouble()).as("%s of %s", figure, m).isPositive();
            }
            assertThat(m.get("p99Ms").asDouble()).isGreaterThanOrEqualTo(m.get("p50Ms").asDouble());
        }
        assertThat(labels).containsExactly("bare", "bare-10000-tenants", "quotagate-1-tenant", "quotagate-10000-tenants",
                "jetty-dosfilter", "counter-map-10000-tenants", "bucket4j-map-10000-tenants", "resilience4j-10000-tenants");
        // QuotaFilter held against each peer fed the same traffic, in the same rounds
        List<String> pairs = new ArrayList<>();
        for (JsonNode c : root.get("comparisons")) {
            pairs.add(c.get("mode").asText() + " / " + c.get("peer").asText());
            assertThat(c.get("cpuRatio").asDouble()).as("%s", c).isPositive();
            assertThat(c.get("rpsRatio").asDouble()).as("%s", c).isPositive();
            double median = c.get("cpuRatio").asDouble();
            assertThat(c.get("cpuRatioLowerQuartile").asDouble()).as("%s", c).isLessThanOrEqualTo(median);
            assertThat(c.get("cpuRatioUpperQuartile").asDouble()).as("%s", c).isGreaterThanOrEqualTo(median);
            assertThat(c.get("roundsAtMost1").asInt()).as("%s", c).isBetween(0, c.get("rounds").asInt());
            // two rounds place no median with 95 % confidence: no interval, and no verdict either way
            assertThat(c.get("cpuRatioMedianCi95Low").isNull()).as("%s", c).isTrue();
            assertThat(c.get("cpuRatioMedianCi95High").isNull()).as("%s", c).isTrue();
            assertThat(c.get("verdict").asText()).as("%s", c).isEqualTo("too few rounds for a verdict (6+)");
        }
        assertThat(text).contains("quotagate-1-tenant       jetty-dosfilter").contains("too few rounds for a verdict (6+)");
        assertThat(pairs).containsExactly("quotagate-1-tenant / jetty-dosfilter",
                "quotagate-10000-tenants / bucket4j-map-10000-tenants", "quotagate-10000-tenants / resilience4j-10000-tenants",
                "quotagate-10000-tenants / counter-map-10000-tenants");
        assertThat(text).contains("QuotaFilter against its peers");
        for (int bare : new int[]{0, 1}) {
            assertThat(modes.get(bare).get("ratioToBare").asDouble()).isEqualTo(1.0);
            assertThat(modes.get(bare).get("cpuRatioToBare").asDouble()).isEqualTo(1.0);
        }
    }

    @Test
    void profileWritesCollapsedStacksPerServerThreadThatFilterShareSplits(@TempDir Path dir) throws Exception {
        Path profile = dir.resolve("profile.txt");
        StringWriter output = new StringWriter();
        CommandLine cli = new CommandLine(new LoadTests());
        cli.setOut(new PrintWriter(output, true));

        int exit = cli.execute("bench", "--modes", "quotagate-1-tenant", "--duration", "1s", "--runs", "1",
                "--warmup", "300ms", "--connections", "2", "--profile", profile.toString());

        String text = output.toString();
        assertThat(exit).as(text).isZero();
        assertThat(text).contains("wrote " + profile)
                .as("this JVM runs without -XX:+DebugNonSafepoints: the command says what that costs")
                .contains("-XX:+DebugNonSafepoints");
        // stacks per thread: each mode's server pool, QuotaFilter's own frames among them
        Map<String, FilterShareCommand.Share> shares;
        try (BufferedReader in = Files.newBufferedReader(profile)) {
            shares = FilterShareCommand.read(in);
        }
        assertThat(shares).containsKeys("bare", "quotagate-1-tenant");
        assertThat(shares.get("quotagate-1-tenant").own()).as("QuotaFilter's own samples").isPositive();
        assertThat(shares.get("quotagate-1-tenant").app()).as("the application's samples").isPositive();
        // bare has no filter: none of its samples is a filter's. A stray sample or two may still land there:
        // async-profiler names a sample's thread when it writes, and a thread id the bare server's pool
        // used can be reused by the next server's thread meanwhile (seen once in a full build)
        assertThat(shares.get("bare").own()).as("bare's samples counted as a filter's")
                .isLessThanOrEqualTo(Math.max(2, shares.get("bare").total() / 100));
    }

    @Test
    void modesNarrowsTheRunToTheChosenModesAndBare() {
        StringWriter output = new StringWriter();
        CommandLine cli = new CommandLine(new LoadTests());
        cli.setOut(new PrintWriter(output, true));

        int exit = cli.execute("bench", "--modes", "quotagate-10000-tenants", "--duration", "300ms", "--runs", "1",
                "--warmup", "0s", "--connections", "1");

        String text = output.toString();
        assertThat(exit).as(text).isZero();
        assertThat(text).contains("run 1/1 bare ").contains("run 1/1 bare-10000-tenants ")
                .contains("run 1/1 quotagate-10000-tenants ")
                .doesNotContain("quotagate-1-tenant").doesNotContain("jetty-dosfilter");

        StringWriter err = new StringWriter();
        cli.setErr(new PrintWriter(err, true));
        assertThat(cli.execute("bench", "--modes", "redis-1-tenant", "--duration", "300ms")).as("a Redis mode without --redis")
                .isEqualTo(2);
        assertThat(err.toString()).isEqualTo("bench: mode redis-1-tenant needs --redis URI" + System.lineSeparator());
    }

    @Test
    void anInvalidOptionIsNamedWithoutAStackTraceAndExitsWith2() {
        // each refused before a server starts; --warmup 0 ("0 for none", as the help says) is accepted
        Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
        List<Map.Entry<List<String>, String>> refused = List.of(
                Map.entry(List.of("bench", "--runs", "0"), "bench: --runs must be > 0, was 0"),
                Map.entry(List.of("bench", "--warmup", "0", "--connections", "0"), "bench: --connections must be > 0, was 0"),
                Map.entry(List.of("bench", "--duration", "0s"), "bench: --duration must be > 0, was 0s"),
                Map.entry(List.of("bench", "--modes", "quotagate-2-tenants"), "bench: unknown mode 'quotagate-2-tenants'; modes: bare,"),
                Map.entry(List.of("bench", "--duration", "5x"), "'5x' is not a duration: give e.g. 500ms, 10s, 2m, 0 or PT1M30S"),
                Map.entry(List.of("bench", "--json", tmp.toString()), "bench: --json " + tmp + " is a directory"),
                Map.entry(List.of("bench", "--profile", tmp.toString()), "bench: --profile " + tmp + " is a directory"),
                // nothing listens on port 1: refused before any server starts, not after the first run
                Map.entry(List.of("bench", "--redis", "redis://127.0.0.1:1"), "bench: cannot use --redis redis://127.0.0.1:1: "),
                Map.entry(List.of("bench", "--duration", "99999999999999999999s"), "'99999999999999999999s' is too long a duration"),
                Map.entry(List.of("heap", "--runs", "0"), "heap: --runs must be > 0, was 0"),
                Map.entry(List.of("heap", "--tenants", "0"), "heap: --tenants must be in 1.."),
                Map.entry(List.of("heap", "--algorithms", "gcra,leaky"), "heap: unknown algorithm 'leaky'; algorithms: "),
                Map.entry(List.of("bench", "--algorithm", "leaky"), "bench: --algorithm: unknown algorithm 'leaky'"));
        for (Map.Entry<List<String>, String> refusal : refused) {
            List<String> args = refusal.getKey();
            String message = refusal.getValue();
            StringWriter err = new StringWriter();
            CommandLine cli = new CommandLine(new LoadTests());
            cli.setOut(new PrintWriter(new StringWriter(), true));
            cli.setErr(new PrintWriter(err, true));

            assertThat(cli.execute(args.toArray(String[]::new))).as("%s\n%s", args, err).isEqualTo(2);
            assertThat(err.toString()).as("%s", args).contains(message).doesNotContain("Exception").doesNotContain("\tat ");
        }
    }

    @Test
    void withRedisMeasuresLocalAgainstRedisStoresAndCountsRedisCommandsPerRequest() throws Exception {
        try (io.quotagate.filter.testing.RedisServer redis = io.quotagate.filter.testing.RedisServer.startOwn()) {
            StringWriter output = new StringWriter();
            CommandLine cli = new CommandLine(new LoadTests());
            cli.setOut(new PrintWriter(output, true));

            int exit = cli.execute("bench", "--redis", redis.uri(), "--duration", "500ms", "--runs", "1",
                    "--warmup", "0s", "--connections", "2");

            String text = output.toString();
            assertThat(exit).as("exit status\n%s", text).isZero();
            for (String mode : List.of("bare", "quotagate-1-tenant", "quotagate-1000-tenants", "redis-1-tenant",
                    "redis-1000-tenants", "redis-1-tenant-allowance", "redis-1000-tenants-allowance")) {
                assertThat(text).contains("run 1/1 " + mode + " ");
            }
            assertThat(text).as("batching was removed: no such mode").doesNotContain("-batched");
            assertThat(text).doesNotContain("jetty-dosfilter").contains("Redis commands per request");
            // each Redis mode held against the local store with its tenants, in the same rounds
            assertThat(text).contains("Redis store against the local store");
            java.util.regex.Matcher local = java.util.regex.Pattern
                    .compile("(?m)^redis-1000-tenants +quotagate-1000-tenants +([0-9.]+) +n/a").matcher(text);
            assertThat(local.find()).as(text).isTrue();
            assertThat(Double.parseDouble(local.group(1))).as("req/s vs local").isPositive();
            assertThat(text).containsPattern("(?m)^redis-1-tenant-allowance +quotagate-1-tenant ");
            // exact (the default): at most one script call per request (concurrent ones share a call), which
            // reads the request's one key; its GET column is those reads, not commands sent
            java.util.regex.Matcher m = java.util.regex.Pattern
                    .compile("redis-1000-tenants +([0-9.]+) GET +([0-9.]+) EVAL +([0-9.]+) EVALSHA += +([0-9.]+) commands +([0-9.]+) local")
                    .matcher(text);
            assertThat(m.find()).as(text).isTrue();
            // a request the store's timeout decided from local buckets (a loaded machine) read no key in Redis
            double keysRead = Double.parseDouble(m.group(1));
            assertThat(keysRead).as("keys read per request").isLessThanOrEqualTo(1.05);
            assertThat(keysRead + Double.parseDouble(m.group(5))).as("keys read + decided locally, per request")
                    .isBetween(0.9, 1.05);
            // no EVAL (bucket4j's would be one per request): every script of the store, the other servers'
            // heartbeats too, goes as EVALSHA (an EVAL only after a NOSCRIPT)
            double evals = Double.parseDouble(m.group(2));
            double evalshas = Double.parseDouble(m.group(3));
            assertThat(evals).as("EVAL").isLessThan(0.05);
            assertThat(evalshas).as("EVALSHA").isGreaterThan(0.3).isLessThanOrEqualTo(1.05);
            assertThat(Double.parseDouble(m.group(4))).as("commands sent")
                    .isCloseTo(evals + evalshas, org.assertj.core.data.Offset.offset(0.0015));
            // Redis's own CPU beside the server's: every script call costs it some
            m = java.util.regex.Pattern.compile("redis-1000-tenants +[0-9.]+ GET .* local +([0-9.]+) µs Redis CPU")
                    .matcher(text);
            assertThat(m.find()).as(text).isTrue();
            assertThat(Double.parseDouble(m.group(1))).as("Redis CPU µs per request").isPositive();
            // one hot tenant with an allowance of 20 units: one compare-and-swap per 21 requests or so
            m = java.util.regex.Pattern.compile("redis-1-tenant-allowance +([0-9.]+) GET +([0-9.]+) EVAL").matcher(text);
            assertThat(m.find()).as(text).isTrue();
            assertThat(Double.parseDouble(m.group(2))).isBetween(0.0, 0.25);
            // the platform's part: what one thread hand-off costs here, measured after the runs
            // (a process CPU clock that never moved over the whole measurement is said so, never printed as 0)
            m = java.util.regex.Pattern.compile("one thread hand-off \\(park, unpark, wake\\) costs (?:([0-9.]+) µs of CPU"
                    + "|an unmeasured CPU time \\(the process CPU clock did not advance\\)), ([0-9.]+) µs elapsed").matcher(text);
            assertThat(m.find()).as(text).isTrue();
            if (m.group(1) != null) assertThat(Double.parseDouble(m.group(1))).as("CPU per hand-off").isPositive();
            assertThat(Double.parseDouble(m.group(2))).as("elapsed per hand-off").isNotNegative();
        }
    }

    @Test
    void aModeWithAnyNon200ResponseIsFlaggedAndFailsTheCommand() {
        RunResult clean = new RunResult(Mode.BARE, 100, 0, 0, 1_000_000_000L, histogram(), 1_000_000L);
        RunResult refused = new RunResult(Mode.QUOTAGATE_1_TENANT, 90, 10, 0, 1_000_000_000L, histogram(), 1_000_000L);
        BenchReport report = BenchReport.of(new java.util.EnumMap<>(java.util.Map.of(
                Mode.BARE, List.of(clean), Mode.QUOTAGATE_1_TENANT, List.of(refused))));

        StringWriter out = new StringWriter();
        report.print(new PrintWriter(out));

        assertThat(report.anyErrors()).isTrue();
        assertThat(out.toString()).contains("quotagate-1-tenant").contains(BenchReport.FLAG + ": 10 non-200");
    }

    @Test
    void theTenThousandTenantModeIsComparedWithBareJettyFedTheSameTraffic() {
        // server CPU per request: bare 10 µs, bare with 10,000 tenant ids 20 µs, the filter with them 22 µs
        RunResult bare = new RunResult(Mode.BARE, 100, 0, 0, 1_000_000_000L, histogram(), 1_000_000L);
        RunResult bareTenants = new RunResult(Mode.BARE_10000_TENANTS, 100, 0, 0, 1_000_000_000L, histogram(), 2_000_000L);
        RunResult filter = new RunResult(Mode.QUOTAGATE_10000_TENANTS, 100, 0, 0, 1_000_000_000L, histogram(), 2_200_000L);
        BenchReport report = BenchReport.of(new java.util.EnumMap<>(java.util.Map.of(Mode.BARE, List.of(bare),
                Mode.BARE_10000_TENANTS, List.of(bareTenants), Mode.QUOTAGATE_10000_TENANTS, List.of(filter))));

        BenchReport.ModeSummary tenants = report.modes().stream()
                .filter(m -> m.mode() == Mode.QUOTAGATE_10000_TENANTS).findFirst().orElseThrow();
        assertThat(tenants.baseline()).isEqualTo(Mode.BARE_10000_TENANTS);
        assertThat(tenants.cpuRatioToBare()).isCloseTo(1.1, org.assertj.core.data.Offset.offset(1e-9));

        // without its own baseline it falls back to bare
        BenchReport alone = BenchReport.of(new java.util.EnumMap<>(java.util.Map.of(Mode.BARE, List.of(bare),
                Mode.QUOTAGATE_10000_TENANTS, List.of(filter))));
        assertThat(alone.modes().get(1).baseline()).isEqualTo(Mode.BARE);
        assertThat(alone.modes().get(1).cpuRatioToBare()).isCloseTo(2.2, org.assertj.core.data.Offset.offset(1e-9));
    }

    @Test
    void aPeerIsComparedWithQuotaFilterRoundByRound() {
        // round 1: the machine is fast, round 2 twice as slow for everyone: per-round ratios cancel the drift
        RunResult ours1 = new RunResult(Mode.QUOTAGATE_10000_TENANTS, 100, 0, 0, 1_000_000_000L, histogram(), 2_000_000L);
        RunResult ours2 = new RunResult(Mode.QUOTAGATE_10000_TENANTS, 50, 0, 0, 1_000_000_000L, histogram(), 2_000_000L);
        RunResult peer1 = new RunResult(Mode.BUCKET4J_MAP_10000_TENANTS, 100, 0, 0, 1_000_000_000L, histogram(), 2_500_000L);
        RunResult peer2 = new RunResult(Mode.BUCKET4J_MAP_10000_TENANTS, 50, 0, 0, 1_000_000_000L, histogram(), 1_250_000L);
        RunResult bare = new RunResult(Mode.BARE, 100, 0, 0, 1_000_000_000L, histogram(), 1_000_000L);
        BenchReport report = BenchReport.of(new java.util.EnumMap<>(java.util.Map.of(Mode.BARE, List.of(bare, bare),
                Mode.QUOTAGATE_10000_TENANTS, List.of(ours1, ours2), Mode.BUCKET4J_MAP_10000_TENANTS, List.of(peer1, peer2))));

        assertThat(report.comparisons()).singleElement().satisfies(c -> {
            assertThat(c.peer()).isEqualTo(Mode.BUCKET4J_MAP_10000_TENANTS);
            // CPU per request: 20 vs 25 µs, then 40 vs 25 µs: ratios 0.8 and 1.6, median 1.2
            assertThat(c.cpuRatio()).isCloseTo(1.2, org.assertj.core.data.Offset.offset(1e-9));
            assertThat(c.rpsRatio()).isCloseTo(1.0, org.assertj.core.data.Offset.offset(1e-9));
            // quartiles of {0.8, 1.6}: 0.8 + 0.25 × 0.8 and 0.8 + 0.75 × 0.8; one round of two at most 1
            assertThat(c.cpuLow()).isCloseTo(1.0, org.assertj.core.data.Offset.offset(1e-9));
            assertThat(c.cpuHigh()).isCloseTo(1.4, org.assertj.core.data.Offset.offset(1e-9));
            assertThat(c.roundsAtMost1()).isEqualTo(1);
            assertThat(c.rounds()).isEqualTo(2);
            // two rounds cannot place the median with 95 % confidence
            assertThat(c.cpuMedianLow()).isNaN();
            assertThat(c.verdict()).startsWith("too few rounds");
        });
    }

    @Test
    void aRedisModeIsHeldAgainstTheLocalStoreWithItsTenantsRoundByRound() throws Exception {
        // the machine slows down round after round: local 100, 50, 25 req/s; Redis 60, 40, 10. Per round: 0.6,
        // 0.8, 0.4, median 0.6; the ratio of the medians (40 / 50 = 0.8) would let the drift decide
        RunResult bare = new RunResult(Mode.BARE, 100, 0, 0, 1_000_000_000L, histogram(), 1_000_000L);
        List<RunResult> local = List.of(
                new RunResult(Mode.QUOTAGATE_1000_TENANTS, 100, 0, 0, 1_000_000_000L, histogram(), 2_000_000L),
                new RunResult(Mode.QUOTAGATE_1000_TENANTS, 50, 0, 0, 1_000_000_000L, histogram(), 1_000_000L),
                new RunResult(Mode.QUOTAGATE_1000_TENANTS, 25, 0, 0, 1_000_000_000L, histogram(), 500_000L));
        // CPU per request 20 µs local in every round; Redis 50, 30 and 60 µs: ratios 2.5, 1.5, 3, median 2.5
        List<RunResult> redis = List.of(
                new RunResult(Mode.REDIS_1000_TENANTS, 60, 0, 0, 1_000_000_000L, histogram(), 3_000_000L),
                new RunResult(Mode.REDIS_1000_TENANTS, 40, 0, 0, 1_000_000_000L, histogram(), 1_200_000L),
                new RunResult(Mode.REDIS_1000_TENANTS, 10, 0, 0, 1_000_000_000L, histogram(), 600_000L));
        BenchReport report = BenchReport.of(new java.util.EnumMap<>(java.util.Map.of(Mode.BARE, List.of(bare, bare, bare),
                Mode.QUOTAGATE_1000_TENANTS, local, Mode.REDIS_1000_TENANTS, redis)));

        assertThat(report.stores()).singleElement().satisfies(c -> {
            assertThat(c.local()).isEqualTo(Mode.QUOTAGATE_1000_TENANTS);
            assertThat(c.rpsRatio()).isCloseTo(0.6, org.assertj.core.data.Offset.offset(1e-9));
            // quartiles of {0.4, 0.6, 0.8}
            assertThat(c.low()).isCloseTo(0.5, org.assertj.core.data.Offset.offset(1e-9));
            assertThat(c.high()).isCloseTo(0.7, org.assertj.core.data.Offset.offset(1e-9));
            assertThat(c.cpuRatio()).isCloseTo(2.5, org.assertj.core.data.Offset.offset(1e-9));
            assertThat(c.medianLow()).isNaN(); // 3 rounds cannot place the median with 95 % confidence
            assertThat(c.rounds()).isEqualTo(3);
        });
        StringWriter out = new StringWriter();
        report.print(new PrintWriter(out));
        assertThat(out.toString()).containsPattern("(?m)^redis-1000-tenants +quotagate-1000-tenants +0\\.600 +n/a +0\\.500-0\\.700 +2\\.500 +3$");
        java.nio.file.Path json = java.nio.file.Files.createTempFile("bench", ".json");
        try {
            report.writeJson(json);
            com.fasterxml.jackson.databind.JsonNode store = new com.fasterxml.jackson.databind.ObjectMapper()
                    .readTree(json.toFile()).get("storeComparisons").get(0);
            assertThat(store.get("mode").asText()).isEqualTo("redis-1000-tenants");
            assertThat(store.get("rpsRatio").asDouble()).isEqualTo(0.6);
            assertThat(store.get("rpsRatioMedianCi95Low").isNull()).isTrue();

            // no local mode with its tenants in the run: nothing to hold it against, and no such array
            BenchReport alone = BenchReport.of(new java.util.EnumMap<>(java.util.Map.of(Mode.BARE, List.of(bare, bare, bare),
                    Mode.REDIS_1000_TENANTS, redis)));
            assertThat(alone.stores()).isEmpty();
            alone.writeJson(json);
            assertThat(new com.fasterxml.jackson.databind.ObjectMapper().readTree(json.toFile()).has("storeComparisons"))
                    .isFalse();
        } finally {
            java.nio.file.Files.deleteIfExists(json);
        }
    }

    @Test
    void aRedisModeChosenAloneBringsTheLocalStoreWithItsTenants() {
        BenchCommand command = new BenchCommand();
        command.redis = "redis://127.0.0.1:6390";
        command.modes = List.of("redis-1000-tenants");
        assertThat(command.modesToRun()).containsExactlyInAnyOrder(Mode.BARE, Mode.REDIS_1000_TENANTS,
                Mode.QUOTAGATE_1000_TENANTS);
        command.modes = List.of("redis-1-tenant-allowance", "quotagate-1000-tenants");
        assertThat(command.modesToRun()).containsExactlyInAnyOrder(Mode.BARE, Mode.REDIS_1_TENANT_ALLOWANCE,
                Mode.QUOTAGATE_1_TENANT, Mode.QUOTAGATE_1000_TENANTS);
    }

    @Test
    void theMedianIntervalLeavesOutAsManyRoundsAtEachEndAsTheBinomialAllows() {
        // ranks 1..n: the interval's ends are the ranks themselves
        assertThat(BenchReport.medianInterval(ranks(5))).isNull(); // even the range covers only 93.75 %
        assertThat(BenchReport.medianInterval(ranks(6))).containsExactly(1, 6); // the range: 96.9 %
        // 12 rounds: 2 left out at each end (96.1 %), 3 would cover only 85.4 %
        assertThat(BenchReport.medianInterval(ranks(12))).containsExactly(3, 10);
        // 36 rounds: 11 left out at each end (97.1 %), 12 would cover only 93.5 %
        assertThat(BenchReport.medianInterval(ranks(36))).containsExactly(12, 25);
        // the order the rounds came in does not matter
        assertThat(BenchReport.medianInterval(new double[]{12, 3, 7, 1, 9, 2, 11, 4, 10, 5, 8, 6})).containsExactly(3, 10);
    }

    @Test
    void theVerdictNamesTheCheaperFilterOnlyWhenTheWholeIntervalIsOnItsSide() {
        assertThat(comparison(1.01, 1.02, 1.03, 1.04, 1.05, 1.06, 1.07, 1.08, 1.09, 1.10, 1.11, 1.12).verdict())
                .isEqualTo("QuotaFilter costs more");
        assertThat(comparison(0.90, 0.91, 0.92, 0.93, 0.94, 0.95, 0.96, 0.97, 0.98, 0.99, 1.05, 1.10).verdict())
                .isEqualTo("QuotaFilter costs less"); // the interval: 0.92-0.99
        // an interval ending exactly at 1 does not exclude equality
        assertThat(comparison(0.90, 0.91, 0.92, 0.93, 0.94, 0.95, 0.96, 0.97, 0.98, 1.00, 1.05, 1.10).verdict())
                .isEqualTo("cannot tell apart");
        assertThat(comparison(1.00, 1.00, 1.00, 1.03, 1.04, 1.05, 1.06, 1.07, 1.08, 1.09, 1.10, 1.11).verdict())
                .isEqualTo("cannot tell apart");
        BenchReport.Comparison mixed = comparison(0.90, 0.95, 0.97, 0.98, 0.99, 1.0, 1.01, 1.02, 1.03, 1.04, 1.05, 1.10);
        assertThat(mixed.verdict()).isEqualTo("cannot tell apart");
        assertThat(mixed.cpuMedianLow()).isCloseTo(0.97, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(mixed.cpuMedianHigh()).isCloseTo(1.04, org.assertj.core.data.Offset.offset(1e-9));
    }

    /** QuotaFilter (10,000 tenants) against the bucket4j map over rounds with these CPU ratios (peer at 10 µs). */
    private static BenchReport.Comparison comparison(double... cpuRatios) {
        List<RunResult> ours = new java.util.ArrayList<>();
        List<RunResult> peer = new java.util.ArrayList<>();
        List<RunResult> bare = new java.util.ArrayList<>();
        for (double ratio : cpuRatios) {
            bare.add(new RunResult(Mode.BARE_10000_TENANTS, 100, 0, 0, 1_000_000_000L, histogram(), 1_000_000L));
            ours.add(new RunResult(Mode.QUOTAGATE_10000_TENANTS, 100, 0, 0, 1_000_000_000L, histogram(),
                    Math.round(1_000_000L * ratio)));
            peer.add(new RunResult(Mode.BUCKET4J_MAP_10000_TENANTS, 100, 0, 0, 1_000_000_000L, histogram(), 1_000_000L));
        }
        BenchReport report = BenchReport.of(new java.util.EnumMap<>(java.util.Map.of(Mode.BARE_10000_TENANTS, bare,
                Mode.QUOTAGATE_10000_TENANTS, ours, Mode.BUCKET4J_MAP_10000_TENANTS, peer)));
        return report.comparisons().get(0);
    }

    private static double[] ranks(int n) {
        double[] v = new double[n];
        for (int i = 0; i < n; i++) v[i] = i + 1;
        return v;
    }

    @Test
    void heapIsMeasuredForEachAlgorithmOfQuotaFilter() {
        StringWriter output = new StringWriter();
        CommandLine cli = new CommandLine(new LoadTests());
        cli.setOut(new PrintWriter(output, true));

        int exit = cli.execute("heap", "--tenants", "2000", "--runs", "1", "--algorithms", "token-bucket,gcra,sliding-window");

        String text = output.toString();
        assertThat(exit).as(text).isZero();
        for (String filter : List.of("quotagate", "quotagate/gcra", "quotagate/sliding-window", "bucket4j-map")) {
            assertThat(text).containsPattern("(?m)^" + java.util.regex.Pattern.quote(filter) + " +(-?[0-9]+) bytes/tenant$");
        }
    }

    @Test
    void benchWithRedisRunsTheRedisStoreWithTheAlgorithmGiven() throws Exception {
        try (io.quotagate.filter.testing.RedisServer redis = io.quotagate.filter.testing.RedisServer.startOwn()) {
            StringWriter output = new StringWriter();
            CommandLine cli = new CommandLine(new LoadTests());
            cli.setOut(new PrintWriter(output, true));

            int exit = cli.execute("bench", "--redis", redis.uri(), "--modes", "redis-1000-tenants", "--algorithm", "gcra",
                    "--duration", "300ms", "--runs", "1", "--warmup", "0s", "--connections", "1");

            String text = output.toString();
            assertThat(exit).as(text).isZero();
            assertThat(text).contains("QuotaFilter's algorithm gcra").contains("run 1/1 redis-1000-tenants ")
                    .contains("run 1/1 quotagate-1000-tenants ").contains("Redis commands per request");
        }
    }

    @Test
    void benchRunsQuotaFiltersModesWithTheAlgorithmGiven() {
        StringWriter output = new StringWriter();
        CommandLine cli = new CommandLine(new LoadTests());
        cli.setOut(new PrintWriter(output, true));

        int exit = cli.execute("bench", "--modes", "quotagate-1-tenant", "--algorithm", "sliding-window", "--duration",
                "300ms", "--runs", "1", "--warmup", "0s", "--connections", "1");

        String text = output.toString();
        assertThat(exit).as(text).isZero();
        assertThat(text).contains("QuotaFilter's algorithm sliding-window").contains("run 1/1 quotagate-1-tenant ");
    }

    @Test
    void heapPerTenantIsMeasuredForQuotaFilterAndEveryPeer() {
        StringWriter output = new StringWriter();
        CommandLine cli = new CommandLine(new LoadTests());
        cli.setOut(new PrintWriter(output, true));

        int exit = cli.execute("heap", "--tenants", "5000", "--runs", "1");

        String text = output.toString();
        assertThat(exit).as(text).isZero();
        for (String filter : List.of("quotagate", "bucket4j-map", "resilience4j", "counter-map")) {
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^" + filter + " +(-?[0-9]+) bytes/tenant$").matcher(text);
            assertThat(m.find()).as(text).isTrue();
            // every filter keeps at least its map entry and key per tenant (a 12-character id alone is 56 bytes)
            assertThat(Integer.parseInt(m.group(1))).as("%s\n%s", filter, text).isBetween(50, 4096);
        }
    }

    @Test
    void medianOfAnEvenNumberOfRunsIsTheMeanOfTheMiddleTwo() {
        assertThat(BenchReport.median(new double[]{4, 1, 3, 2})).isEqualTo(2.5);
        assertThat(BenchReport.median(new double[]{5, 1, 3})).isEqualTo(3);
    }

    private static org.HdrHistogram.Histogram histogram() {
        org.HdrHistogram.Histogram h = new org.HdrHistogram.Histogram(60_000_000L, 3);
        h.recordValue(200);
        return h;
    }

    private static List<String> fieldNames(JsonNode node) {
        List<String> names = new ArrayList<>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }
}

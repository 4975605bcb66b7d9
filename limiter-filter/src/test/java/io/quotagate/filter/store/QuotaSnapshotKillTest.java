package io.quotagate.filter.store;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What survives {@code kill -9}: a filter in a process of its own counts a tenant's requests, the
 * process is killed without a chance to write, and a new filter reads the last periodic snapshot.
 */
class QuotaSnapshotKillTest {
    static final String PLANS = """
            plans:
              pro:
                limits: [ { capacity: 100, refill: 100, period: 1s } ]
                quotas: [ { name: monthly, limit: 3, per: month } ]
            tenants:
              assignments: { acme: pro }
            """;
    static final Instant MID_MARCH = Instant.parse("2027-03-15T12:00:00Z");

    @TempDir
    Path dir;

    /** The child process: a filter with a snapshot every 100 ms on Jetty; prints its port, runs until killed. */
    public static void main(String[] args) throws Exception {
        ManualClock clock = new ManualClock();
        QuotaFilter filter = QuotaFilter.builder().plans(PlansFile.parse("plans.yml", PLANS)).clock(clock)
                .wallClock(clock.wallClock(MID_MARCH)).quotaSnapshot(Path.of(args[0]), Duration.ofMillis(100)).build();
        JettyServer server = JettyServer.start(filter);
        System.out.println("port " + server.port());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }

    @Test
    void aKilledProcessLosesNoMoreThanTheCountsOfItsLastInterval() throws Exception {
        Path file = dir.resolve("quotas.txt");
        Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), QuotaSnapshotKillTest.class.getName(), file.toString())
                .redirectErrorStream(true).start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
            String line;
            int port = -1;
            while ((line = out.readLine()) != null) {
                if (line.startsWith("port ")) {
                    port = Integer.parseInt(line.substring(5));
                    break;
                }
            }
            assertThat(port).as("the child started").isPositive();
            URI items = URI.create("http://127.0.0.1:" + port + "/items");
            assertThat(Http.get(items, "acme").statusCode()).isEqualTo(200);
            assertThat(Http.get(items, "acme").statusCode()).isEqualTo(200);
            Await.until("a periodic snapshot with both requests",
                    () -> Files.exists(file) && Files.readString(file).contains("monthly:acme:2027-03-01 2 "));
        } finally {
            child.destroyForcibly(); // SIGKILL: no shutdown hook, no destroy(), no last write
            assertThat(child.waitFor(10, TimeUnit.SECONDS)).isTrue();
        }
        ManualClock clock = new ManualClock();
        try (JettyServer next = JettyServer.start(QuotaFilter.builder().plans(PlansFile.parse("plans.yml", PLANS))
                .clock(clock).wallClock(clock.wallClock(MID_MARCH)).quotaSnapshot(file, Duration.ofHours(1)).build())) {
            assertThat(Http.get(next.uri("/items"), "acme").statusCode()).isEqualTo(200);
            assertThat(Http.get(next.uri("/items"), "acme").statusCode()).as("2 counted before the kill + 1")
                    .isEqualTo(429);
        }
    }
}

package io.quotagate.filter.servlet;

import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The local store's quota counters across a restart: the snapshot file. */
class QuotaSnapshotTest {
    private static final String PLANS = """
            plans:
              pro:
                limits: [ { capacity: 100, refill: 100, period: 1s } ]
                quotas: [ { name: monthly, limit: 3, per: month } ]
            tenants:
              assignments: { acme: pro }
            """;
    private static final Instant MID_MARCH = Instant.parse("2027-03-15T12:00:00Z");

    @TempDir
    Path dir;
    private final ManualClock clock = new ManualClock();
    private final Clock wall = clock.wallClock(MID_MARCH);

    private JettyServer start(Path file, Duration interval) throws Exception {
        return JettyServer.start(QuotaFilter.builder().plans(PlansFile.parse("plans.yml", PLANS)).clock(clock)
                .wallClock(wall).quotaSnapshot(file, interval).build());
    }

    private static int get(JettyServer server) throws Exception {
        return Http.get(server.uri("/items"), "acme").statusCode();
    }

    @Test
    void aRestartedFilterReadsTheCountsItsPredecessorWroteWhenItStopped() throws Exception {
        Path file = dir.resolve("quotas.txt");
        try (JettyServer first = start(file, Duration.ofHours(1))) {
            for (int i = 0; i < 3; i++) assertThat(get(first)).isEqualTo(200);
            assertThat(get(first)).isEqualTo(429);
        }
        assertThat(Files.readAllLines(file)).containsExactly("quotagate-quota-counters 1",
                "monthly:acme:2027-03-01 3 " + (Instant.parse("2027-04-01T00:00:00Z").toEpochMilli() + 3_600_000L));
        try (JettyServer second = start(file, Duration.ofHours(1))) {
            assertThat(get(second)).as("the month's count survived the restart").isEqualTo(429);
        }
    }

    @Test
    void theCountsAreWrittenPeriodicallySoAFilterThatNeverStoppedLosesAtMostAnInterval() throws Exception {
        Path file = dir.resolve("quotas.txt");
        JettyServer crashed = start(file, Duration.ofMillis(50)); // never closed: as if the process died
        try {
            for (int i = 0; i < 2; i++) assertThat(get(crashed)).isEqualTo(200);
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (!(Files.exists(file) && Files.readString(file).contains("monthly:acme:2027-03-01 2 "))) {
                assertThat(System.nanoTime()).as("written within 5 s").isLessThan(deadline);
                Thread.sleep(10);
            }
            try (JettyServer next = start(dir.resolve("quotas.txt"), Duration.ofHours(1))) {
                assertThat(get(next)).isEqualTo(200);
                assertThat(get(next)).as("2 from the snapshot + 1").isEqualTo(429);
            }
        } finally {
            crashed.server().stop();
        }
    }

    @Test
    void countsOfAPeriodThatHasEndedAreNotReadBack() throws Exception {
        Path file = dir.resolve("quotas.txt");
        Files.writeString(file, "quotagate-quota-counters 1\n"
                + "monthly:acme:2027-02-01 3 " + (Instant.parse("2027-03-01T00:00:00Z").toEpochMilli() + 3_600_000L) + "\n"
                + "garbage line\n"
                + "monthly:acme:2027-03-01 2 " + (Instant.parse("2027-04-01T00:00:00Z").toEpochMilli() + 3_600_000L) + "\n");
        try (JettyServer server = start(file, Duration.ofHours(1))) {
            assertThat(get(server)).isEqualTo(200);
            assertThat(get(server)).isEqualTo(429);
        }
        assertThat(Files.readString(file)).doesNotContain("2027-02-01").doesNotContain("garbage");
    }

    /** A container-created filter, from init-params, on the system's clocks. */
    private JettyServer startFromInitParams(Path plans, Path snapshot) throws Exception {
        var context = new org.eclipse.jetty.ee10.servlet.ServletContextHandler();
        context.setContextPath("/");
        var holder = new org.eclipse.jetty.ee10.servlet.FilterHolder(QuotaFilter.class);
        holder.setInitParameter(QuotaFilter.PLANS_PARAM, plans.toString());
        holder.setInitParameter(QuotaFilter.QUOTA_SNAPSHOT_PARAM, snapshot.toString());
        holder.setInitParameter(QuotaFilter.QUOTA_SNAPSHOT_INTERVAL_PARAM, "1h");
        context.addFilter(holder, "/*", java.util.EnumSet.of(jakarta.servlet.DispatcherType.REQUEST));
        context.addServlet(new org.eclipse.jetty.ee10.servlet.ServletHolder(new JettyServer.OkServlet()), "/");
        return JettyServer.start(context);
    }

    @Test
    void aContainerCreatedFilterKeepsItsCountsThroughTheInitParams() throws Exception {
        Path plans = Files.writeString(dir.resolve("plans.yml"), PLANS);
        Path file = dir.resolve("quotas.txt");
        try (JettyServer first = startFromInitParams(plans, file)) {
            for (int i = 0; i < 3; i++) assertThat(get(first)).isEqualTo(200);
        }
        try (JettyServer second = startFromInitParams(plans, file)) {
            assertThat(get(second)).isEqualTo(429);
        }
    }

    @Test
    void aSnapshotInADirectoryThatDoesNotExistFailsTheBuildNamingIt() {
        Path file = dir.resolve("missing/quotas.txt");
        assertThatThrownBy(() -> QuotaFilter.builder().plans(PlansFile.parse("plans.yml", PLANS))
                .quotaSnapshot(file, Duration.ofMinutes(1)).build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("quotaSnapshot: " + file).hasMessageContaining("does not exist");
    }
}

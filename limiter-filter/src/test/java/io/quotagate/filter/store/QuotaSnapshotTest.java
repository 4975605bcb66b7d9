package io.quotagate.filter.store;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.FilterConfigs;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.LogCapture;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.PlansFile;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.stream.Stream;

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
              max-tracked: 10
              assignments: { acme: pro, beta: pro }
            """;
    /** When the counters of March 2027 may go: the end of the 3 months kept after it (usage export), plus an hour. */
    private static final long MARCH_EXPIRY = Instant.parse("2027-07-01T00:00:00Z").toEpochMilli() + 3_600_000L;
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
        return get(server, "acme");
    }

    private static int get(JettyServer server, String tenant) throws Exception {
        return Http.get(server.uri("/items"), tenant).statusCode();
    }

    private QuotaFilter build(Path file) {
        return QuotaFilter.builder().plans(PlansFile.parse("plans.yml", PLANS)).clock(clock).wallClock(wall)
                .quotaSnapshot(file, Duration.ofHours(1)).build();
    }

    /** A snapshot holding March's {@code used} units for each of {@code tenants}. */
    private static byte[] snapshot(long used, String... tenants) {
        StringBuilder text = new StringBuilder("quotagate-quota-counters 1\n");
        for (String tenant : tenants) text.append("monthly:").append(tenant).append(":2027-03-01 ").append(used)
                .append(' ').append(MARCH_EXPIRY).append('\n');
        return text.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] part : parts) out.writeBytes(part);
        return out.toByteArray();
    }

    @Test
    void aRestartedFilterReadsTheCountsItsPredecessorWroteWhenItStopped() throws Exception {
        Path file = dir.resolve("quotas.txt");
        try (JettyServer first = start(file, Duration.ofHours(1))) {
            for (int i = 0; i < 3; i++) assertThat(get(first)).isEqualTo(200);
            assertThat(get(first)).isEqualTo(429);
        }
        assertThat(Files.readAllLines(file)).containsExactly("quotagate-quota-counters 1",
                "monthly:acme:2027-03-01 3 " + MARCH_EXPIRY);
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
            Await.until("a periodic snapshot with both requests",
                    () -> Files.exists(file) && Files.readString(file).contains("monthly:acme:2027-03-01 2 "));
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

    @Test
    void aLineThatCannotBeReadIsSkippedAndEveryOtherCountRestored() throws Exception {
        Path file = dir.resolve("quotas.txt");
        Files.write(file, concat(
                snapshot(1, "other"), // the header, and a line whose byte \xff is not UTF-8:
                ("monthly:bet\u00ffa:2027-03-01 1 " + MARCH_EXPIRY + "\n").getBytes(StandardCharsets.ISO_8859_1),
                ("monthly:acme:2027-03-01 3 " + MARCH_EXPIRY + "\n"
                        + "garbage line\n"
                        + "monthly:beta:2027-03-01 -1 " + MARCH_EXPIRY + "\n"
                        + "monthly:beta:2027-03-01 1 " + Instant.parse("2100-01-01T00:00:00Z").toEpochMilli() + "\n"
                        + "monthly:" + "x".repeat(2000) + ":2027-03-01 1 " + MARCH_EXPIRY + "\n"
                        + "monthly:beta:2027-03-01 2 " + MARCH_EXPIRY).getBytes(StandardCharsets.UTF_8))); // no newline: edited by hand
        try (LogCapture log = LogCapture.of(QuotaSnapshot.class, Level.WARNING);
             JettyServer server = start(file, Duration.ofHours(1))) {
            assertThat(get(server, "acme")).as("3 restored, after the line that is not UTF-8").isEqualTo(429);
            assertThat(get(server, "beta")).isEqualTo(200);
            assertThat(get(server, "beta")).as("2 restored + 1").isEqualTo(429);
            assertThat(log.messages()).containsExactly("quotagate: quota snapshot " + file + ": 3 counters restored; "
                    + "5 unreadable lines skipped (the first: line 3)");
        }
        assertThat(Files.readAllLines(file)).containsExactlyInAnyOrder("quotagate-quota-counters 1",
                "monthly:other:2027-03-01 1 " + MARCH_EXPIRY, "monthly:acme:2027-03-01 3 " + MARCH_EXPIRY,
                "monthly:beta:2027-03-01 3 " + MARCH_EXPIRY);
    }

    @Test
    void aSnapshotThatCannotBeReadFailsTheStartAndIsLeftAsItIs() throws Exception {
        Path file = Files.write(dir.resolve("quotas.txt"), snapshot(3, "acme"));
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("---------"));
        // root reads a file of mode 000 (CAP_DAC_OVERRIDE): then the filter starts in a JVM of its own
        // without the two capabilities that let root pass over permissions, as any other user would
        String outcome = Files.isReadable(file) ? startAndStopWithoutRootsOverride(file) : startAndStop(file);
        assertThat(outcome).isEqualTo("failed: QuotaFilter.builder(): quotaSnapshot: " + file + ": cannot be read "
                + "(permission denied); it is left as it is: replacing it would lose the counts it holds");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        assertThat(Files.readAllBytes(file)).isEqualTo(snapshot(3, "acme"));
    }

    /** Builds a filter on the snapshot and destroys it (which writes the snapshot): how it went. */
    static String startAndStop(Path file) {
        ManualClock clock = new ManualClock();
        try {
            QuotaFilter filter = QuotaFilter.builder().plans(PlansFile.parse("plans.yml", PLANS)).clock(clock)
                    .wallClock(clock.wallClock(MID_MARCH)).quotaSnapshot(file, Duration.ofHours(1)).build();
            filter.destroy();
            return "started";
        } catch (IllegalStateException e) {
            return "failed: " + e.getMessage();
        }
    }

    /** The child process of {@link #startAndStopWithoutRootsOverride}: prints what {@link #startAndStop} says. */
    public static void main(String[] args) {
        System.out.println(startAndStop(Path.of(args[0])));
    }

    private static String startAndStopWithoutRootsOverride(Path file) throws Exception {
        Process child = new ProcessBuilder("setpriv", "--bounding-set", "-dac_override,-dac_read_search",
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), QuotaSnapshotTest.class.getName(), file.toString())
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        try {
            String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(child.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(child.exitValue()).as("setpriv and the child ran: " + out).isZero();
            return out.strip();
        } finally {
            child.destroyForcibly();
        }
    }

    @Test
    void aSnapshotPathThatIsAFolderFailsTheStartNamingTheSettingAndTheReason() throws Exception {
        Path file = Files.createDirectory(dir.resolve("quotas.txt"));
        assertThatThrownBy(() -> build(file)).isInstanceOf(IllegalStateException.class)
                .hasMessage("QuotaFilter.builder(): quotaSnapshot: " + file + ": is a directory, not a file");
        Path plans = Files.writeString(dir.resolve("plans.yml"), PLANS);
        assertThatThrownBy(() -> new QuotaFilter().init(initParams(plans, file))).isInstanceOf(ServletException.class)
                .hasMessage("QuotaFilter 'quota': QuotaFilter.builder(): quotaSnapshot: " + file
                        + ": is a directory, not a file");
    }

    private static FilterConfig initParams(Path plans, Path snapshot) {
        return FilterConfigs.of(Map.of(QuotaFilter.PLANS_PARAM, plans.toString(),
                QuotaFilter.QUOTA_SNAPSHOT_PARAM, snapshot.toString()));
    }

    @Test
    void aFileThatIsNotASnapshotFailsTheStartAndIsLeftAsItIs() throws Exception {
        Path file = Files.writeString(dir.resolve("quotas.txt"), "# accounts\nacme 1200.00\n");
        assertThatThrownBy(() -> build(file)).isInstanceOf(IllegalStateException.class)
                .hasMessage("QuotaFilter.builder(): quotaSnapshot: " + file + ": is not a quota snapshot (its first "
                        + "line is not 'quotagate-quota-counters 1'); it is left as it is: remove it or choose another file");
        assertThat(Files.readString(file)).isEqualTo("# accounts\nacme 1200.00\n");

        Path empty = Files.createFile(dir.resolve("empty.txt"));
        build(empty).destroy();
        assertThat(Files.readAllLines(empty)).as("an empty file is an empty snapshot")
                .containsExactly("quotagate-quota-counters 1");
    }

    @Test
    void linksPlantedInAFolderOthersMayWriteAreNeverWrittenThrough() throws Exception {
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
        Path victim = Files.writeString(dir.resolve("victim.txt"), "the victim's own data\n");
        Path file = dir.resolve("quotas.txt");
        Path oldTemporary = Files.createSymbolicLink(dir.resolve("quotas.txt.tmp"), victim); // the name once written to
        List<String> warnings;
        try (LogCapture log = LogCapture.of(QuotaSnapshot.class, Level.WARNING);
             JettyServer server = start(file, Duration.ofHours(1))) {
            for (int i = 0; i < 3; i++) assertThat(get(server)).isEqualTo(200);
            Files.createSymbolicLink(file, victim); // planted while it runs: the write at the stop replaces the link
            warnings = log.messages();
        }
        assertThat(Files.readString(victim)).isEqualTo("the victim's own data\n");
        assertThat(Files.readSymbolicLink(oldTemporary)).isEqualTo(victim);
        assertThat(Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)).isTrue();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file, LinkOption.NOFOLLOW_LINKS)))
                .isEqualTo("rw-------");
        assertThat(Files.readAllLines(file)).containsExactly("quotagate-quota-counters 1",
                "monthly:acme:2027-03-01 3 " + MARCH_EXPIRY);
        assertThat(warnings).containsExactly("quotagate: the quota snapshot's folder " + dir + " is writable by "
                + "every user: anyone can replace or remove the snapshot; give it a folder of the service's own user");

        Files.delete(file);
        Files.createSymbolicLink(file, victim); // a link there at the start: refused, not read through
        assertThatThrownBy(() -> build(file)).isInstanceOf(IllegalStateException.class)
                .hasMessage("QuotaFilter.builder(): quotaSnapshot: " + file + ": is a symbolic link; each write would "
                        + "replace the link with a file, not write where it points: give the path of the file itself");
        assertThat(Files.readString(victim)).isEqualTo("the victim's own data\n");
    }

    @Test
    void aWriteThatFailsLeavesNoTemporaryFile() throws Exception {
        Path file = dir.resolve("quotas.txt");
        QuotaFilter filter = build(file);
        Files.createDirectory(file);
        Files.writeString(file.resolve("inside.txt"), "a folder in the way: the rename fails");
        try (LogCapture log = LogCapture.of(QuotaSnapshot.class, Level.WARNING)) {
            filter.destroy();
            assertThat(log.messages()).singleElement().asString()
                    .startsWith("quotagate: quota snapshot " + file + " not written: ");
        }
        try (Stream<Path> files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactly("quotas.txt");
        }
    }

    @Test
    void temporaryFilesOfAWriteACrashCutShortAreRemovedAtStart() throws Exception {
        Path left = Files.writeString(dir.resolve(".quotas.txt.0123456789abcdef.tmp"), "a write a crash cut short");
        Path notOurs = Files.writeString(dir.resolve(".quotas.txt.backup.tmp"), "not a name of ours");
        build(dir.resolve("quotas.txt")).destroy();
        assertThat(left).doesNotExist();
        assertThat(notOurs).hasContent("not a name of ours");
    }

    @Test
    void aSnapshotLargerThanATableCanHoldIsReadOnlyUpToItsBound() throws Exception {
        Path file = Files.write(dir.resolve("quotas.txt"), snapshot(3, "acme"));
        long size = 3L << 30; // more than a String can hold; sparse: a few KB on disk
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.seek(size);
            f.write(("\nmonthly:beta:2027-03-01 3 " + MARCH_EXPIRY + "\n").getBytes(StandardCharsets.UTF_8));
        }
        try (LogCapture log = LogCapture.of(QuotaSnapshot.class, Level.WARNING);
             JettyServer server = start(file, Duration.ofHours(1))) {
            assertThat(get(server, "acme")).isEqualTo(429);
            assertThat(get(server, "beta")).as("its line lies beyond the bound: not read").isEqualTo(200);
            assertThat(log.messages()).containsExactly("quotagate: quota snapshot " + file + ": 1 counter restored; "
                    + "the file is " + Files.size(file) + " bytes, more than a snapshot of tenants.max-tracked=10 "
                    + "counters can hold (10267 bytes, 1024 a line): the rest was not read");
        }
        assertThat(Files.readAllLines(file)).containsExactly("quotagate-quota-counters 1",
                "monthly:acme:2027-03-01 3 " + MARCH_EXPIRY, "monthly:beta:2027-03-01 1 " + MARCH_EXPIRY);
    }
}

package io.quotagate.tenant.testing;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipal;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A PostgreSQL server of the test's own, for tests that stop, restart or pause a database (the shared one on
 * 5432 is never touched): a cluster initialised in a temporary folder, its postmaster on a free port of
 * 127.0.0.1, run as the {@code postgres} user (PostgreSQL refuses root) through {@code runuser}, and ended by
 * its PID, never by name. {@link #pause()} sends the postmaster {@code SIGSTOP}: the server still accepts TCP
 * connections (the kernel's backlog) and never answers them, as a hung database does; {@link #close()}
 * always sends {@code SIGCONT} before ending it. Where the binaries or {@code runuser} are missing, the test
 * fails with the reason under {@code CI=true} and is skipped elsewhere, as {@link PostgresDatabase} does.
 */
public final class PostgresCluster implements AutoCloseable {
    private static final Path INSTALLATIONS = Path.of("/usr/lib/postgresql");

    private final Path bin;
    private final Path dir;
    private final int port;
    private long pid;

    private PostgresCluster(Path bin, Path dir, int port) {
        this.bin = bin;
        this.dir = dir;
        this.port = port;
    }

    /** A new cluster, started, with a database {@code tenants}. */
    public static PostgresCluster start() {
        Path bin = binaries();
        Path dir;
        try {
            dir = Files.createTempDirectory("quotagate-pg-");
            UserPrincipal postgres = dir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("postgres");
            Files.setOwner(dir, postgres);
        } catch (IOException e) {
            unavailable("cannot prepare a folder for a PostgreSQL cluster of the postgres user: " + e);
            throw new AssertionError("unreachable");
        }
        PostgresCluster cluster = new PostgresCluster(bin, dir, freePort());
        try {
            run(List.of("runuser", "-u", "postgres", "--", bin.resolve("initdb").toString(), "-D",
                    dir.resolve("data").toString(), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"));
            cluster.startPostmaster();
            try (Connection c = cluster.connect("postgres")) {
                c.createStatement().execute("create database tenants");
            }
        } catch (IOException | SQLException | RuntimeException e) {
            cluster.close();
            throw new AssertionError("cannot start a PostgreSQL cluster in " + dir + ": " + e.getMessage(), e);
        }
        return cluster;
    }

    /** The JDBC URL of the {@code tenants} database, with {@code parameters} (e.g. {@code loginTimeout=2}) if any. */
    public String jdbcUrl(String parameters) {
        return "jdbc:postgresql://127.0.0.1:" + port + "/tenants?user=postgres"
                + (parameters == null || parameters.isEmpty() ? "" : "&" + parameters);
    }

    /** The postmaster's port. */
    public int port() {
        return port;
    }

    /** The postmaster stops answering ({@code SIGSTOP}): connections are accepted and hang. */
    public void pause() {
        signal("STOP");
    }

    /** The postmaster answers again ({@code SIGCONT}). */
    public void resume() {
        signal("CONT");
    }

    /** Stops the server (fast shutdown: {@code SIGINT}) and waits until its postmaster has ended. */
    public void stop() {
        signal("CONT");
        signal("INT");
        awaitEnd(30);
    }

    /** Starts the stopped server again, on the same port, with the same data. */
    public void restart() {
        try {
            startPostmaster();
        } catch (IOException e) {
            throw new AssertionError("cannot restart the PostgreSQL cluster in " + dir + ": " + e.getMessage(), e);
        }
    }

    /** A connection to {@code database} (5 s connect and login timeouts). */
    public Connection connect(String database) throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", "postgres");
        p.setProperty("connectTimeout", "5");
        p.setProperty("loginTimeout", "5");
        return DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + port + "/" + database, p);
    }

    private void startPostmaster() throws IOException {
        Path log = dir.resolve("postgres.log");
        new ProcessBuilder("runuser", "-u", "postgres", "--", bin.resolve("postgres").toString(), "-D",
                dir.resolve("data").toString(), "-p", Integer.toString(port), "-k", dir.toString(),
                "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=200")
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        Path pidFile = dir.resolve("data").resolve("postmaster.pid");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        SQLException last = null;
        while (System.nanoTime() - deadline < 0) {
            try {
                if (Files.exists(pidFile)) {
                    List<String> lines = Files.readAllLines(pidFile, StandardCharsets.US_ASCII);
                    if (!lines.isEmpty() && !lines.get(0).isBlank()) {
                        pid = Long.parseLong(lines.get(0).trim());
                        try (Connection c = connect("postgres")) {
                            return;
                        } catch (SQLException e) {
                            last = e;
                        }
                    }
                }
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted", e);
            }
        }
        throw new IOException("PostgreSQL did not start within 60 s on port " + port + " (last: " + last + "); log: "
                + (Files.exists(log) ? Files.readString(log) : "none"));
    }

    private void signal(String name) {
        if (!running()) return;
        try {
            run(List.of("kill", "-" + name, Long.toString(pid)));
        } catch (IOException e) {
            throw new AssertionError("kill -" + name + " " + pid + ": " + e.getMessage(), e);
        }
    }

    /** Waits until the postmaster has ended (a zombie its parent has not reaped yet counts as ended). */
    private void awaitEnd(int seconds) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (running()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("PostgreSQL (pid " + pid + ") did not end within " + seconds + " s");
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while PostgreSQL (pid " + pid + ") ends", e);
            }
        }
    }

    private boolean running() {
        if (pid <= 0) return false;
        try {
            // /proc/<pid>/stat: "pid (comm) state ..."; Z is a zombie
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"), StandardCharsets.US_ASCII);
            int close = stat.lastIndexOf(')');
            return close < 0 || close + 2 >= stat.length() || stat.charAt(close + 2) != 'Z';
        } catch (IOException gone) {
            return false;
        }
    }

    /** Ends the server by its PID ({@code SIGCONT} first, then fast shutdown, then {@code SIGKILL}) and deletes its folder. */
    @Override
    public void close() {
        try {
            if (running()) {
                signal("CONT");
                signal("INT");
                try {
                    awaitEnd(30);
                } catch (AssertionError slow) {
                    signal("QUIT"); // immediate shutdown
                    try {
                        awaitEnd(10);
                    } catch (AssertionError slower) {
                        signal("KILL");
                        awaitEnd(10);
                    }
                }
            }
        } finally {
            try (Stream<Path> files = Files.walk(dir)) {
                List<Path> all = new ArrayList<>(files.sorted(Comparator.reverseOrder()).toList());
                for (Path p : all) Files.deleteIfExists(p);
            } catch (IOException ignored) {
                // a temporary folder left behind is the system's to clean
            }
        }
    }

    private static Path binaries() {
        if (!Files.isDirectory(INSTALLATIONS)) unavailable("no PostgreSQL installation under " + INSTALLATIONS);
        try (Stream<Path> versions = Files.list(INSTALLATIONS)) {
            Path bin = versions.map(v -> v.resolve("bin")).filter(b -> Files.isExecutable(b.resolve("postgres")))
                    .max(Comparator.comparing(Path::toString)).orElse(null);
            if (bin == null) unavailable("no postgres binary under " + INSTALLATIONS + "/*/bin");
            return bin;
        } catch (IOException e) {
            unavailable("cannot list " + INSTALLATIONS + ": " + e);
            throw new AssertionError("unreachable");
        }
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new AssertionError("no free port: " + e.getMessage(), e);
        }
    }

    private static void run(List<String> command) throws IOException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(command.get(0) + " did not end within 120 s");
            }
            if (p.exitValue() != 0) throw new IOException(String.join(" ", command) + " failed (" + p.exitValue() + "): " + out);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    private static void unavailable(String why) {
        String message = why + ": the outage tests need PostgreSQL's binaries and runuser (to run them as postgres)";
        if ("true".equalsIgnoreCase(System.getenv("CI"))) throw new AssertionError(message + " (CI=true: failing, not skipping)");
        Assumptions.abort(message + " (skipped on this machine; under CI=true this fails)");
    }
}

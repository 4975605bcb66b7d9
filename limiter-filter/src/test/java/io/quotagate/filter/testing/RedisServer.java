package io.quotagate.filter.testing;

import org.junit.jupiter.api.Assumptions;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Real Redis for integration tests, never a mock: the server at {@code 127.0.0.1:6379}
 * ({@link #shared()}), or a {@code redis-server} process of the test's own on a free port
 * ({@link #startOwn()}) that the test may kill and restart. When Redis is not there, a test fails
 * with a clear message if {@code CI=true}, and is skipped with that message otherwise: it never
 * passes without running. Commands go through a tiny RESP client, so users of this fixture need no
 * Redis client library.
 */
public final class RedisServer implements AutoCloseable {
    private static final int SHARED_PORT = 6379;
    /** Ports of this test's own servers are chosen from here up to the ephemeral range. */
    private static final int LOWEST_PORT = 10_000;
    private static final int START_ATTEMPTS = 3;

    private final int port;
    /** Arguments before the common ones (a config file must come first), then after them. */
    private final List<String> leading;
    private final List<String> trailing;
    /** The process' working directory (where a cluster node writes its nodes.conf), or null. */
    private final Path dir;
    private Process process;

    private RedisServer(int port, Process process) {
        this(port, List.of(), List.of(), null);
        this.process = process;
    }

    private RedisServer(int port, List<String> leading, List<String> trailing, Path dir) {
        this.port = port;
        this.leading = leading;
        this.trailing = trailing;
        this.dir = dir;
    }

    /** The Redis at 127.0.0.1:6379 (fails under CI, skips elsewhere, when it does not answer). */
    public static RedisServer shared() {
        RedisServer r = new RedisServer(SHARED_PORT, null);
        if (!r.answers()) unavailable("no Redis answers PING at 127.0.0.1:" + SHARED_PORT);
        return r;
    }

    /** A {@code redis-server} of this test's own on a free port, keeping nothing on disk. */
    public static RedisServer startOwn() throws IOException, InterruptedException {
        return startOwn(null, List.of(), List.of());
    }

    /**
     * A {@code redis-server} of this test's own on a free port, run in {@code dir}, with arguments
     * before the common ones (a config file, {@code --sentinel}) and after them (cluster options).
     */
    public static RedisServer startOwn(Path dir, List<String> leading, List<String> trailing)
            throws IOException, InterruptedException {
        requireInstalled("redis-server");
        for (int attempt = 1; ; attempt++) {
            RedisServer r = new RedisServer(freePort(), List.copyOf(leading), List.copyOf(trailing), dir);
            try {
                r.start();
                return r;
            } catch (Exited e) { // its port was taken between the choice and the bind: another port
                if (attempt == START_ATTEMPTS) throw e;
            }
        }
    }

    /** Fails under {@code CI=true}, and skips elsewhere, unless every program is on the PATH. */
    public static void requireInstalled(String... programs) {
        for (String p : programs) {
            if (!onPath(p)) unavailable(p + " is not installed (apt-get install redis-server redis-tools)");
        }
    }

    /**
     * A TCP port free now on 127.0.0.1, below the kernel's ephemeral range: an outgoing connection never
     * takes it, so a server may bind it later (a cluster's bus port) or again after a kill (a failover
     * test restarts its primary on its own port). A server should still bind it soon: another test may
     * pick it meanwhile, which {@link #startOwn} answers with another port.
     */
    public static int freePort() throws IOException {
        int below = ephemeralStart();
        for (int i = 0; i < 1_000; i++) {
            int port = ThreadLocalRandom.current().nextInt(LOWEST_PORT, below);
            try (ServerSocket s = new ServerSocket()) {
                s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
                return port;
            } catch (IOException taken) {
                // in use: try another
            }
        }
        throw new IOException("no free port in " + LOWEST_PORT + "-" + (below - 1) + " after 1,000 tries");
    }

    /** The first port of the kernel's ephemeral range ({@code net.ipv4.ip_local_port_range}), 32768 if unknown. */
    private static int ephemeralStart() {
        try {
            String range = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim();
            int start = Integer.parseInt(range.split("\\s+")[0]);
            return start > LOWEST_PORT + 1_000 ? start : 32_768;
        } catch (IOException | RuntimeException unknown) {
            return 32_768;
        }
    }

    private static void unavailable(String why) {
        String message = why + ": the Redis integration tests need a real Redis server";
        if ("true".equalsIgnoreCase(System.getenv("CI"))) throw new AssertionError(message + " (CI=true: failing, not skipping)");
        Assumptions.abort(message + " (skipped on this machine; under CI=true this fails)");
    }

    /** A key prefix no other test uses. */
    public static String randomPrefix() {
        return "qgtest-" + UUID.randomUUID().toString().substring(0, 12);
    }

    public int port() {
        return port;
    }

    /** {@code redis://127.0.0.1:<port>}. */
    public String uri() {
        return "redis://127.0.0.1:" + port;
    }

    /** The process id of this test's own server while it runs. */
    public long pid() {
        if (process == null) throw new IllegalStateException("not a server of this test's own");
        return process.pid();
    }

    /** Whether this test's own server process is running. */
    public boolean alive() {
        return process != null && process.isAlive();
    }

    /** Starts (or restarts, after {@link #kill()}) this test's own server on the same port. */
    public void start() throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("redis-server"));
        command.addAll(leading);
        command.addAll(List.of("--port", Integer.toString(port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no"));
        command.addAll(trailing);
        ProcessBuilder b = new ProcessBuilder(command).redirectErrorStream(true);
        if (dir != null) {
            b.directory(dir.toFile()).redirectOutput(dir.resolve("redis.log").toFile());
        } else {
            b.redirectOutput(ProcessBuilder.Redirect.DISCARD);
        }
        process = b.start();
        Process p = process;
        Await.until("redis-server answering on port " + port, () -> answers() || !p.isAlive());
        if (!p.isAlive()) throw new Exited(port, p.exitValue());
    }

    /** A {@code redis-server} that ended before it answered (its port taken, most likely). */
    static final class Exited extends IOException {
        Exited(int port, int code) {
            super("redis-server on port " + port + " exited with code " + code + " before answering PING");
        }
    }

    /** Kills this test's own server at once (SIGKILL, by its PID), as a crash would. */
    public void kill() throws InterruptedException {
        if (process == null) throw new IllegalStateException("not a server of this test's own");
        process.destroyForcibly();
        process.waitFor();
    }

    /** Freezes (SIGSTOP) or thaws (SIGCONT) this test's own server: connected, but answering nothing. */
    public void freeze(boolean frozen) throws IOException, InterruptedException {
        if (process == null) throw new IllegalStateException("not a server of this test's own");
        new ProcessBuilder("kill", frozen ? "-STOP" : "-CONT", Long.toString(process.pid())).start().waitFor();
    }

    /** Whether the server answers PING now. */
    public boolean answers() {
        try {
            return "PONG".equals(command("PING"));
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Runs one command and returns its reply: a status or bulk string, an integer as text, an array
     * as a list; an error reply throws.
     */
    public Object command(String... args) throws IOException {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(5_000);
            OutputStream out = s.getOutputStream();
            StringBuilder b = new StringBuilder().append('*').append(args.length).append("\r\n");
            for (String a : args) {
                b.append('$').append(a.getBytes(StandardCharsets.UTF_8).length).append("\r\n").append(a).append("\r\n");
            }
            out.write(b.toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
            return reply(new BufferedInputStream(s.getInputStream()));
        }
    }

    /** {@link #command} for an integer reply. */
    public long integer(String... args) throws IOException {
        return Long.parseLong((String) command(args));
    }

    /** A number of {@code INFO section}: the value of its line {@code field:value}. */
    public long info(String section, String field) throws IOException {
        String info = (String) command("INFO", section);
        for (String line : info.split("\r?\n")) {
            if (line.startsWith(field + ":")) return Long.parseLong(line.substring(field.length() + 1).trim());
        }
        throw new IllegalStateException("no " + field + " in INFO " + section);
    }

    /** Calls of one command since the last {@code CONFIG RESETSTAT}, from {@code INFO commandstats}. */
    public long calls(String commandName) throws IOException {
        String info = (String) command("INFO", "commandstats");
        String marker = "cmdstat_" + commandName.toLowerCase() + ":calls=";
        int i = info.indexOf(marker);
        if (i < 0) return 0;
        int end = info.indexOf(',', i);
        return Long.parseLong(info.substring(i + marker.length(), end));
    }

    private static Object reply(InputStream in) throws IOException {
        int type = in.read();
        String line = line(in);
        switch (type) {
            case '+', ':' -> {
                return line;
            }
            case '-' -> throw new IOException("Redis error: " + line);
            case '$' -> {
                int n = Integer.parseInt(line);
                if (n < 0) return null;
                byte[] data = in.readNBytes(n);
                line(in);
                return new String(data, StandardCharsets.UTF_8);
            }
            case '*' -> {
                int n = Integer.parseInt(line);
                List<Object> items = new ArrayList<>();
                for (int i = 0; i < n; i++) items.add(reply(in));
                return items;
            }
            default -> throw new IOException("unexpected reply type " + type);
        }
    }

    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) != '\r') {
            if (c < 0) throw new IOException("connection closed");
            b.write(c);
        }
        in.read(); // \n
        return b.toString(StandardCharsets.UTF_8);
    }

    private static boolean onPath(String program) {
        String path = System.getenv("PATH");
        if (path == null) return false;
        for (String dir : path.split(java.io.File.pathSeparator)) {
            if (Files.isExecutable(Path.of(dir, program))) return true;
        }
        return false;
    }

    /** Stops this test's own server; leaves the shared one alone. */
    @Override
    public void close() throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroyForcibly();
            process.waitFor();
        }
    }
}

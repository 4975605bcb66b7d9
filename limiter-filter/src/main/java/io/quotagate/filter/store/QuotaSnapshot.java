package io.quotagate.filter.store;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Keeps the local store's calendar quota counters across restarts: read from a file at start, written
 * to it every {@code interval} and when closed (the filter's {@code destroy()}). A process that is
 * killed loses the units counted since the last write, at most one interval's.
 *
 * <p>The file is text, one counter a line after a header: {@code <quota>:<tenant>:<period start>
 * <units used> <expiry, epoch ms>}. It is written to a temporary file beside it and moved over it in
 * one step, so a crash mid-write leaves the previous snapshot whole. Counters whose period has ended
 * (plus the grace) are neither written nor read back. A line that cannot be read is skipped and
 * logged; a file that is not a snapshot is ignored, logged, and replaced at the next write.
 *
 * <p>With a shared store the counters live in the store and need no snapshot.
 */
public final class QuotaSnapshot implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(QuotaSnapshot.class.getName());
    static final String HEADER = "quotagate-quota-counters 1";

    private final LocalQuotaCounters counters;
    private final Path file;
    private final Clock wall;
    private final ScheduledExecutorService writer;
    private volatile boolean closed;

    private QuotaSnapshot(LocalQuotaCounters counters, Path file, Duration interval, Clock wall) {
        this.counters = counters;
        this.file = file;
        this.wall = wall;
        this.writer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "quotagate-quota-snapshot");
            t.setDaemon(true);
            return t;
        });
        long period = interval.toNanos();
        writer.scheduleWithFixedDelay(this::writeLogged, period, period, TimeUnit.NANOSECONDS);
    }

    /**
     * Restores the counters of {@code store} from {@code file} (if it exists) and writes them back to it
     * every {@code interval} and on {@link #close()}.
     *
     * @param store    a local store ({@link BucketStore#local})
     * @param wall     the wall clock of the quotas (what has expired)
     * @throws IllegalArgumentException naming the setting if the store is not local, the interval is not
     *                                  positive, or the file's directory does not exist or cannot be written
     */
    public static QuotaSnapshot start(BucketStore store, Path file, Duration interval, Clock wall) {
        Objects.requireNonNull(file, "file");
        Objects.requireNonNull(wall, "wall");
        if (interval == null || interval.isZero() || interval.isNegative()) {
            throw new IllegalArgumentException("quotaSnapshot: the interval must be > 0, was " + interval);
        }
        if (!(store.quotaCounters().orElse(null) instanceof LocalQuotaCounters local)) {
            throw new IllegalArgumentException("quotaSnapshot: " + file + ": only for the local store; a shared "
                    + "store keeps the quota counters itself");
        }
        Path dir = file.toAbsolutePath().getParent();
        if (dir == null || !Files.isDirectory(dir) || !Files.isWritable(dir)) {
            throw new IllegalArgumentException("quotaSnapshot: " + file + ": the directory " + dir
                    + " does not exist or cannot be written");
        }
        read(local, file, wall.millis());
        return new QuotaSnapshot(local, file, interval, wall);
    }

    /** Writes the counters now (also done every interval and on close). */
    public void write() {
        long now = wall.millis();
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try {
            try (BufferedWriter w = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
                w.write(HEADER);
                w.newLine();
                for (Map.Entry<String, LocalQuotaCounters.Counter> e : counters.counters.entrySet()) {
                    LocalQuotaCounters.Counter c = e.getValue();
                    if (c.expiresAtMillis <= now) continue;
                    w.write(e.getKey() + " " + c.used.get() + " " + c.expiresAtMillis);
                    w.newLine();
                }
            }
            try {
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException notAtomic) {
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("quota snapshot " + file + " not written", e);
        }
    }

    private void writeLogged() {
        try {
            write();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "quotagate: " + e.getMessage() + ": " + e.getCause());
        }
    }

    /** Stops the periodic writes and writes once more. */
    @Override
    public void close() {
        if (closed) return;
        closed = true;
        writer.shutdownNow();
        try {
            writer.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        writeLogged();
    }

    static void read(LocalQuotaCounters counters, Path file, long nowMillis) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException first) {
            return; // the first start
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "quotagate: quota snapshot " + file + " not read, counting from 0: " + e);
            return;
        }
        if (lines.isEmpty() || !lines.get(0).equals(HEADER)) {
            LOG.log(System.Logger.Level.WARNING, "quotagate: " + file + " is not a quota snapshot ("
                    + HEADER + "); counting from 0, it is replaced at the next write");
            return;
        }
        int skipped = 0;
        for (int i = 1; i < lines.size(); i++) {
            String[] f = lines.get(i).split(" ");
            try {
                if (f.length != 3) throw new NumberFormatException("3 fields expected");
                long used = Long.parseLong(f[1]);
                long expires = Long.parseLong(f[2]);
                if (used < 0 || f[0].isEmpty()) throw new NumberFormatException("negative or empty");
                counters.restore(f[0], used, nowMillis, expires);
            } catch (NumberFormatException bad) {
                skipped++;
            }
        }
        if (skipped > 0) {
            LOG.log(System.Logger.Level.WARNING, "quotagate: " + file + ": " + skipped + " unreadable lines skipped");
        }
    }
}

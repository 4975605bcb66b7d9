package io.quotagate.filter.store;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Keeps the local store's calendar quota counters across restarts: read from a file at start, written
 * to it every {@code interval} and when closed (the filter's {@code destroy()}). A process that is
 * killed loses the units counted since the last write, at most one interval's.
 *
 * <p>The file is text, one counter a line after a header: {@code <quota>:<tenant>:<period start>
 * <units used> <expiry, epoch ms>}. Counters past their expiry (their period's end, the closed periods
 * kept for the usage export, and the grace) are neither written nor read back.
 *
 * <p><b>Reading</b> (at {@link #start}) goes line by line: a line that cannot be read (bytes that are
 * not UTF-8, fields that are not a counter, longer than {@value #MAX_LINE_BYTES} bytes) is skipped and
 * counted in the log, every other line is restored. At most {@link #maxBytes} bytes are read, what a
 * snapshot of a full table could hold many times over: a larger file is read up to that bound, logged,
 * and never loaded whole. A file that is there but must not be replaced fails {@code start} naming it
 * and the reason, and is left as it is: a directory, a symbolic link, not a regular file, unreadable
 * (permissions, an I/O error), or a file whose first line is not the header (not ours: an empty file
 * is an empty snapshot). Replacing those would destroy every count they hold, or a file that is not
 * a snapshot at all.
 *
 * <p><b>Writing</b> goes to a new file beside it, of an unpredictable name, created in one step
 * (never an existing file, never through a link) with owner-only permissions where the file system
 * has POSIX permissions; it is synced, then renamed over the snapshot in one step, so a crash
 * mid-write leaves the previous snapshot whole, and a link planted at the snapshot's path is
 * replaced, never written through. The folder must belong to the service's user and be writable by
 * no one else: whoever can write it can replace or remove the snapshot.
 *
 * <p>With a shared store the counters live in the store and need no snapshot.
 */
final class QuotaSnapshot implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(QuotaSnapshot.class.getName());
    static final String HEADER = "quotagate-quota-counters 1";
    /** The longest line read; a counter's line is under 200 bytes (a tenant id is at most 64 characters). */
    static final int MAX_LINE_BYTES = 1024;
    /**
     * The latest expiry a counter may have: its period (a month at most), the closed periods kept after it for
     * the usage export (36 at most) and the grace, from any zone; a larger one is a damaged line, which would
     * otherwise hold a place in the table for ever.
     */
    private static final long MAX_EXPIRY_AHEAD_MILLIS = Duration.ofDays(31L * 38).toMillis();
    private static final String TEMP_SUFFIX = ".tmp";
    private static final SecureRandom TEMP_NAMES = new SecureRandom();

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
     * @throws IllegalArgumentException naming the setting, the file and the reason if the store is not
     *                                  local, the interval is not positive, the file's directory does not
     *                                  exist or cannot be written, or the file is there but cannot be read
     *                                  or is not a snapshot (see the class comment); the file is then left
     *                                  as it is (counters read before the failure may have been restored)
     */
    static QuotaSnapshot start(BucketStore store, Path file, Duration interval, Clock wall) {
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
        warnIfOthersMayWrite(dir);
        read(local, file, wall.millis());
        removeLeftTemporaryFiles(file);
        return new QuotaSnapshot(local, file, interval, wall);
    }

    /** The most bytes read from a snapshot for a table of {@code capacity} counters. */
    static long maxBytes(int capacity) {
        return HEADER.length() + 1 + (long) capacity * MAX_LINE_BYTES;
    }

    /** Writes the counters now (also done every interval and on close). */
    public void write() {
        long now = wall.millis();
        Path tmp = file.resolveSibling(temporaryName(file));
        boolean moved = false;
        try {
            // CREATE_NEW: a file or a link already at this name fails the write instead of being
            // written through; the permissions are set by the same call, so no one can open it before
            try (FileChannel channel = FileChannel.open(tmp, Set.<OpenOption>of(StandardOpenOption.CREATE_NEW,
                    StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS), ownerOnly(tmp))) {
                Writer w = Channels.newWriter(channel, StandardCharsets.UTF_8);
                w.write(HEADER);
                w.write('\n');
                for (Map.Entry<String, LocalQuotaCounters.Counter> e : counters.counters.entrySet()) {
                    LocalQuotaCounters.Counter c = e.getValue();
                    if (c.expiresAtMillis <= now) continue;
                    w.write(e.getKey() + " " + c.used.get() + " " + c.expiresAtMillis + "\n");
                }
                w.flush();
                // on disk before the rename publishes it: a power loss must not leave an empty snapshot
                channel.force(true);
            }
            try {
                // rename(2): replaces whatever is at the path, a link included, without following it
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException notAtomic) {
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
            }
            moved = true;
            syncDirectory(tmp.toAbsolutePath().getParent());
        } catch (IOException e) {
            throw new UncheckedIOException("quota snapshot " + file + " not written", e);
        } finally {
            if (!moved) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException ignored) {
                    // the write's own failure is the one to report; a left file is removed at the next start
                }
            }
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

    /** {@code .<file name>.<16 random hex digits>.tmp}: no one can guess it to plant a link there first. */
    private static String temporaryName(Path file) {
        return "." + file.getFileName() + "." + String.format("%016x", TEMP_NAMES.nextLong()) + TEMP_SUFFIX;
    }

    private static boolean isTemporaryName(String name, Path file) {
        String prefix = "." + file.getFileName() + ".";
        return name.length() == prefix.length() + 16 + TEMP_SUFFIX.length() && name.startsWith(prefix)
                && name.endsWith(TEMP_SUFFIX)
                && name.substring(prefix.length(), prefix.length() + 16).chars().allMatch(c -> Character.digit(c, 16) >= 0);
    }

    private static FileAttribute<?>[] ownerOnly(Path path) {
        if (!path.getFileSystem().supportedFileAttributeViews().contains("posix")) return new FileAttribute<?>[0];
        return new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(
                Set.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE))};
    }

    /** Makes the rename durable; where a directory cannot be opened (Windows) the rename is all there is. */
    private static void syncDirectory(Path dir) {
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException | UnsupportedOperationException notSupported) {
            // best effort
        }
    }

    /** Temporary files of writes a crash interrupted: never renamed, never to be read. */
    private static void removeLeftTemporaryFiles(Path file) {
        Path dir = file.toAbsolutePath().getParent();
        try (DirectoryStream<Path> left = Files.newDirectoryStream(dir,
                p -> isTemporaryName(p.getFileName().toString(), file))) {
            for (Path p : left) Files.deleteIfExists(p); // a link is removed, not followed
        } catch (IOException | UncheckedIOException e) {
            LOG.log(System.Logger.Level.WARNING, "quotagate: quota snapshot " + file
                    + ": temporary files of an interrupted write not removed: " + e);
        }
    }

    private static void warnIfOthersMayWrite(Path dir) {
        try {
            Set<PosixFilePermission> p = Files.getPosixFilePermissions(dir);
            if (p.contains(PosixFilePermission.OTHERS_WRITE)) {
                LOG.log(System.Logger.Level.WARNING, "quotagate: the quota snapshot's folder " + dir
                        + " is writable by every user: anyone can replace or remove the snapshot; give it a "
                        + "folder of the service's own user");
            }
        } catch (IOException | UnsupportedOperationException notPosix) {
            // nothing to tell
        }
    }

    private static IllegalArgumentException refused(Path file, String reason) {
        return new IllegalArgumentException("quotaSnapshot: " + file + ": " + reason);
    }

    private static IllegalArgumentException unreadable(Path file, IOException e) {
        String reason = e instanceof AccessDeniedException ? "permission denied"
                : e instanceof FileSystemException fs && fs.getReason() != null ? fs.getReason()
                : e.toString();
        IllegalArgumentException failure = refused(file, "cannot be read (" + reason
                + "); it is left as it is: replacing it would lose the counts it holds");
        failure.initCause(e);
        return failure;
    }

    /**
     * Restores the counters in {@code file}, if there is one.
     *
     * @throws IllegalArgumentException if the file is there but is not a snapshot this may read and
     *                                  replace (see the class comment)
     */
    static void read(LocalQuotaCounters counters, Path file, long nowMillis) {
        BasicFileAttributes attributes;
        try {
            attributes = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException first) {
            return; // the first start
        } catch (IOException e) {
            throw unreadable(file, e);
        }
        if (attributes.isSymbolicLink()) {
            throw refused(file, "is a symbolic link; each write would replace the link with a file, not "
                    + "write where it points: give the path of the file itself");
        }
        if (attributes.isDirectory()) throw refused(file, "is a directory, not a file");
        if (!attributes.isRegularFile()) throw refused(file, "is not a regular file");
        long bound = maxBytes(counters.capacity());
        Lines lines = new Lines(counters, file, nowMillis);
        // NOFOLLOW_LINKS again: a link put there since the check above fails the open
        try (InputStream in = Files.newInputStream(file, LinkOption.NOFOLLOW_LINKS)) {
            byte[] chunk = new byte[64 * 1024];
            long total = 0;
            int n;
            while (total < bound && (n = in.read(chunk, 0, (int) Math.min(chunk.length, bound - total))) > 0) {
                total += n;
                for (int i = 0; i < n; i++) lines.accept(chunk[i]);
            }
            if (total >= bound && in.read() >= 0) {
                lines.truncated(bound, attributes.size());
            } else {
                lines.end(); // a last line without a newline (a file edited by hand) is read too
            }
        } catch (IOException e) {
            throw unreadable(file, e);
        }
        lines.log();
    }

    /** The lines of a snapshot, fed a byte at a time: at most {@link #MAX_LINE_BYTES} of one are held. */
    private static final class Lines {
        private final LocalQuotaCounters counters;
        private final Path file;
        private final long nowMillis;
        private final CharsetDecoder utf8 = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT);
        private final byte[] line = new byte[MAX_LINE_BYTES];
        private int length;
        private boolean tooLong;
        private long number;
        private long restored;
        private long skipped;
        private long firstSkipped;
        private long full;
        private String truncated;

        Lines(LocalQuotaCounters counters, Path file, long nowMillis) {
            this.counters = counters;
            this.file = file;
            this.nowMillis = nowMillis;
        }

        void accept(byte b) {
            if (b == '\n') {
                line();
            } else if (length < line.length) {
                line[length++] = b;
            } else {
                tooLong = true;
            }
        }

        void end() {
            if (length > 0 || tooLong) line();
        }

        void truncated(long bound, long size) {
            // the line cut at the bound is not read: its last number could be cut short
            truncated = "the file is " + size + " bytes, more than a snapshot of tenants.max-tracked="
                    + counters.capacity() + " counters can hold (" + bound + " bytes, " + MAX_LINE_BYTES
                    + " a line): the rest was not read";
        }

        private void line() {
            number++;
            int n = length > 0 && line[length - 1] == '\r' ? length - 1 : length;
            String text = tooLong ? null : decode(n);
            length = 0;
            tooLong = false;
            if (number == 1) {
                if (!HEADER.equals(text)) {
                    throw refused(file, "is not a quota snapshot (its first line is not '" + HEADER
                            + "'); it is left as it is: remove it or choose another file");
                }
                return;
            }
            if (text == null || !counter(text)) {
                if (skipped++ == 0) firstSkipped = number;
            }
        }

        private String decode(int n) {
            try {
                return utf8.reset().decode(ByteBuffer.wrap(line, 0, n)).toString();
            } catch (CharacterCodingException notUtf8) {
                return null;
            }
        }

        /** Restores {@code <key> <used> <expiry>}; false if the line is not one. */
        private boolean counter(String text) {
            int second = text.lastIndexOf(' ');
            int first = second > 0 ? text.lastIndexOf(' ', second - 1) : -1;
            if (first <= 0) return false;
            long used;
            long expires;
            try {
                used = Long.parseLong(text, first + 1, second, 10);
                expires = Long.parseLong(text, second + 1, text.length(), 10);
            } catch (NumberFormatException bad) {
                return false;
            }
            if (used < 0 || expires - nowMillis > MAX_EXPIRY_AHEAD_MILLIS) return false;
            if (counters.restore(text.substring(0, first), used, nowMillis, expires)) {
                if (expires > nowMillis) restored++;
            } else {
                full++;
            }
            return true;
        }

        void log() {
            if (number == 0) return; // an empty file: an empty snapshot
            StringBuilder problems = new StringBuilder();
            if (skipped > 0) {
                problems.append("; ").append(skipped).append(skipped == 1 ? " unreadable line" : " unreadable lines")
                        .append(" skipped (the first: line ").append(firstSkipped).append(')');
            }
            if (full > 0) {
                problems.append("; ").append(full).append(" not restored: the table of quota counters is full, "
                        + "raise tenants.max-tracked");
            }
            if (truncated != null) problems.append("; ").append(truncated);
            String message = "quotagate: quota snapshot " + file + ": " + restored
                    + (restored == 1 ? " counter restored" : " counters restored") + problems;
            LOG.log(problems.isEmpty() ? System.Logger.Level.INFO : System.Logger.Level.WARNING, message);
        }
    }
}

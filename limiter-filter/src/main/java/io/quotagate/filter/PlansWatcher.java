package io.quotagate.filter;

import io.quotagate.plans.InvalidPlansException;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Polls the plans file and reloads the filter when its content changes. Polling, not a
 * {@code WatchService}: it sees edits through symbolic links (a Kubernetes ConfigMap swaps a link),
 * works the same on every file system, and an unchanged file costs one small read per interval.
 *
 * <p>An invalid file, or one the running filter refuses ({@link QuotaControl#apply}: a new concurrency
 * group, an estimated route gone), is logged once with its reason, and the plans in force stay;
 * the next valid version is applied. Each poll reads no more than one byte past the plans file size
 * limit: enough to see every change a reload would read, never a whole oversized file.
 */
final class PlansWatcher implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(QuotaFilter.class.getName());

    private final Path file;
    private final long maxBytes;
    private final Runnable reload;
    private final ScheduledExecutorService timer;
    private byte[] lastSeen;

    /** @param maxBytes the plans file size limit (below {@code Integer.MAX_VALUE}) */
    PlansWatcher(Path file, Duration interval, long maxBytes, Runnable reload) {
        this.file = file;
        this.maxBytes = maxBytes;
        this.reload = reload;
        this.lastSeen = read();
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "quotagate-plans-watcher");
            t.setDaemon(true);
            return t;
        });
        long millis = Math.max(1, interval.toMillis());
        timer.scheduleWithFixedDelay(this::poll, millis, millis, TimeUnit.MILLISECONDS);
    }

    private void poll() {
        try {
            byte[] now = read();
            if (now == null || Arrays.equals(now, lastSeen)) return;
            lastSeen = now;
            reload.run();
            LOG.log(System.Logger.Level.INFO, "plans reloaded from " + file);
        } catch (InvalidPlansException | IllegalArgumentException e) {
            // IllegalArgumentException: a valid file the running filter cannot take (QuotaControl.apply says why)
            LOG.log(System.Logger.Level.WARNING, "plans file changed but is invalid, keeping the previous plans: " + e.getMessage());
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "plans reload from " + file + " failed, keeping the previous plans", e);
        }
    }

    /**
     * The file's bytes up to one past the limit, or null while it cannot be read (being replaced, say):
     * retried next time.
     */
    private byte[] read() {
        try (InputStream in = Files.newInputStream(file)) {
            return in.readNBytes((int) maxBytes + 1);
        } catch (IOException e) {
            return null;
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}

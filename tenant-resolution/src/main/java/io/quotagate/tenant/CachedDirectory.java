package io.quotagate.tenant;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * {@link TenantDirectory#cached}: the application's directory behind a bounded cache of contracts, asked
 * so that it can never hang a request.
 *
 * <ul>
 *   <li><b>A tenant the cache knows</b> is answered from its entry at once, however old, and never waits for
 *       the source. Once half the positive expiry has passed since the entry was read, its next request
 *       starts a read in the background; until that read returns, and for as long as the source fails, the
 *       entry's answer stands (a failed read is tried again on a request at least {@link #retryNanos} later).
 *       A read that brings an equal contract keeps the old instance, so the filter, which tells unchanged
 *       limits by identity, does not move the tenant's bucket. A found answer is dropped only when no request
 *       asked for it during the positive expiry (or by size, or by {@link #invalidate}).</li>
 *   <li><b>A tenant the cache does not know</b> (never seen, dropped, or "unknown" past its shorter expiry)
 *       starts a lookup, and the request waits for it at most {@code timeoutNanos}; past that, or if the
 *       lookup fails, or if {@code maxLookups} lookups are running already (a flood of made-up ids against a
 *       locked table), {@link #contractOf} throws {@link DirectoryUnavailable} at once: the filter answers
 *       such a tenant as its plans say. A lookup that answers late is cached all the same.</li>
 * </ul>
 *
 * <p>Lookups run on threads of this directory's own (daemon, at most {@code maxLookups}, ended after a
 * minute idle), never on a request's thread or the common pool; one lookup per tenant runs at a time (a
 * request finding one running waits for that one). Caffeine never runs the source, so its refresh
 * machinery never logs a failure: failures of background reads are logged here at most once per
 * {@value #LOG_INTERVAL_SECONDS} s, counted; failures of a request's lookup are the caller's to log.
 */
final class CachedDirectory implements TenantDirectory {
    private static final System.Logger LOG = System.getLogger(CachedDirectory.class.getName());
    static final long LOG_INTERVAL_SECONDS = 10;
    private static final long LOG_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(LOG_INTERVAL_SECONDS);
    /** Most a failed background read waits before the next request tries again. */
    private static final long MAX_RETRY_NANOS = TimeUnit.SECONDS.toNanos(5);
    private static final AtomicInteger POOLS = new AtomicInteger();

    /**
     * What the cache holds for a tenant: the source's answer (empty: unknown), when it was read, and after a
     * failed background read, when the next may start (0: none failed).
     */
    private record Entry(Optional<TenantContract> answer, long readAt, long retryAt) {
    }

    private final TenantDirectory source;
    private final Cache<String, Entry> cache;
    private final LongSupplier ticker;
    private final long refreshNanos;
    private final long retryNanos;
    private final long timeoutNanos;
    private final Semaphore slots;
    private final int maxLookups;
    private final Executor executor;
    /** The lookup running for each tenant: at most one, whoever started it (a request or a refresh). */
    private final ConcurrentMap<String, CompletableFuture<Optional<TenantContract>>> running = new ConcurrentHashMap<>();
    private final AtomicLong nextLog;
    private final LongAdder heldBack = new LongAdder();

    CachedDirectory(TenantDirectory source, long maximumSize, long positiveNanos, long negativeNanos,
                    long timeoutNanos, int maxLookups, LongSupplier nanoTicker) {
        this(source, maximumSize, positiveNanos, negativeNanos, timeoutNanos, maxLookups, nanoTicker,
                lookupThreads(maxLookups));
    }

    /** With the executor the lookups run on (tests run them on the calling thread, to see their order). */
    CachedDirectory(TenantDirectory source, long maximumSize, long positiveNanos, long negativeNanos,
                    long timeoutNanos, int maxLookups, LongSupplier nanoTicker, Executor executor) {
        this.source = source;
        this.ticker = nanoTicker;
        this.refreshNanos = Math.max(1, positiveNanos / 2);
        this.retryNanos = Math.min(MAX_RETRY_NANOS, refreshNanos);
        this.timeoutNanos = timeoutNanos;
        this.slots = new Semaphore(maxLookups);
        this.maxLookups = maxLookups;
        this.executor = executor;
        this.nextLog = new AtomicLong(nanoTicker.getAsLong());
        // maintenance on the calling thread: no common-pool wake-up on the request path; the source is never
        // called by Caffeine (no loader), so nothing here can block on it
        this.cache = Caffeine.newBuilder().maximumSize(maximumSize).executor(Runnable::run)
                .ticker(nanoTicker::getAsLong)
                .expireAfter(expiry(positiveNanos, negativeNanos))
                .build();
    }

    /** Daemon threads of this directory's own, at most {@code n}, each ended after a minute idle. */
    private static Executor lookupThreads(int n) {
        int pool = POOLS.incrementAndGet();
        AtomicInteger count = new AtomicInteger();
        // the semaphore admits at most n lookups: the queue never holds more than the few handed over while
        // a thread finishes the one before
        ThreadPoolExecutor threads = new ThreadPoolExecutor(n, n, 1, TimeUnit.MINUTES, new LinkedBlockingQueue<>(),
                r -> {
                    Thread t = new Thread(r, "quotagate-directory-" + pool + "-" + count.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        threads.allowCoreThreadTimeOut(true);
        return threads;
    }

    /**
     * A found answer lives while requests ask for it (each read gives it the positive expiry again): it is
     * what a tenant is served while the source cannot be read. "Unknown" lives its fixed, short expiry.
     */
    private static Expiry<String, Entry> expiry(long positiveNanos, long negativeNanos) {
        return new Expiry<>() {
            @Override
            public long expireAfterCreate(String key, Entry e, long now) {
                return e.answer().isPresent() ? positiveNanos : negativeNanos;
            }

            @Override
            public long expireAfterUpdate(String key, Entry e, long now, long remaining) {
                return e.answer().isPresent() ? positiveNanos : negativeNanos;
            }

            @Override
            public long expireAfterRead(String key, Entry e, long now, long remaining) {
                return e.answer().isPresent() ? positiveNanos : remaining;
            }
        };
    }

    @Override
    public Optional<String> planOf(String tenant) {
        Optional<TenantContract> c = contractOf(tenant);
        return c.isPresent() ? Optional.of(c.get().plan()) : Optional.empty();
    }

    /**
     * The cached answer at once (a read started in the background if it is due), or, for a tenant the
     * cache does not know, the source's answer within the timeout.
     *
     * @throws DirectoryUnavailable the source failed, did not answer within the timeout, or too many
     *                              lookups run already (its cause: the source's exception, if any)
     */
    @Override
    public Optional<TenantContract> contractOf(String tenant) {
        Entry e = cache.getIfPresent(tenant);
        if (e != null) {
            long now = ticker.getAsLong();
            if (now - e.readAt() >= refreshNanos && (e.retryAt() == 0 || now - e.retryAt() >= 0)) {
                lookup(tenant); // in the background; if no slot is free, a later request tries again
            }
            return e.answer();
        }
        CompletableFuture<Optional<TenantContract>> lookup = lookup(tenant);
        if (lookup == null) {
            throw new DirectoryUnavailable("tenant '" + tenant + "': all " + maxLookups
                    + " lookups of the tenant directory are running; not asked", null);
        }
        try {
            return lookup.get(timeoutNanos, TimeUnit.NANOSECONDS);
        } catch (TimeoutException late) {
            throw new DirectoryUnavailable("tenant '" + tenant + "': the tenant directory did not answer within "
                    + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms", null);
        } catch (ExecutionException failed) {
            Throwable cause = failed.getCause();
            throw new DirectoryUnavailable("tenant '" + tenant + "': the tenant directory failed: " + cause, cause);
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            throw new DirectoryUnavailable("tenant '" + tenant + "': interrupted while waiting for the tenant directory",
                    interrupted);
        }
    }

    /**
     * The lookup running for {@code tenant}, or one started now; null if none runs and every slot is taken.
     * The lookup caches what it reads, unless the tenant was invalidated meanwhile.
     */
    private CompletableFuture<Optional<TenantContract>> lookup(String tenant) {
        CompletableFuture<Optional<TenantContract>> running = this.running.get(tenant);
        if (running != null) return running;
        if (!slots.tryAcquire()) return null;
        CompletableFuture<Optional<TenantContract>> mine = new CompletableFuture<>();
        running = this.running.putIfAbsent(tenant, mine);
        if (running != null) {
            slots.release();
            return running;
        }
        try {
            executor.execute(() -> read(tenant, mine));
        } catch (RejectedExecutionException | Error refused) {
            slots.release();
            this.running.remove(tenant, mine);
            mine.completeExceptionally(refused);
        }
        return mine;
    }

    /** Runs on a lookup thread: asks the source, caches its answer, then lets the waiting requests go. */
    private void read(String tenant, CompletableFuture<Optional<TenantContract>> mine) {
        try {
            Optional<TenantContract> fresh;
            try {
                fresh = source.contractOf(tenant);
                if (fresh == null) throw new IllegalStateException("tenant '" + tenant + "': the directory answered null");
            } catch (RuntimeException | Error failure) {
                failed(tenant, mine, failure);
                mine.completeExceptionally(failure);
                return;
            }
            long now = ticker.getAsLong();
            // an invalidation while this read ran wins: it removed this lookup, and its answer may be the old one
            cache.asMap().compute(tenant, (t, old) -> {
                if (this.running.get(t) != mine) return old;
                if (old != null && old.answer().equals(fresh)) return new Entry(old.answer(), now, 0);
                return new Entry(fresh, now, 0);
            });
            this.running.remove(tenant, mine);
            mine.complete(fresh);
        } finally {
            slots.release();
        }
    }

    /**
     * A lookup that failed: a cached answer stands, and the next read waits {@link #retryNanos} (the source
     * is not asked again on every request); nothing is cached for a tenant the cache did not know.
     */
    private void failed(String tenant, CompletableFuture<Optional<TenantContract>> mine, Throwable failure) {
        long now = ticker.getAsLong();
        boolean[] stale = {false};
        cache.asMap().computeIfPresent(tenant, (t, old) -> {
            if (this.running.get(t) != mine) return old;
            stale[0] = true;
            long retryAt = now + retryNanos;
            return new Entry(old.answer(), old.readAt(), retryAt == 0 ? 1 : retryAt); // 0 means "none failed"
        });
        this.running.remove(tenant, mine);
        // a request's own lookup is logged by whoever waits for it; a background read has no one else
        if (stale[0]) logBackground(tenant, failure, now);
    }

    private void logBackground(String tenant, Throwable failure, long now) {
        long due = nextLog.get();
        if (now - due < 0 || !nextLog.compareAndSet(due, now + LOG_INTERVAL_NANOS)) {
            heldBack.increment();
            return;
        }
        long held = heldBack.sumThenReset();
        LOG.log(System.Logger.Level.WARNING, "tenant directory failed to refresh tenant " + tenant
                + "; its cached answer stands" + (held == 0 ? ""
                : " (and " + held + " refreshes more failed in the last " + LOG_INTERVAL_SECONDS
                + " s or longer, not logged)"), failure);
    }

    @Override
    public void invalidate(String tenant) {
        // the running lookup first: its answer, read before the change, must not be cached after it
        running.remove(tenant);
        cache.invalidate(tenant);
    }

    /**
     * The tenant could not be placed now: the directory failed, did not answer within the timeout, or too
     * many lookups run. Without a stack trace of its own (one is thrown per request of such a tenant); the
     * source's exception, if any, is its cause.
     */
    static final class DirectoryUnavailable extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        DirectoryUnavailable(String message, Throwable cause) {
            super(message, cause);
        }

        @Override
        public synchronized Throwable fillInStackTrace() {
            return this;
        }
    }
}

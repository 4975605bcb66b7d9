package io.quotagate.filter.store;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Ticker;
import io.github.bucket4j.TimeMeter;
import io.quotagate.plans.Bandwidth;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;

/**
 * {@link BucketStore#local}: assigned tenants' buckets in one bounded Caffeine cache, guests' (unknown
 * tenants, anonymous clients) in another, users' ({@code per-user}) and routes' own in tables of their
 * own (each bounded by {@code maxTracked}), the global bucket held for ever. A flood of made-up ids
 * fills and churns only the guest table; Caffeine's frequency-aware admission also keeps a busy guest
 * from being pushed out by one-off ids.
 *
 * <p><b>Expiry.</b> An idle bucket is dropped only once it would have refilled completely, so a
 * dropped bucket equals the fresh one that replaces it. Both tables expire entries a fixed time after
 * their last <em>write</em> ({@code 2 × keepNanos}), and a take rewrites an entry when its write is
 * older than half {@code keepNanos}: an entry then outlives its last take by at least
 * {@code 1.5 × keepNanos}, less the lag of {@link #recentNanos} (a millisecond, or however long a
 * thread stalls between reading the clock and publishing it: far below the half {@code keepNanos}
 * of slack, at least 30 s). {@code keepNanos} is the longest time any bucket seen needs to pay its
 * debt and refill (it only grows). Write-based expiry, unlike per-read (access or per-entry) expiry,
 * keeps Caffeine's read fast path: below half of {@code maxTracked} a lookup is one hash-map read,
 * with no read buffer, no reordering and no maintenance on the request thread.
 *
 * <p><b>One clock read per decision.</b> A clock read took 27 ns on the bench's machine, a tenth of
 * the filter's own work per request, and a decision needs the time once, to refill the bucket. So
 * the tables' ticker reads no clock: it answers {@link #recentNanos}, the latest time a bucket read
 * (to the millisecond). After a quiet spell that time is old, so a lookup may return an entry whose
 * expiry has passed. Such a bucket is full (it was idle for at least {@code 1.5 × keepNanos}), and
 * whatever then changes it re-times its entry with the fresh time: a take (below), a forced take
 * (debt) or a move to slower limits; each puts the entry back if Caffeine dropped it meanwhile. If a
 * newer bucket has replaced it by then (another request's lookup saw the expiry first), a take from
 * the old one is charged to the new one, so no admitted request goes uncounted. Writes that do not
 * follow a take (a new bucket, {@link #changed}) read the clock first.
 */
final class LocalBucketStore implements BucketStore {
    /** Before any bucket is seen; raised to the slowest refill of the buckets created. */
    private static final long INITIAL_KEEP_NANOS = TimeUnit.MINUTES.toNanos(1);
    /** Beyond this (≈ 100 years) a bucket is simply kept until evicted by size. */
    private static final long MAX_KEEP_NANOS = TimeUnit.DAYS.toNanos(36_500);

    /**
     * A bucket that also knows its entry: when it was last written (the start of its expiry), its id
     * and its table, so that what changes it re-times the entry itself. Fields of the bucket rather
     * than of a holder, so a lookup touches one object less.
     */
    private final class KeptBucket extends MonitorBucket {
        private final Cache<String, KeptBucket> table;
        private final String id;
        volatile long writtenNanos;

        KeptBucket(BucketLimits limits, Cache<String, KeptBucket> table, String id, long writtenNanos) {
            super(limits, timeMeter);
            this.table = table;
            this.id = id;
            this.writtenNanos = writtenNanos;
        }

        /** Takes, then (outside the monitor) rewrites the entry if its write is half its keep time old. */
        @Override
        public boolean tryTake(long units) {
            return kept(super.tryTake(units), units);
        }

        /** As {@link #tryTake}, with the wait of a refusal (one hold of the monitor). */
        @Override
        public long take(long units) {
            long wait = super.take(units);
            kept(wait == 0, units);
            return wait;
        }

        /** As {@link #take(long)}, at a time the store read before its lookup. */
        @Override
        long take(long units, long now) {
            long wait = super.take(units, now);
            kept(wait == 0, units);
            return wait;
        }

        /**
         * As {@link #take}, for a throttled request: taken without a wait, it keeps the entry as a take
         * does; taken into debt, it keeps the entry until the debt is paid and the bucket refilled, as
         * {@link #forceTake} does.
         */
        @Override
        public long reserve(long units, long maxWaitNanos) {
            long wait = super.reserve(units, maxWaitNanos);
            if (wait > 0 && wait <= maxWaitNanos) indebted(units);
            else kept(wait == 0, units);
            return wait;
        }

        private boolean kept(boolean taken, long units) {
            long recent = recentNanos; // the take just read the clock
            if (recent - writtenNanos >= keepNanos / 2) {
                KeptBucket held = rewrite(this, recent);
                // replaced while the take was under way: the units count on the bucket in the table
                if (taken && held != this) held.forceTake(units);
            }
            return taken;
        }

        /** Takes even into debt, then keeps the entry until the debt is paid and the bucket refilled. */
        @Override
        public void forceTake(long units) {
            super.forceTake(units);
            indebted(units);
        }

        /** After units taken into debt: re-times the entry; replaced meanwhile, the units count on the replacement. */
        private void indebted(long units) {
            KeptBucket held = retime(this);
            if (held != this && units > 0) held.forceTake(units);
        }
    }

    private final Cache<String, KeptBucket> tenants;
    private final Cache<String, KeptBucket> guests;
    private final Cache<String, KeptBucket> users;
    private final Cache<String, KeptBucket> routes;
    private final Cache<String, KeptBucket> routeGuests;
    private final ConcurrentMap<String, MonitorBucket> globals = new ConcurrentHashMap<>();
    private final QuotaClock clock;
    private final TimeMeter timeMeter;
    /** An idle entry is kept at least this long after its last use (entries expire 2 × this after a write). */
    private volatile long keepNanos = INITIAL_KEEP_NANOS;
    /** How far {@link #recentNanos} may trail the buckets' clock reads. */
    private static final long RECENT_GRANULARITY = TimeUnit.MILLISECONDS.toNanos(1);
    private static final VarHandle RECENT;
    /**
     * The latest time a bucket read, give or take {@link #RECENT_GRANULARITY}: the tables' time. It
     * never goes back (it moves by compare-and-set from the value a reader saw), and it is written once
     * a millisecond at most, so the cores reading it share its cache line.
     */
    private volatile long recentNanos;

    static {
        try {
            RECENT = MethodHandles.lookup().findVarHandle(LocalBucketStore.class, "recentNanos", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The calendar quotas' counters: a table of their own, never evicted with the buckets. */
    private final LocalQuotaCounters counters;

    LocalBucketStore(int maxTracked, QuotaClock clock) {
        if (maxTracked <= 0) throw new IllegalArgumentException("maxTracked must be > 0, was " + maxTracked);
        this.clock = Objects.requireNonNull(clock, "clock");
        this.timeMeter = new TimeMeter() {
            @Override
            public long currentTimeNanos() {
                long now = clock.nanoTime();
                long recent = recentNanos;
                if (now - recent >= RECENT_GRANULARITY) RECENT.compareAndSet(LocalBucketStore.this, recent, now);
                return now;
            }

            @Override
            public boolean isWallClockBased() {
                return false;
            }
        };
        this.recentNanos = clock.nanoTime();
        this.counters = new LocalQuotaCounters(maxTracked);
        this.tenants = table(maxTracked, this::tick);
        this.guests = table(maxTracked, this::tick);
        this.users = table(maxTracked, this::tick);
        this.routes = table(maxTracked, this::tick);
        this.routeGuests = table(maxTracked, this::tick);
    }

    /** The table of a tenant's, a guest's or a user's buckets. */
    private Cache<String, KeptBucket> tableOf(BucketKind kind) {
        return switch (kind) {
            case GUEST -> guests;
            case USER -> users;
            case ROUTE -> routes;
            case ROUTE_GUEST -> routeGuests;
            case TENANT, GLOBAL -> tenants;
        };
    }

    private static Cache<String, KeptBucket> table(int maxTracked, Ticker ticker) {
        return Caffeine.newBuilder()
                .maximumSize(maxTracked)
                .ticker(ticker)
                // maintenance (expiry, eviction) runs on the calling thread, amortised over writes:
                // the default hands it to the common pool, and waking a pool thread (unpark) cost
                // far more per request than the work itself (measured in the bench)
                .executor(Runnable::run)
                .expireAfterWrite(2 * INITIAL_KEEP_NANOS, TimeUnit.NANOSECONDS)
                .build();
    }

    @Override
    public java.util.Optional<QuotaCounters> quotaCounters() {
        return java.util.Optional.of(counters);
    }

    @Override
    public QuotaBucket bucketToSettle(BucketKind kind, String id, BucketLimits limits) {
        QuotaBucket kept = kind == BucketKind.GLOBAL ? globals.get(id) : tableOf(kind).getIfPresent(id);
        return kept != null ? kept : bucket(kind, id, limits);
    }

    @Override
    public QuotaBucket bucket(BucketKind kind, String id, BucketLimits limits) {
        if (kind == BucketKind.GLOBAL) {
            MonitorBucket g = globals.computeIfAbsent(id, k -> new MonitorBucket(limits, timeMeter));
            if (g.limits() != limits) g.moveTo(limits);
            return g;
        }
        return keptBucket(kind, id, limits);
    }

    /**
     * As {@code bucket(kind, id, limits).take(units)}, but the clock is read before the lookup. Linux reads
     * the TSC in order ({@code rdtscp}, or {@code lfence; rdtsc}), so a clock read waits for every load before
     * it: read after the lookup it followed the lookup's cache misses, read before it overlaps them, 11–16
     * ns a request (BENCHMARKS.md). The time is this thread's own read, made an instant before the take;
     * see {@link MonitorBucket#take(long, long)}.
     */
    @Override
    public long take(BucketKind kind, String id, BucketLimits limits, long units) {
        if (kind == BucketKind.GLOBAL) return bucket(kind, id, limits).take(units);
        long now = freshNanos();
        return keptBucket(kind, id, limits).take(units, now);
    }

    private KeptBucket keptBucket(BucketKind kind, String id, BucketLimits limits) {
        Cache<String, KeptBucket> table = tableOf(kind);
        KeptBucket b = table.getIfPresent(id);
        if (b == null) {
            // before the entry exists, so it never expires early; and outside the table's compute, as
            // changing the expiry runs Caffeine's maintenance, which must not run under an entry's lock
            keepAtLeast(nanosToFill(limits));
            long now = freshNanos(); // the ticker then dates the entry's write to now, not to the last take
            b = table.get(id, k -> new KeptBucket(limits, table, k, now));
        }
        // identity: a bucket carries the very limits instance it was built with or last moved to
        if (b.limits() != limits && b.moveTo(limits)) retime(b); // maybe slower limits: re-time its expiry
        return b;
    }

    @Override
    public void changed(BucketKind kind, String id) {
        if (kind == BucketKind.GLOBAL) return;
        KeptBucket b = tableOf(kind).getIfPresent(id);
        if (b != null) retime(b);
    }

    /**
     * A debt, or slower limits: keeps every entry long enough for this one, and restarts its expiry.
     *
     * @return the bucket the table now holds for the id: {@code b}, or a newer one
     */
    private KeptBucket retime(KeptBucket b) {
        keepAtLeast(idleNanos(b));
        return rewrite(b, freshNanos());
    }

    /**
     * Restarts the entry's expiry, keeping this very bucket: if Caffeine dropped it meanwhile (expired
     * by a time read before it was last changed, or evicted), it is put back, as it holds that change;
     * a newer bucket for the same id is never overwritten.
     *
     * @return the bucket the table now holds for the id: {@code b}, or the newer one
     */
    private static KeptBucket rewrite(KeptBucket b, long now) {
        return b.table.asMap().compute(b.id, (id, held) -> {
            if (held != null && held != b) return held;
            b.writtenNanos = now;
            return b;
        });
    }

    /** The tables' ticker: the latest time a bucket read ({@link #recentNanos}); no clock read of its own. */
    private long tick() {
        return recentNanos;
    }

    /** Reads the clock and publishes it in {@link #recentNanos}, as a bucket's read does. */
    private long freshNanos() {
        return timeMeter.currentTimeNanos();
    }

    /** Raises {@link #keepNanos} (never lowers it) and both tables' expiry with it. */
    private void keepAtLeast(long nanos) {
        long wanted = Math.min(nanos, MAX_KEEP_NANOS);
        if (wanted <= keepNanos) return;
        synchronized (this) {
            if (wanted <= keepNanos) return;
            // expiry first, then the rewrite threshold: an entry never expires before it is rewritten
            tenants.policy().expireAfterWrite().orElseThrow().setExpiresAfter(2 * wanted, TimeUnit.NANOSECONDS);
            guests.policy().expireAfterWrite().orElseThrow().setExpiresAfter(2 * wanted, TimeUnit.NANOSECONDS);
            users.policy().expireAfterWrite().orElseThrow().setExpiresAfter(2 * wanted, TimeUnit.NANOSECONDS);
            routes.policy().expireAfterWrite().orElseThrow().setExpiresAfter(2 * wanted, TimeUnit.NANOSECONDS);
            routeGuests.policy().expireAfterWrite().orElseThrow().setExpiresAfter(2 * wanted, TimeUnit.NANOSECONDS);
            keepNanos = wanted;
        }
    }

    /** The bucket held for this id, at whatever limits it has, or null (for tests: no lookup side effects). */
    MonitorBucket held(BucketKind kind, String id) {
        if (kind == BucketKind.GLOBAL) return globals.get(id);
        return tableOf(kind).getIfPresent(id);
    }

    /** Estimated number of assigned tenants' buckets held (for tests and metrics). */
    long tenantCount() {
        freshNanos(); // expiry by the time now, not by the last take's
        tenants.cleanUp();
        return tenants.estimatedSize();
    }

    /** Estimated number of guest buckets held (for tests and metrics). */
    long guestCount() {
        freshNanos();
        guests.cleanUp();
        return guests.estimatedSize();
    }

    /**
     * How long the bucket may stay idle before dropping it loses nothing: the time an empty bucket of
     * its current configuration needs to be full, plus the time to pay back a debt (a reconciled
     * request that cost more than it reserved). Measured from an access, when consumption can only
     * have taken it down to empty, never below: only reconciliation creates debt, and it reads the
     * bucket through the store again afterwards.
     */
    static long idleNanos(MonitorBucket bucket) {
        BucketLimits limits = bucket.limits();
        long nanos = nanosToFill(limits);
        long available = bucket.available();
        if (available >= 0) return nanos;
        double slowest = 0;
        for (Bandwidth b : limits.bandwidths()) {
            slowest = Math.max(slowest, (double) b.period().toNanos() / b.refill());
        }
        double debt = -(double) available * slowest;
        return debt + nanos >= Long.MAX_VALUE ? Long.MAX_VALUE : nanos + (long) Math.ceil(debt);
    }

    /** The longest time any bandwidth of an empty bucket needs to be full again. */
    static long nanosToFill(BucketLimits limits) {
        long max = 0;
        for (int i = 0; i < limits.bandwidths().size(); i++) {
            // a sliding window's counters are all gone a period and a sub-window after its last use
            max = Math.max(max, limits.nanosToReturn(i, limits.bandwidths().get(i).capacity()));
        }
        return max;
    }
}

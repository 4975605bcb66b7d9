package io.quotagate.filter.redis;

import io.github.bucket4j.BucketExceptions;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisException;
import io.quotagate.filter.store.StoreHealth;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntSupplier;

/**
 * Whether Redis answers, told apart from a key that is merely busy: one flag that the hot path reads
 * (one volatile read), flipped down by a failed operation or heartbeat and up by a heartbeat that
 * succeeds, each flip logged and counted once.
 *
 * <p>Failures are classified by <em>type</em>, never by message text ({@link #classify}):
 * <ul>
 *   <li>{@link Failure#CONTENTION}: bucket4j gave up its compare-and-swap after {@code max-retries}
 *       conflicts on one key. Redis answered every attempt; only that operation is answered locally.
 *       bucket4j 8.x signals it with {@code BucketExceptions.maxRetriesExceeded}, a
 *       {@link BucketExceptions.BucketExecutionException} of exactly that class built from a message
 *       and no cause; every other execution failure either wraps its cause (a Redis error) or is
 *       bucket4j's {@link io.github.bucket4j.TimeoutException}, a subclass.</li>
 *   <li>{@link Failure#SLOW}: a command timed out (Lettuce's {@link RedisCommandTimeoutException},
 *       bucket4j's or the JDK's timeout), or the thread waiting for it was interrupted. While other
 *       operations still succeed it is a slow moment (a burst, a GC pause) and that operation is answered
 *       locally; with no success for a while it is an outage.</li>
 *   <li>{@link Failure#OUTAGE}: any other failure Lettuce reports ({@link RedisException}): a refused
 *       or broken connection ({@code RedisConnectionException}), a command rejected while disconnected,
 *       an I/O error, an error reply such as {@code OOM} or {@code READONLY}. bucket4j's Lettuce proxy
 *       reports every failure of a command as one (it wraps any other cause in a {@code RedisException}).</li>
 *   <li>{@link Failure#VALUE}: Redis answered, but the answer concerns one key only: a value of another
 *       Redis type ({@code WRONGTYPE}, the error reply's code), or a failure with no Lettuce exception at
 *       all, such as a value bucket4j cannot read. Only that key is concerned ({@link ValueRepair}).</li>
 * </ul>
 */
final class RedisHealth implements StoreHealth {
    private static final System.Logger LOG = System.getLogger(RedisStore.class.getName());

    /** What a failed Redis operation means for the store. */
    enum Failure {
        /** Too many compare-and-swap conflicts on one key: Redis is up. */
        CONTENTION,
        /** A timeout: an outage only if nothing succeeded for a while. */
        SLOW,
        /** Redis cannot be reached. */
        OUTAGE,
        /** Redis answered, but one key's value is unusable: that key's trouble alone. */
        VALUE
    }

    private final RedisSettings settings;
    private final String redactedUri;
    private final IntSupplier instanceCount;
    private final long silenceForOutageNanos;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final LongAdder outages = new LongAdder();
    private final LongAdder fallbackDecisions = new LongAdder();
    private volatile boolean available;
    /**
     * Whether the outage under way is only silence: timeouts alone, the connection up (a frozen Redis, one
     * busy with a long command, a reply slower than {@code quota-timeout}). Calendar quotas keep waiting
     * for Redis then (a request it does not count in time gets 503), never counting on a local share.
     */
    private volatile boolean silent;
    private volatile long outageStartNanos;
    /** What Redis said of its persistence at the last check ({@link StoreHealth#persistence()}). */
    private volatile int persistence = PERSISTENCE_UNKNOWN;
    /** Whether the next successful heartbeat asks Redis about its persistence: at start and after an outage. */
    private volatile boolean persistenceDue = true;
    /**
     * When an operation last succeeded on Redis. A timeout with no success for
     * {@link #silenceForOutageNanos} is an outage.
     */
    private volatile long lastSuccessNanos = System.nanoTime();

    RedisHealth(RedisSettings settings, IntSupplier instanceCount) {
        this.settings = settings;
        this.redactedUri = RedisSettings.redact(settings.uri());
        this.instanceCount = instanceCount;
        // one hot key has a single update in flight (a shared script call, or bucket4j's batch under a
        // local allowance): allow several slow ones in a row
        this.silenceForOutageNanos = Math.max(settings.timeout().toNanos() * 10, Duration.ofMillis(500).toNanos());
    }

    /** What {@code e}, thrown by a Redis bucket operation, means. */
    static Failure classify(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            // the waiting thread was interrupted (a container stopping a stuck request), wrapped in a
            // RedisException by our await or bucket4j's: it says nothing of Redis, as a timeout does not
            if (t instanceof InterruptedException) return Failure.SLOW;
        }
        boolean timeout = false;
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof RedisCommandTimeoutException || t instanceof io.github.bucket4j.TimeoutException
                    || t instanceof java.util.concurrent.TimeoutException) {
                timeout = true;
            } else if (t instanceof RedisCommandExecutionException x && wrongType(x)) {
                return Failure.VALUE;
            } else if (t instanceof RedisException) {
                return Failure.OUTAGE;
            } else if (t.getClass() == BucketExceptions.BucketExecutionException.class && t.getCause() == null) {
                return timeout ? Failure.SLOW : Failure.CONTENTION;
            }
        }
        // no Lettuce exception: Redis answered and the answer could not be used (an IOException here is
        // bucket4j reading a value cut short, never the network, which Lettuce reports as RedisException)
        return timeout ? Failure.SLOW : Failure.VALUE;
    }

    /**
     * Whether Redis refused the command because the key holds a value of another type: told by the error
     * reply's code (its first word, which Redis defines per kind of error), not by the text after it.
     */
    static boolean wrongType(RedisCommandExecutionException e) {
        String m = e.getMessage();
        return m != null && m.startsWith("WRONGTYPE ");
    }

    /**
     * Takes note of a failed operation.
     *
     * @return true if Redis is (now) considered down; false if only this operation is to be answered locally
     */
    boolean failed(RuntimeException e) {
        Failure failure = classify(e);
        if (failure == Failure.CONTENTION || failure == Failure.VALUE) return false;
        if (failure == Failure.SLOW && System.nanoTime() - lastSuccessNanos <= silenceForOutageNanos) return false;
        markDown(e);
        return true;
    }

    /** Takes note of an operation that succeeded on Redis. */
    void succeeded() {
        long now = System.nanoTime();
        // at most one shared write per millisecond, not one per request. With a local allowance most
        // successes never reached Redis: a frozen Redis is then declared down by the heartbeat, whose
        // probe times out too
        if (now - lastSuccessNanos > 1_000_000) lastSuccessNanos = now;
    }

    /** Counts an operation answered from this instance's local buckets. */
    void answeredLocally() {
        fallbackDecisions.increment();
    }

    void markDown(Throwable cause) {
        if (closed.get()) return;
        boolean slow = classify(cause) == Failure.SLOW;
        synchronized (this) {
            if (!available) {
                if (!slow) silent = false; // a refused or broken connection now: a real outage
                return;
            }
            available = false;
            silent = slow;
            persistenceDue = true;
            outageStartNanos = System.nanoTime();
        }
        outages.increment();
        LOG.log(System.Logger.Level.WARNING, "quotagate: Redis at " + redactedUri + " failed (" + cause
                + "); answering from local buckets (" + failureMode() + ") until it answers again"
                + (slow ? "; calendar quotas still wait for Redis up to " + settings.quotaTimeout().toMillis()
                + " ms (503 past it), as it is slow, not gone" : ""));
    }

    /**
     * Whether Redis is down only in that it answers nothing in time while its connection stands: calendar
     * quotas are still counted on Redis then (or refused with 503), never on a local share, so a slow Redis
     * never bills more than the limit nor leaves a count other than what was admitted.
     */
    boolean silent() {
        return silent && !available;
    }

    /** A heartbeat succeeded: Redis answers (again). */
    void markUp() {
        lastSuccessNanos = System.nanoTime();
        long since;
        synchronized (this) {
            if (available) return;
            available = true;
            silent = false;
            since = outageStartNanos;
        }
        if (outages.sum() > 0) {
            LOG.log(System.Logger.Level.INFO, "quotagate: Redis at " + redactedUri + " answers again after "
                    + Duration.ofNanos(System.nanoTime() - since).toMillis()
                    + " ms; buckets are shared again (instances: " + instanceCount.getAsInt() + ")");
        }
    }

    /** Redis did not answer at start: counted as an outage, logged once. */
    void unreachableAtStart(Throwable cause) {
        outages.increment();
        outageStartNanos = System.nanoTime();
        LOG.log(System.Logger.Level.WARNING, "quotagate: Redis at " + redactedUri + " unreachable at start ("
                + cause + "); answering from local buckets (" + failureMode() + ") until it answers");
    }

    /**
     * From now on, failures are the store closing, not outages.
     *
     * @return false if it was closed already
     */
    boolean close() {
        return closed.compareAndSet(false, true);
    }

    boolean closed() {
        return closed.get();
    }

    private String failureMode() {
        return settings.onFailure() == RedisSettings.OnFailure.CLOSED ? "on-failure: closed, answering 503"
                : "1/" + instanceCount.getAsInt() + " of each quota";
    }

    @Override
    public boolean available() {
        return available;
    }

    @Override
    public long outages() {
        return outages.sum();
    }

    @Override
    public long fallbackDecisions() {
        return fallbackDecisions.sum();
    }

    @Override
    public int instanceCount() {
        return instanceCount.getAsInt();
    }

    @Override
    public int persistence() {
        return persistence;
    }

    /** Whether Redis's persistence is to be asked (at start, and after an outage: it may be another server now). */
    boolean persistenceDue() {
        return persistenceDue;
    }

    /**
     * Takes note of what Redis says of its persistence, logged when it changes: a Redis that keeps nothing
     * on disk loses the calendar quotas' counts with a restart (each instance then rebuilds those it saw).
     *
     * @param save       {@code CONFIG GET save}, or null if Redis refused to tell (CONFIG disabled)
     * @param appendonly {@code CONFIG GET appendonly}, or null
     * @param refusal    why Redis did not tell, or null
     */
    void persistence(String save, String appendonly, String refusal) {
        persistenceDue = false;
        int now = save == null || appendonly == null ? PERSISTENCE_UNKNOWN
                : "yes".equalsIgnoreCase(appendonly.trim()) || !save.isBlank() ? PERSISTENT : NOT_PERSISTENT;
        int before = persistence;
        persistence = now;
        boolean first = !persistenceAsked;
        persistenceAsked = true;
        if (!first && now == before) return;
        if (now == NOT_PERSISTENT) {
            LOG.log(System.Logger.Level.WARNING, "quotagate: Redis at " + redactedUri + " keeps nothing on disk (save \""
                    + save + "\", appendonly " + appendonly + "): a restart loses the calendar quotas' counts; each "
                    + "instance rebuilds the counters it has seen (see docs/redis.md, \"Redis losing its data\")");
        } else if (now == PERSISTENCE_UNKNOWN) {
            LOG.log(System.Logger.Level.INFO, "quotagate: cannot tell whether Redis at " + redactedUri
                    + " keeps its data on disk (" + refusal + "); calendar quotas that bill need it to (see "
                    + "docs/redis.md, \"Redis losing its data\")");
        }
    }

    /** Whether Redis was asked about its persistence once already (the first answer is logged whatever it is). */
    private volatile boolean persistenceAsked;
}

package io.quotagate.plans;

import java.time.Duration;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Where the buckets live ({@code store:} in the plans file): in this JVM, or in Redis so that several
 * instances enforce one quota. Plain values only: the Redis client is chosen by the filter module.
 *
 * @param type              {@link Type#LOCAL} (default) or {@link Type#REDIS}
 * @param uri               Redis URI ({@code redis://host:port}, {@code rediss://...},
 *                          {@code redis-sentinel://...}); null for a local store
 * @param prefix            first part of every Redis key ({@code <prefix>:<kind>:<id>})
 * @param timeout           how long one Redis command may take before the instance falls back
 * @param maxRetries        compare-and-swap retries of one bucket update before giving up
 * @param batching          whether concurrent requests on one bucket are combined into one Redis update
 *                          (must be true with a local allowance, which always batches)
 * @param onFailure         what to do while Redis is unreachable
 * @param heartbeat         how often this instance announces itself (and probes Redis while it is down)
 * @param instanceTtl       an instance not heard of for this long is no longer counted
 * @param localAllowance    when not null, each instance decides from its last view of a bucket and
 *                          synchronises with Redis only every so many units or so long (far fewer round
 *                          trips, a bounded overshoot); null: every decision is taken on Redis (exact)
 */
public record StoreSettings(Type type, String uri, String prefix, Duration timeout, int maxRetries, boolean batching,
                            OnFailure onFailure, Duration heartbeat, Duration instanceTtl, LocalAllowance localAllowance) {

    /** Default key prefix. */
    public static final String DEFAULT_PREFIX = "quotagate";
    /** Default Redis command timeout. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMillis(50);
    /** Default compare-and-swap retries. */
    public static final int DEFAULT_MAX_RETRIES = 4;
    /** Default heartbeat interval. */
    public static final Duration DEFAULT_HEARTBEAT = Duration.ofSeconds(2);
    /** Default time after which a silent instance stops being counted. */
    public static final Duration DEFAULT_INSTANCE_TTL = Duration.ofSeconds(10);
    /** What a prefix may contain: no spaces, and no braces (a Redis Cluster hash tag would pin every key to one slot). */
    public static final Pattern PREFIX = Pattern.compile("[A-Za-z0-9._:-]{1,64}");

    /** Where buckets live. */
    public enum Type {
        /** In this JVM: one instance, one quota. */
        LOCAL,
        /** In Redis, shared by every instance using the same prefix. */
        REDIS
    }

    /** Behaviour while Redis cannot be reached. */
    public enum OnFailure {
        /** Keep admitting from local buckets sized {@code quota / instanceCount} (default). */
        OPEN,
        /** Refuse limited requests with 503 and Retry-After until Redis answers again. */
        CLOSED
    }

    /**
     * A bounded local allowance ({@code store.local-allowance}): an instance admits from its own copy of a
     * bucket, taken at its last synchronisation with Redis, and synchronises again (sending the units it
     * admitted, and reading the shared state) before the units admitted since exceed {@code units} or once
     * {@code maxDelay} has passed. No instance sees another's unsynchronised units, so a shared bucket can
     * admit at most {@code instances × units} units more than its limit at any moment; that overshoot is a
     * debt on the shared bucket, repaid before anyone is admitted again, so the long-run rate stays exact.
     *
     * @param units    units of one bucket an instance may admit between synchronisations (&gt; 0)
     * @param maxDelay longest time between synchronisations of a bucket in use (&gt; 0)
     */
    public record LocalAllowance(long units, Duration maxDelay) {
        public LocalAllowance {
            Objects.requireNonNull(maxDelay, "maxDelay");
            if (units <= 0) throw new IllegalArgumentException("units must be > 0, was " + units);
            if (maxDelay.isZero() || maxDelay.isNegative()) throw new IllegalArgumentException("maxDelay must be > 0");
        }
    }

    public StoreSettings {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(prefix, "prefix");
        Objects.requireNonNull(timeout, "timeout");
        Objects.requireNonNull(onFailure, "onFailure");
        Objects.requireNonNull(heartbeat, "heartbeat");
        Objects.requireNonNull(instanceTtl, "instanceTtl");
        if (type == Type.REDIS && (uri == null || uri.isBlank())) throw new IllegalArgumentException("a Redis store needs a uri");
        if (!PREFIX.matcher(prefix).matches()) {
            throw new IllegalArgumentException("prefix must match " + PREFIX.pattern() + ", was '" + prefix + "'");
        }
        if (timeout.isZero() || timeout.isNegative()) throw new IllegalArgumentException("timeout must be > 0");
        if (maxRetries < 0) throw new IllegalArgumentException("maxRetries must be >= 0, was " + maxRetries);
        if (heartbeat.isZero() || heartbeat.isNegative()) throw new IllegalArgumentException("heartbeat must be > 0");
        if (localAllowance != null && !batching) {
            throw new IllegalArgumentException("a local allowance always batches: batching cannot be false with it");
        }
        if (instanceTtl.compareTo(heartbeat) <= 0) {
            throw new IllegalArgumentException("instanceTtl (" + instanceTtl + ") must be longer than heartbeat (" + heartbeat + ")");
        }
    }

    /** The default: buckets in this JVM. */
    public static StoreSettings local() {
        return new StoreSettings(Type.LOCAL, null, DEFAULT_PREFIX, DEFAULT_TIMEOUT, DEFAULT_MAX_RETRIES, true,
                OnFailure.OPEN, DEFAULT_HEARTBEAT, DEFAULT_INSTANCE_TTL, null);
    }

    /** A Redis store at {@code uri} with every other setting at its default. */
    public static StoreSettings redis(String uri) {
        return new StoreSettings(Type.REDIS, uri, DEFAULT_PREFIX, DEFAULT_TIMEOUT, DEFAULT_MAX_RETRIES, true,
                OnFailure.OPEN, DEFAULT_HEARTBEAT, DEFAULT_INSTANCE_TTL, null);
    }

    /** What a URI's user information ({@code user:password@}) becomes in logs and messages. */
    private static final Pattern CREDENTIALS = Pattern.compile("//[^@/]*@");
    /** The URI schemes Lettuce connects with: plain, TLS, and either through Sentinel. */
    private static final Pattern REDIS_URI = Pattern.compile("(redis|rediss|redis-sentinel|rediss-sentinel)://\\S+");

    /**
     * True if {@code uri} names a Redis server the store can connect to ({@code redis://},
     * {@code rediss://}, {@code redis-sentinel://}, {@code rediss-sentinel://}, then no blank). The
     * plans file and the example's {@code --redis} both check a URI with this.
     */
    public static boolean isRedisUri(String uri) {
        return uri != null && REDIS_URI.matcher(uri).matches();
    }

    /**
     * The URI with any user information (user name, password) replaced by {@code ***}, for logs and
     * error messages: {@code redis://user:secret@host:6379} becomes {@code redis://***@host:6379}.
     *
     * @param uri a Redis URI (not null)
     * @return the URI safe to show
     */
    public static String redact(String uri) {
        return CREDENTIALS.matcher(uri).replaceAll("//***@");
    }

    /** A copy with another Redis URI. */
    public StoreSettings withUri(String uri) {
        return new StoreSettings(type, uri, prefix, timeout, maxRetries, batching, onFailure, heartbeat, instanceTtl, localAllowance);
    }

    /** A copy with a local allowance ({@code null}: every decision on Redis). */
    public StoreSettings withLocalAllowance(LocalAllowance localAllowance) {
        return new StoreSettings(type, uri, prefix, timeout, maxRetries, batching, onFailure, heartbeat, instanceTtl, localAllowance);
    }

    /** A copy with another key prefix. */
    public StoreSettings withPrefix(String prefix) {
        return new StoreSettings(type, uri, prefix, timeout, maxRetries, batching, onFailure, heartbeat, instanceTtl, localAllowance);
    }

    /** A copy with another command timeout. */
    public StoreSettings withTimeout(Duration timeout) {
        return new StoreSettings(type, uri, prefix, timeout, maxRetries, batching, onFailure, heartbeat, instanceTtl, localAllowance);
    }

    /** A copy with batching on or off. */
    public StoreSettings withBatching(boolean batching) {
        return new StoreSettings(type, uri, prefix, timeout, maxRetries, batching, onFailure, heartbeat, instanceTtl, localAllowance);
    }

    /** A copy with another failure behaviour. */
    public StoreSettings withOnFailure(OnFailure onFailure) {
        return new StoreSettings(type, uri, prefix, timeout, maxRetries, batching, onFailure, heartbeat, instanceTtl, localAllowance);
    }

    /** A copy with another heartbeat interval and instance TTL. */
    public StoreSettings withHeartbeat(Duration heartbeat, Duration instanceTtl) {
        return new StoreSettings(type, uri, prefix, timeout, maxRetries, batching, onFailure, heartbeat, instanceTtl, localAllowance);
    }
}

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
 * @param onFailure         what to do while Redis is unreachable
 * @param heartbeat         how often this instance announces itself (and probes Redis while it is down)
 * @param instanceTtl       an instance not heard of for this long is no longer counted
 */
public record StoreSettings(Type type, String uri, String prefix, Duration timeout, int maxRetries, boolean batching,
                            OnFailure onFailure, Duration heartbeat, Duration instanceTtl) {

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
        if (instanceTtl.compareTo(heartbeat) <= 0) {
            throw new IllegalArgumentException("instanceTtl (" + instanceTtl + ") must be longer than heartbeat (" + heartbeat + ")");
        }
    }

    /** The default: buckets in this JVM. */
    public static StoreSettings local() {
        return new StoreSettings(Type.LOCAL, null, DEFAULT_PREFIX, DEFAULT_TIMEOUT, DEFAULT_MAX_RETRIES, true,
                OnFailure.OPEN, DEFAULT_HEARTBEAT, DEFAULT_INSTANCE_TTL);
    }

    /** A Redis store at {@code uri} with every other setting at its default. */
    public static StoreSettings redis(String uri) {
        return new StoreSettings(Type.REDIS, uri, DEFAULT_PREFIX, DEFAULT_TIMEOUT, DEFAULT_MAX_RETRIES, true,
                OnFailure.OPEN, DEFAULT_HEARTBEAT, DEFAULT_INSTANCE_TTL);
    }

    /** A copy with another key prefix. */
    public StoreSettings withPrefix(String prefix) {
        return new StoreSettings(type, uri, prefix, timeout, maxRetries, batching, onFailure, heartbeat, instanceTtl);
    }

    /** A copy with another command timeout. */
    public StoreSettings withTimeout(Duration timeout) {
        return new StoreSettings(type, uri, prefix, timeout, maxRetries, batching, onFailure, heartbeat, instanceTtl);
    }

    /** A copy with batching on or off. */
    public StoreSettings withBatching(boolean batching) {
        return new StoreSettings(type, uri, prefix, timeout, maxRetries, batching, onFailure, heartbeat, instanceTtl);
    }

    /** A copy with another failure behaviour. */
    public StoreSettings withOnFailure(OnFailure onFailure) {
        return new StoreSettings(type, uri, prefix, timeout, maxRetries, batching, onFailure, heartbeat, instanceTtl);
    }

    /** A copy with another heartbeat interval and instance TTL. */
    public StoreSettings withHeartbeat(Duration heartbeat, Duration instanceTtl) {
        return new StoreSettings(type, uri, prefix, timeout, maxRetries, batching, onFailure, heartbeat, instanceTtl);
    }
}

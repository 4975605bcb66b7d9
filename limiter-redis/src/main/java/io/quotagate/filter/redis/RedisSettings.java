package io.quotagate.filter.redis;

import io.quotagate.plans.InvalidPlansException;
import io.quotagate.plans.StoreSpec;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The settings of a {@link RedisStore}: where Redis is, the key prefix, the command timeout, a local
 * allowance, the behaviour while Redis is down, the heartbeat. {@code store.type: redis} in a plans
 * file gives them as the options under {@code store:}; {@link #of(StoreSpec)} reads and checks them there
 * (the plans module keeps them as written and knows no Redis), with errors that name the file, the line and
 * the field. Immutable; in code, start from {@link #of(String)} and change settings through {@link #from} or
 * the {@code withX} methods, so a new setting never breaks a caller.
 */
public final class RedisSettings {

    /** Default key prefix. */
    public static final String DEFAULT_PREFIX = "quotagate";
    /** Default Redis command timeout. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMillis(50);
    /**
     * Default of how long a request counted against a calendar quota waits for Redis's answer (at least
     * the command timeout).
     */
    public static final Duration DEFAULT_QUOTA_TIMEOUT = Duration.ofSeconds(2);
    /** Default compare-and-swap retries (bucket4j's, with a local allowance). */
    public static final int DEFAULT_MAX_RETRIES = 4;
    /** Default heartbeat interval. */
    public static final Duration DEFAULT_HEARTBEAT = Duration.ofSeconds(2);
    /** Default time after which a silent instance stops being counted. */
    public static final Duration DEFAULT_INSTANCE_TTL = Duration.ofSeconds(10);
    /** What a prefix may contain: no spaces, and no braces (a Redis Cluster hash tag would pin every key to one slot). */
    public static final Pattern PREFIX = Pattern.compile("[A-Za-z0-9._:-]{1,64}");

    /** The {@code store.type} of a Redis store. */
    public static final String TYPE = "redis";
    /** The options a {@code store:} of type redis may have, besides {@code type}. */
    public static final Set<String> OPTIONS = Set.of("uri", "prefix", "timeout", "quota-timeout", "max-retries",
            "on-failure", "heartbeat", "instance-ttl", "local-allowance");
    /**
     * Options a store of type redis no longer has, each with what a plans file that still sets one is told.
     * {@link RedisStoreProvider#options()} lets them through the check of option names, so that
     * {@link #of(StoreSpec)} refuses them with their reason rather than as unknown keys.
     */
    static final Map<String, String> REMOVED_OPTIONS = Map.of("batching", "removed: the store's script is faster on every"
            + " measured row (BENCHMARKS.md); delete the line (local-allowance keeps bucket4j's batching)");

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

    private final String uri;
    private final String prefix;
    private final Duration timeout;
    /** As set; null for the default: the longer of {@link #DEFAULT_QUOTA_TIMEOUT} and the timeout. */
    private final Duration quotaTimeout;
    private final int maxRetries;
    private final OnFailure onFailure;
    private final Duration heartbeat;
    private final Duration instanceTtl;
    private final LocalAllowance localAllowance;

    private RedisSettings(Builder b) {
        this.uri = b.uri;
        this.prefix = b.prefix;
        this.timeout = b.timeout;
        this.quotaTimeout = b.quotaTimeout;
        this.maxRetries = b.maxRetries;
        this.onFailure = b.onFailure;
        this.heartbeat = b.heartbeat;
        this.instanceTtl = b.instanceTtl;
        this.localAllowance = b.localAllowance;
        if (uri == null || uri.isBlank()) {
            throw new IllegalArgumentException("a Redis store needs a uri");
        }
        if (quotaTimeout != null && quotaTimeout.compareTo(timeout) < 0) {
            throw new IllegalArgumentException("quotaTimeout (" + quotaTimeout + ") must not be shorter than timeout ("
                    + timeout + ")");
        }
        if (instanceTtl.compareTo(heartbeat) <= 0) {
            throw new IllegalArgumentException("instanceTtl (" + instanceTtl + ") must be longer than heartbeat ("
                    + heartbeat + ")");
        }
    }

    /** A Redis store at {@code uri} with every other setting at its default. */
    public static RedisSettings of(String uri) {
        return new Builder().uri(uri).build();
    }

    /**
     * The settings a {@code store:} of type redis gives, each option checked as a plans file's fields are:
     * {@code uri} required and a form Lettuce connects with (shown without its password when refused),
     * {@code prefix} matching {@link #PREFIX}, periods with a unit, {@code max-retries} 1 to 100,
     * {@code on-failure} {@code open} or {@code closed}, {@code instance-ttl} longer than {@code heartbeat},
     * {@code local-allowance} with {@code units} and a {@code max-delay} of at most 1m; a removed option
     * ({@code batching}) refused with what to do instead.
     *
     * @throws InvalidPlansException naming the file, the line and the field ({@code store.uri: required})
     * @throws IllegalArgumentException if {@code spec} is not of type redis
     */
    public static RedisSettings of(StoreSpec spec) {
        if (!TYPE.equals(spec.type())) {
            throw new IllegalArgumentException("not a store of type " + TYPE + ": " + spec.type());
        }
        for (String option : spec.optionNames()) {
            String removed = REMOVED_OPTIONS.get(option);
            if (removed != null) throw spec.invalid(option, removed);
        }
        spec.checkOptionNames(OPTIONS);
        String uri = spec.string("uri").orElseThrow(() -> spec.invalid("uri", "required"));
        if (!isRedisUri(uri)) {
            throw spec.invalid("uri", "expected redis://host:port (or rediss://, redis-sentinel://,"
                    + " redis-cluster://host1:port1,host2:port2), was '" + redact(uri) + "'");
        }
        Builder s = from(of(uri));
        spec.matching("prefix", PREFIX).ifPresent(s::prefix);
        spec.period("timeout").ifPresent(s::timeout);
        Optional<Duration> quotaTimeout = spec.period("quota-timeout");
        if (quotaTimeout.isPresent()) {
            Duration timeout = s.timeout;
            if (quotaTimeout.get().compareTo(timeout) < 0) {
                throw spec.invalid("quota-timeout", "must not be shorter than store.timeout (" + timeout + "), was "
                        + quotaTimeout.get());
            }
            if (quotaTimeout.get().compareTo(Duration.ofMinutes(1)) > 0) {
                throw spec.invalid("quota-timeout", "must be at most 1m (a request thread waits it), was "
                        + quotaTimeout.get());
            }
            s.quotaTimeout(quotaTimeout.get());
        }
        spec.positive("max-retries", 100).ifPresent(retries -> s.maxRetries(retries.intValue()));
        s.onFailure(spec.choice("on-failure", OnFailure.class).orElse(OnFailure.OPEN));
        Duration heartbeat = spec.period("heartbeat").orElse(DEFAULT_HEARTBEAT);
        Duration ttl = spec.period("instance-ttl").orElse(DEFAULT_INSTANCE_TTL);
        if (ttl.compareTo(heartbeat) <= 0) {
            throw spec.invalid("instance-ttl", "must be longer than store.heartbeat (" + heartbeat + "), was " + ttl);
        }
        s.heartbeat(heartbeat).instanceTtl(ttl);
        spec.section("local-allowance").map(RedisSettings::localAllowance).ifPresent(s::localAllowance);
        return s.build();
    }

    private static LocalAllowance localAllowance(StoreSpec spec) {
        spec.checkOptionNames(Set.of("units", "max-delay"));
        long units = spec.positive("units", Integer.MAX_VALUE).orElseThrow(() -> spec.invalid("units", "required"));
        Duration maxDelay = spec.period("max-delay").orElseThrow(() -> spec.invalid("max-delay", "required"));
        // period() already refused 0 (and below), so only "above 1m" is left to check here
        if (maxDelay.compareTo(Duration.ofMinutes(1)) > 0) {
            throw spec.invalid("max-delay", "must be > 0 and at most 1m, was " + maxDelay);
        }
        return new LocalAllowance(units, maxDelay);
    }

    /** A builder starting from every setting of {@code prototype}. */
    public static Builder from(RedisSettings prototype) {
        return new Builder().uri(prototype.uri).prefix(prototype.prefix).timeout(prototype.timeout)
                .quotaTimeout(prototype.quotaTimeout).maxRetries(prototype.maxRetries).onFailure(prototype.onFailure)
                .heartbeat(prototype.heartbeat).instanceTtl(prototype.instanceTtl)
                .localAllowance(prototype.localAllowance);
    }

    /**
     * The Redis URI ({@code redis://host:port}, {@code rediss://...}, {@code redis-sentinel://...},
     * {@code redis-cluster://host1:port1,host2:port2}).
     */
    public String uri() {
        return uri;
    }

    /** The first part of every Redis key ({@code <prefix>:<kind>:<id>}). */
    public String prefix() {
        return prefix;
    }

    /** How long one Redis command may take before the instance falls back. */
    public Duration timeout() {
        return timeout;
    }

    /**
     * How long a request counted against a calendar quota waits for Redis's answer before it is refused
     * (503, never decided on the local counters: a slow call is not an outage, and a count that bills
     * must not grow past its limit because the machine is busy); if Redis counted it after all, the
     * units are given back when the late answer comes. At least {@link #timeout()}.
     */
    public Duration quotaTimeout() {
        if (quotaTimeout != null) return quotaTimeout;
        return timeout.compareTo(DEFAULT_QUOTA_TIMEOUT) > 0 ? timeout : DEFAULT_QUOTA_TIMEOUT;
    }

    /**
     * Compare-and-swap retries of one bucket update before giving up: bucket4j's, with a local allowance
     * (the store's script never retries).
     */
    public int maxRetries() {
        return maxRetries;
    }

    /** What to do while Redis is unreachable. */
    public OnFailure onFailure() {
        return onFailure;
    }

    /** How often this instance announces itself (and probes Redis while it is down). */
    public Duration heartbeat() {
        return heartbeat;
    }

    /** An instance not heard of for this long is no longer counted. */
    public Duration instanceTtl() {
        return instanceTtl;
    }

    /**
     * When not null, each instance decides from its last view of a bucket and synchronises with Redis
     * only every so many units or so long (far fewer round trips, a bounded overshoot), on bucket4j's
     * buckets with concurrent requests on one bucket combined into one update; null: every decision is
     * taken on Redis by the store's script (exact).
     */
    public LocalAllowance localAllowance() {
        return localAllowance;
    }

    /** What a URI's user information ({@code user:password@}) becomes in logs and messages. */
    private static final Pattern CREDENTIALS = Pattern.compile("//[^@/]*@");
    /** The URI schemes Lettuce connects with: plain, TLS, and either through Sentinel. */
    private static final Pattern REDIS_URI = Pattern.compile("(redis|rediss|redis-sentinel|rediss-sentinel)://\\S+");
    /**
     * A cluster's seed nodes, as no Lettuce URI can name several: {@code redis-cluster://} (or
     * {@code rediss-cluster://} for TLS), optional {@code user:password@}, then {@code host:port} pairs
     * separated by commas (a host name, an IPv4 address or a bracketed IPv6 one), an optional final slash.
     */
    private static final Pattern CLUSTER_URI = Pattern.compile(
            "rediss?-cluster://([^@/\\s]+@)?(?<seeds>SEED(,SEED)*)/?".replace("SEED",
                    "([A-Za-z0-9][A-Za-z0-9.-]*|\\[[0-9A-Fa-f:.]+\\]):[0-9]{1,5}"));

    /**
     * True if {@code uri} names a Redis server the store can connect to ({@code redis://},
     * {@code rediss://}, {@code redis-sentinel://}, {@code rediss-sentinel://}, then no blank) or a
     * Redis Cluster ({@link #isClusterUri}). {@code store.uri} and the example's {@code --redis} both
     * check a URI with this.
     */
    public static boolean isRedisUri(String uri) {
        return uri != null && (REDIS_URI.matcher(uri).matches() || isClusterUri(uri));
    }

    /**
     * True if {@code uri} names a Redis Cluster by its seed nodes:
     * {@code redis-cluster://[user:password@]host1:port1,host2:port2,...} ({@code rediss-cluster://}
     * with TLS). Any one reachable seed is enough; the client learns the rest of the topology.
     */
    public static boolean isClusterUri(String uri) {
        return uri != null && CLUSTER_URI.matcher(uri).matches();
    }

    /**
     * A cluster URI's seeds, each as the URI of that one node: {@code redis://} (or {@code rediss://}
     * for {@code rediss-cluster://}), the cluster URI's {@code user:password@} if any, {@code host:port}.
     * In the cluster URI's order.
     *
     * @throws IllegalArgumentException if {@code uri} is not a cluster URI
     */
    public static List<String> clusterNodeUris(String uri) {
        Matcher m = uri == null ? null : CLUSTER_URI.matcher(uri);
        if (m == null || !m.matches()) {
            throw new IllegalArgumentException("not a redis-cluster:// URI: " + (uri == null ? null : redact(uri)));
        }
        String node = (uri.startsWith("rediss-") ? "rediss://" : "redis://") + (m.group(1) == null ? "" : m.group(1));
        return Stream.of(m.group("seeds").split(",")).map(seed -> node + seed).toList();
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
    public RedisSettings withUri(String uri) {
        return from(this).uri(uri).build();
    }

    /** A copy with a local allowance ({@code null}: every decision on Redis). */
    public RedisSettings withLocalAllowance(LocalAllowance localAllowance) {
        return from(this).localAllowance(localAllowance).build();
    }

    /** A copy with another key prefix. */
    public RedisSettings withPrefix(String prefix) {
        return from(this).prefix(prefix).build();
    }

    /** A copy with another command timeout. */
    public RedisSettings withTimeout(Duration timeout) {
        return from(this).timeout(timeout).build();
    }

    /** A copy with another wait for a request counted against a calendar quota ({@link #quotaTimeout()}). */
    public RedisSettings withQuotaTimeout(Duration quotaTimeout) {
        return from(this).quotaTimeout(quotaTimeout).build();
    }

    /** A copy with another failure behaviour. */
    public RedisSettings withOnFailure(OnFailure onFailure) {
        return from(this).onFailure(onFailure).build();
    }

    /** A copy with another heartbeat interval and instance TTL. */
    public RedisSettings withHeartbeat(Duration heartbeat, Duration instanceTtl) {
        return from(this).heartbeat(heartbeat).instanceTtl(instanceTtl).build();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RedisSettings s && uri.equals(s.uri) && prefix.equals(s.prefix)
                && timeout.equals(s.timeout) && quotaTimeout().equals(s.quotaTimeout()) && maxRetries == s.maxRetries
                && onFailure == s.onFailure && heartbeat.equals(s.heartbeat) && instanceTtl.equals(s.instanceTtl)
                && Objects.equals(localAllowance, s.localAllowance);
    }

    @Override
    public int hashCode() {
        return Objects.hash(uri, prefix, timeout, quotaTimeout(), maxRetries, onFailure, heartbeat, instanceTtl,
                localAllowance);
    }

    @Override
    public String toString() {
        return "RedisSettings[uri=" + redact(uri) + ", prefix=" + prefix
                + ", timeout=" + timeout + ", quotaTimeout=" + quotaTimeout() + ", maxRetries=" + maxRetries + ", onFailure="
                + onFailure + ", heartbeat=" + heartbeat + ", instanceTtl=" + instanceTtl + ", localAllowance="
                + localAllowance + "]";
    }

    /**
     * Builds {@link RedisSettings}; each setting is checked as it is given, and {@link #build()} checks
     * those that span several (a URI is given, the quota timeout is not shorter than the timeout, the
     * instance TTL outlasts the heartbeat).
     */
    public static final class Builder {
        private String uri;
        private String prefix = DEFAULT_PREFIX;
        private Duration timeout = DEFAULT_TIMEOUT;
        private Duration quotaTimeout;
        private int maxRetries = DEFAULT_MAX_RETRIES;
        private OnFailure onFailure = OnFailure.OPEN;
        private Duration heartbeat = DEFAULT_HEARTBEAT;
        private Duration instanceTtl = DEFAULT_INSTANCE_TTL;
        private LocalAllowance localAllowance;

        private Builder() {
        }

        /** The Redis URI (required). */
        public Builder uri(String uri) {
            this.uri = uri;
            return this;
        }

        /** The first part of every Redis key, matching {@link #PREFIX} (default {@value #DEFAULT_PREFIX}). */
        public Builder prefix(String prefix) {
            Objects.requireNonNull(prefix, "prefix");
            if (!PREFIX.matcher(prefix).matches()) {
                throw new IllegalArgumentException("prefix must match " + PREFIX.pattern() + ", was '" + prefix + "'");
            }
            this.prefix = prefix;
            return this;
        }

        /** How long one Redis command may take, &gt; 0 (default {@link #DEFAULT_TIMEOUT}). */
        public Builder timeout(Duration timeout) {
            this.timeout = positive(timeout, "timeout");
            return this;
        }

        /**
         * How long a request counted against a calendar quota waits for Redis, at least the timeout
         * (default: {@link #DEFAULT_QUOTA_TIMEOUT}, or the timeout if that is longer); null for the default.
         */
        public Builder quotaTimeout(Duration quotaTimeout) {
            this.quotaTimeout = quotaTimeout == null ? null : positive(quotaTimeout, "quotaTimeout");
            return this;
        }

        /**
         * bucket4j's compare-and-swap retries of one bucket update with a local allowance, &gt;= 0 (default
         * {@value #DEFAULT_MAX_RETRIES}).
         */
        public Builder maxRetries(int maxRetries) {
            if (maxRetries < 0) throw new IllegalArgumentException("maxRetries must be >= 0, was " + maxRetries);
            this.maxRetries = maxRetries;
            return this;
        }

        /** What to do while Redis is unreachable (default {@link OnFailure#OPEN}). */
        public Builder onFailure(OnFailure onFailure) {
            this.onFailure = Objects.requireNonNull(onFailure, "onFailure");
            return this;
        }

        /** How often this instance announces itself, &gt; 0 (default {@link #DEFAULT_HEARTBEAT}). */
        public Builder heartbeat(Duration heartbeat) {
            this.heartbeat = positive(heartbeat, "heartbeat");
            return this;
        }

        /**
         * How long a silent instance is still counted, longer than the heartbeat (default
         * {@link #DEFAULT_INSTANCE_TTL}).
         */
        public Builder instanceTtl(Duration instanceTtl) {
            this.instanceTtl = Objects.requireNonNull(instanceTtl, "instanceTtl");
            return this;
        }

        /** A bounded local allowance, or null (the default) for every decision on Redis. */
        public Builder localAllowance(LocalAllowance localAllowance) {
            this.localAllowance = localAllowance;
            return this;
        }

        /**
         * The settings.
         *
         * @throws IllegalArgumentException if settings contradict each other (see the class comment)
         */
        public RedisSettings build() {
            return new RedisSettings(this);
        }

        private static Duration positive(Duration d, String what) {
            Objects.requireNonNull(d, what);
            if (d.isZero() || d.isNegative()) throw new IllegalArgumentException(what + " must be > 0");
            return d;
        }
    }
}

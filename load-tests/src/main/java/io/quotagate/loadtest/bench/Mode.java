package io.quotagate.loadtest.bench;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.redis.RedisSettings;
import io.quotagate.plans.Algorithm;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import io.quotagate.plans.StoreSpec;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlets.DoSFilter;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;
import org.eclipse.jetty.util.thread.Scheduler;

import java.io.IOException;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What stands in front of the benchmark endpoint. Every limit is far above what two cores can serve,
 * so every request is admitted and the modes differ only by the filter's own cost.
 */
enum Mode {
    BARE("bare", 1),
    /**
     * Bare Jetty fed the 10,000-tenant traffic, the baseline of the 10,000-tenant filter mode: its
     * ratios then measure the filter alone, whatever distinct header values cost Jetty itself (its
     * parser reuses a header line repeated on a connection).
     */
    BARE_10000_TENANTS("bare-10000-tenants", 10_000),
    QUOTAGATE_1_TENANT("quotagate-1-tenant", 1),
    QUOTAGATE_10000_TENANTS("quotagate-10000-tenants", 10_000),
    JETTY_DOSFILTER("jetty-dosfilter", 1),
    /**
     * The least any per-tenant limiter does, fed the 10,000-tenant traffic: one {@code ConcurrentHashMap}
     * lookup by {@code X-Tenant-Id} and one counter update. Jetty 12's DoSFilter tracks clients only by
     * address, so it cannot stand in at 10,000 tenants; this is the floor a per-tenant filter starts from.
     */
    COUNTER_MAP_10000_TENANTS("counter-map-10000-tenants", 10_000),
    /**
     * The tutorial's per-tenant limiter: a {@code ConcurrentHashMap<String, Bucket>} of bucket4j
     * buckets, one per tenant, never expired ({@link PeerFilters.Bucket4jMap}).
     */
    BUCKET4J_MAP_10000_TENANTS("bucket4j-map-10000-tenants", 10_000),
    /** resilience4j-ratelimiter: one {@code RateLimiter} per tenant from a {@code RateLimiterRegistry} ({@link PeerFilters.Resilience4jRegistry}). */
    RESILIENCE4J_10000_TENANTS("resilience4j-10000-tenants", 10_000),
    /** The local store at the Redis modes' 1,000 tenants, for comparison. */
    QUOTAGATE_1000_TENANTS("quotagate-1000-tenants", 1_000),
    /** The Redis store as configured by default: exact, the store's script (one call per request). */
    REDIS_1_TENANT("redis-1-tenant", 1),
    REDIS_1000_TENANTS("redis-1000-tenants", 1_000),
    /** The Redis store with a local allowance of {@link #ALLOWANCE} (bucket4j's buckets, batching). */
    REDIS_1_TENANT_ALLOWANCE("redis-1-tenant-allowance", 1),
    REDIS_1000_TENANTS_ALLOWANCE("redis-1000-tenants-allowance", 1_000);

    /** The modes run without {@code --redis}. */
    static final Set<Mode> DEFAULT = EnumSet.of(BARE, QUOTAGATE_1_TENANT, BARE_10000_TENANTS, QUOTAGATE_10000_TENANTS,
            JETTY_DOSFILTER, COUNTER_MAP_10000_TENANTS, BUCKET4J_MAP_10000_TENANTS, RESILIENCE4J_10000_TENANTS);
    /** The modes run with {@code --redis}: local store vs Redis store, exact (default) and with an allowance. */
    static final Set<Mode> WITH_REDIS = EnumSet.of(BARE, QUOTAGATE_1_TENANT, QUOTAGATE_1000_TENANTS, REDIS_1_TENANT,
            REDIS_1000_TENANTS, REDIS_1_TENANT_ALLOWANCE, REDIS_1000_TENANTS_ALLOWANCE);

    /** The local allowance of the {@code -allowance} modes: 20 units or 250 ms between synchronisations. */
    static final RedisSettings.LocalAllowance ALLOWANCE = new RedisSettings.LocalAllowance(20, java.time.Duration.ofMillis(250));

    static final String PLANS_YAML = BenchPlans.YAML;

    /** DoSFilter keeps a {@code long[maxRequestsPerSec]} per client: high, but not absurd. */
    static final int DOS_MAX_REQUESTS_PER_SEC = 1_000_000;

    private final String label;
    private final int tenants;

    Mode(String label, int tenants) {
        this.label = label;
        this.tenants = tenants;
    }

    /** The name in reports and JSON, e.g. {@code quotagate-1-tenant}. */
    String label() {
        return label;
    }

    /** How many distinct {@code X-Tenant-Id} values the load generator cycles through. */
    int tenants() {
        return tenants;
    }

    /**
     * The bare mode this mode's ratios are taken against: the one fed the same traffic if there is
     * one, else {@link #BARE}.
     */
    Mode baseline() {
        return tenants == BARE_10000_TENANTS.tenants ? BARE_10000_TENANTS : BARE;
    }

    /** Whether this mode's filter is a QuotaFilter (local or Redis store): the modes an algorithm applies to. */
    boolean quotagate() {
        return label.startsWith("quotagate-") || redis();
    }

    /** Whether this mode keeps its buckets in Redis. */
    boolean redis() {
        return name().startsWith("REDIS_");
    }

    /**
     * For a Redis mode, the local-store mode fed the same tenants (what its throughput is held
     * against); null for the others.
     */
    Mode local() {
        if (!redis()) return null;
        return tenants == QUOTAGATE_1_TENANT.tenants ? QUOTAGATE_1_TENANT : QUOTAGATE_1000_TENANTS;
    }

    /** Whether this mode's buckets are decided by the store's script (Redis, without an allowance). */
    boolean script() {
        return redis() && !label.endsWith("-allowance");
    }

    /**
     * The filter of this mode, ready for a servlet context, or empty for the bare modes.
     *
     * @param threadPrefix name prefix for any thread the filter starts, so its CPU counts as the server's
     * @param redisUri     the Redis of the Redis modes (null when not running them)
     */
    Optional<FilterHolder> filter(String threadPrefix, String redisUri) {
        return filter(threadPrefix, redisUri, Algorithm.TOKEN_BUCKET);
    }

    /** As {@link #filter(String, String)}, QuotaFilter's limit counted by {@code algorithm}. */
    Optional<FilterHolder> filter(String threadPrefix, String redisUri, Algorithm algorithm) {
        return newFilter(threadPrefix, redisUri, algorithm, tenants).map(f -> {
            FilterHolder holder = new FilterHolder(f);
            holder.setInitParameters(initParameters());
            return holder;
        });
    }

    /** The init-params the filter of this mode is installed with. */
    Map<String, String> initParameters() {
        return this == JETTY_DOSFILTER
                ? Map.of("maxRequestsPerSec", Integer.toString(DOS_MAX_REQUESTS_PER_SEC)) : Map.of();
    }

    /** A new filter of this mode, not yet initialised (see {@link #filter}), or empty for the bare modes. */
    Optional<Filter> newFilter(String threadPrefix, String redisUri) {
        return newFilter(threadPrefix, redisUri, Algorithm.TOKEN_BUCKET, tenants);
    }

    /**
     * As {@link #newFilter(String, String)}, for {@code tenants} tenants (whatever the label says) and with
     * QuotaFilter's limit counted by {@code algorithm} (the other filters are what they are: a bucket4j map stays
     * token buckets).
     */
    Optional<Filter> newFilter(String threadPrefix, String redisUri, Algorithm algorithm, int tenants) {
        String yaml = BenchPlans.yaml(algorithm, tenants);
        return switch (this) {
            case BARE, BARE_10000_TENANTS -> Optional.empty();
            case QUOTAGATE_1_TENANT, QUOTAGATE_10000_TENANTS, QUOTAGATE_1000_TENANTS -> {
                Plans plans = PlansFile.parse("bench-plans.yml", yaml);
                yield Optional.of(QuotaFilter.builder().plans(plans).build());
            }
            case REDIS_1_TENANT, REDIS_1000_TENANTS, REDIS_1_TENANT_ALLOWANCE, REDIS_1000_TENANTS_ALLOWANCE -> {
                if (redisUri == null) throw new IllegalStateException(label + " needs --redis URI");
                // a prefix of its own per mode and per bench: runs never share buckets; keys expire
                Map<String, Object> store = new LinkedHashMap<>();
                store.put("uri", redisUri);
                store.put("prefix", "bench-" + UUID.randomUUID().toString().substring(0, 8) + "-" + label);
                if (label.endsWith("-allowance")) {
                    store.put("local-allowance", Map.of("units", ALLOWANCE.units(), "max-delay", ALLOWANCE.maxDelay()));
                }
                Plans plans = PlansFile.parse("bench-plans.yml", yaml)
                        .withStore(StoreSpec.of(RedisSettings.TYPE, store));
                // the filter created the store from the plans: it closes it when the server stops
                yield Optional.of(QuotaFilter.builder().plans(plans).build());
            }
            case COUNTER_MAP_10000_TENANTS -> Optional.of(new CounterMapFilter());
            case BUCKET4J_MAP_10000_TENANTS -> Optional.of(new PeerFilters.Bucket4jMap());
            case RESILIENCE4J_10000_TENANTS -> Optional.of(new PeerFilters.Resilience4jRegistry());
            case JETTY_DOSFILTER -> Optional.of(new NamedSchedulerDoSFilter(threadPrefix + "dos-scheduler"));
        };
    }

    /** The mode with this label. */
    static Mode ofLabel(String label) {
        return Arrays.stream(values()).filter(m -> m.label.equals(label)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("unknown mode '" + label + "'; modes: "
                        + Arrays.stream(values()).map(Mode::label).collect(java.util.stream.Collectors.joining(", "))));
    }

    /** DoSFilter with its timeout scheduler thread named like the server's, so its CPU is counted. */
    private static final class NamedSchedulerDoSFilter extends DoSFilter {
        private final String schedulerName;

        NamedSchedulerDoSFilter(String schedulerName) {
            this.schedulerName = schedulerName;
        }

        @Override
        protected Scheduler startScheduler() throws ServletException {
            try {
                Scheduler scheduler = new ScheduledExecutorScheduler(schedulerName, false);
                scheduler.start();
                return scheduler;
            } catch (Exception e) {
                throw new ServletException(e);
            }
        }
    }

    /** One counter per {@code X-Tenant-Id} in a {@code ConcurrentHashMap} (the bench sends 10,000 ids). */
    private static final class CounterMapFilter extends HttpFilter {
        private final ConcurrentHashMap<String, AtomicLong> counters = new ConcurrentHashMap<>();

        @Override
        protected void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
                throws IOException, ServletException {
            String tenant = request.getHeader("X-Tenant-Id");
            if (tenant != null) counters.computeIfAbsent(tenant, t -> new AtomicLong()).incrementAndGet();
            chain.doFilter(request, response);
        }
    }
}

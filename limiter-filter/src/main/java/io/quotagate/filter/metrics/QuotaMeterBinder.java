package io.quotagate.filter.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.quotagate.filter.admission.Admission;
import io.quotagate.filter.redis.RedisStore;
import io.quotagate.filter.store.BucketStore;

import java.util.Objects;

/**
 * Registers quotagate's meters (names in the README) with a Micrometer registry. Every meter reads
 * the filter's own state; the binder counts nothing itself.
 *
 * <ul>
 *   <li>{@value #REQUESTS} — function counter, tags {@code tenant} (bounded top-N, others
 *       {@code other}), {@code plan}, {@code route}, {@code outcome} ({@code allowed}|{@code rejected}),
 *       {@code reason};</li>
 *   <li>{@value #GLOBAL_CAPACITY} and {@value #GLOBAL_AVAILABLE} — gauges of the global quota's
 *       smallest capacity and current tokens, when a global quota is configured;</li>
 *   <li>with a Redis store: {@value #STORE_FALLBACK} (function counter of bucket operations answered
 *       from local buckets), {@value #STORE_OUTAGES} (function counter of switches from Redis to local
 *       buckets), {@value #STORE_AVAILABLE} (gauge, 1 while on Redis) and {@value #STORE_INSTANCES}
 *       (gauge, instances counted by the heartbeat).</li>
 * </ul>
 */
public final class QuotaMeterBinder implements MeterBinder {
    /** Requests seen by the filter. */
    public static final String REQUESTS = "quotagate.requests";
    /** Capacity of the global quota (its smallest bandwidth). */
    public static final String GLOBAL_CAPACITY = "quotagate.global.capacity";
    /** Tokens available now in the global quota. */
    public static final String GLOBAL_AVAILABLE = "quotagate.global.available";

    /** Bucket operations answered from local buckets instead of Redis. */
    public static final String STORE_FALLBACK = "quotagate.store.fallback";
    /** Times this instance switched from Redis to local buckets. */
    public static final String STORE_OUTAGES = "quotagate.store.outages";
    /** 1 while buckets are in Redis, 0 during an outage. */
    public static final String STORE_AVAILABLE = "quotagate.store.available";
    /** Instances sharing the Redis store, from the heartbeat. */
    public static final String STORE_INSTANCES = "quotagate.store.instances";

    private final RequestStatistics statistics;
    private final Admission admission;
    private final BucketStore store;

    /**
     * @param statistics the filter's counters ({@code QuotaFilter.statistics()})
     * @param admission  the filter's admission core ({@code QuotaFilter.admission()})
     */
    public QuotaMeterBinder(RequestStatistics statistics, Admission admission) {
        this(statistics, admission, null);
    }

    /**
     * @param statistics the filter's counters ({@code QuotaFilter.statistics()})
     * @param admission  the filter's admission core ({@code QuotaFilter.admission()})
     * @param store      the filter's store ({@code QuotaFilter.store()}); a Redis store adds the
     *                   {@code quotagate.store.*} meters; null for none
     */
    public QuotaMeterBinder(RequestStatistics statistics, Admission admission, BucketStore store) {
        this.statistics = Objects.requireNonNull(statistics, "statistics");
        this.admission = Objects.requireNonNull(admission, "admission");
        this.store = store;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        statistics.onCell(cell -> FunctionCounter.builder(REQUESTS, cell, RequestStatistics.Cell::count)
                .description("Requests seen by the quota filter, by tenant (top-N, others as 'other'), plan, route, outcome and reason")
                .baseUnit("requests")
                .tag("tenant", cell.tenant())
                .tag("plan", cell.plan())
                .tag("route", cell.route())
                .tag("outcome", cell.outcome().tag())
                .tag("reason", cell.reason())
                .register(registry));
        if (admission.hasGlobalQuota()) {
            Gauge.builder(GLOBAL_CAPACITY, admission, a -> a.globalCapacity())
                    .description("Capacity of the global quota shared by all tenants (smallest bandwidth)")
                    .baseUnit("units")
                    .register(registry);
            Gauge.builder(GLOBAL_AVAILABLE, admission, a -> a.globalAvailableTokens())
                    .description("Units available now in the global quota")
                    .baseUnit("units")
                    .register(registry);
        }
        if (store instanceof RedisStore redis) {
            FunctionCounter.builder(STORE_FALLBACK, redis, RedisStore::fallbackDecisions)
                    .description("Bucket operations answered from local buckets (quota / instances) instead of Redis")
                    .baseUnit("operations")
                    .register(registry);
            FunctionCounter.builder(STORE_OUTAGES, redis, RedisStore::outages)
                    .description("Times this instance lost Redis and switched to local buckets")
                    .register(registry);
            Gauge.builder(STORE_AVAILABLE, redis, r -> r.redisAvailable() ? 1 : 0)
                    .description("1 while the buckets are in Redis, 0 while answering from local buckets")
                    .register(registry);
            Gauge.builder(STORE_INSTANCES, redis, RedisStore::instanceCount)
                    .description("Instances sharing the Redis store (heartbeat; last known value during an outage)")
                    .register(registry);
        }
    }
}

package io.quotagate.filter.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.quotagate.filter.signals.QuotaEvent;
import io.quotagate.filter.signals.SignalCounts;
import io.quotagate.filter.status.ConcurrencyView;
import io.quotagate.filter.status.LimitsStatus;
import io.quotagate.filter.status.Reason;
import io.quotagate.filter.store.BucketStore;

import io.quotagate.filter.store.StoreHealth;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Registers quotagate's meters (names and tags in docs/metrics.md) with a Micrometer registry. Every
 * meter reads the filter's own state; the binder counts nothing itself.
 *
 * <ul>
 *   <li>{@value #REQUESTS}: function counter, tags {@code tenant} (bounded top-N, others
 *       {@code other}), {@code plan}, {@code route}, {@code outcome} ({@code allowed}|{@code rejected}),
 *       {@code reason};</li>
 *   <li>{@value #INFLIGHT}: gauge per concurrency group and tenant tag (the named tenants, and
 *       {@code other} for the rest); {@value #QUEUED}: gauge per group; {@value #CONCURRENCY_LIMIT}:
 *       gauge per adaptive group ({@code groups.<g>.adaptive}, only those), its limit now;</li>
 *   <li>the tenants named change with recent traffic ({@link StatisticsView}): when a tenant loses
 *       its name its {@value #REQUESTS} counters and {@value #INFLIGHT} gauges are removed from the
 *       registry ({@link MeterRegistry#remove(Meter)}), so the series stay bounded over time too; if
 *       it is named again later, its counters start again from 0 (a counter reset, which
 *       {@code rate()} and {@code increase()} handle);</li>
 *   <li>{@value #QUEUE_WAIT}: timer per group and outcome ({@code admitted}|{@code timed_out}),
 *       with a percentile histogram: {@code _bucket} series in Prometheus, so p50/p95 come from
 *       {@code histogram_quantile} over the buckets summed across instances (client-side percentiles
 *       could not be aggregated); registries without histograms get p50/p95 gauges of this instance;</li>
 *   <li>{@value #COST_RESERVED} and {@value #COST_ACTUAL}: distribution summaries per route of the
 *       units reserved and really used by requests whose application reported an actual cost;</li>
 *   <li>{@value #GLOBAL_CAPACITY} and {@value #GLOBAL_AVAILABLE}: gauges of the global quota's
 *       smallest capacity and current tokens (0 while none is in force);</li>
 *   <li>{@value #PLAN_CAPACITY}: gauge per {@code plan} of the plans at bind time, the smallest capacity
 *       in force (NaN once a plan is gone);</li>
 *   <li>with a shared store: {@value #LIMITS_VERSION}, {@value #LIMITS_FILE_AGREES},
 *       {@value #LIMITS_REACHABLE} (gauges) and {@value #LIMITS_REFUSED} (function counter) of the
 *       shared limits record;</li>
 *   <li>with a Redis store: {@value #STORE_FALLBACK} (function counter of bucket operations answered
 *       from local buckets), {@value #STORE_OUTAGES} (function counter of switches from Redis to local
 *       buckets), {@value #STORE_AVAILABLE} (gauge, 1 while on Redis), {@value #STORE_INSTANCES}
 *       (gauge, instances counted by the heartbeat) and {@value #STORE_PERSISTENCE} (gauge: 1 if Redis keeps
 *       its data on disk, 0 if it keeps nothing, -1 if it cannot be told);</li>
 *   <li>{@value #QUOTA_LIMIT}: gauge per {@code plan} and {@code quota} of the plans' calendar quotas at
 *       bind time (NaN once gone); {@value #QUOTA_USED}: gauge per named {@code tenant} (the same
 *       bounded top-N as {@value #REQUESTS}, registered and removed with its name) and {@code quota} of
 *       the plan it was named under: units used in the current period (NaN when no longer its quota);
 *       {@value #QUOTA_USAGE}: the same tenants and quotas, the units used over the limit in force of the
 *       tenant's own quota (0 to 1, above 1 only after requests settled at more than they reserved): a
 *       series that exists from the tenant's first request, so an alert on it fires at its first sample.
 *       Refusals by a quota are {@value #REQUESTS} with {@code reason="quota"};</li>
 *   <li>{@value #SHADOW_REJECTIONS}: function counter per {@code reason}, the requests shadow mode
 *       let through although the limits would have refused them;</li>
 *   <li>{@value #SCOPED_REFUSALS}: counter per {@code route} and {@code scope} ({@code per-user} for the
 *       plan's bucket of a user; {@code tenant}, {@code user}, {@code client-address} for the route's own),
 *       the requests such a bucket refused; registered at the first one;</li>
 *   <li>{@value #EVENTS}: function counter per event {@code type} ({@code near_limit}, {@code exhausted},
 *       {@code throttled_for_long}, {@code recovered}, {@code global_near_limit}, {@code store_fallback}), the
 *       quota events raised; {@value #EVENTS_DROPPED}: function counter per {@code listener} and
 *       {@code reason} ({@link SignalCounts.Drop}), the events not delivered: dropped by the filter's full
 *       queue ({@code all}), by a webhook's full queue, given up or refused by its receiver
 *       ({@code webhook}), or thrown on by an application listener ({@code application}).</li>
 * </ul>
 */
public final class QuotaMeterBinder implements MeterBinder {
    /** Requests seen by the filter. */
    public static final String REQUESTS = "quotagate.requests";
    /** Requests of a concurrency group in flight. */
    public static final String INFLIGHT = "quotagate.inflight";
    /** Requests waiting in a concurrency group's queue. */
    public static final String QUEUED = "quotagate.queued";
    /** The limit an adaptive concurrency group applies now on this instance. */
    public static final String CONCURRENCY_LIMIT = "quotagate.concurrency.limit";
    /** Requests delayed by a throttle now, waiting to resume. */
    public static final String DELAYED = "quotagate.throttle.delayed";
    /** Delays planned for throttled requests, by route and outcome ({@code resumed}, {@code dropped}). */
    public static final String DELAY = "quotagate.throttle.delay";
    /** Time requests waited in a concurrency group's queue. */
    public static final String QUEUE_WAIT = "quotagate.queue.wait";
    /** Units reserved by requests whose actual cost was reported. */
    public static final String COST_RESERVED = "quotagate.cost.reserved";
    /** Units those requests reported using. */
    public static final String COST_ACTUAL = "quotagate.cost.actual";
    /** Capacity of the global quota (its smallest bandwidth). */
    public static final String GLOBAL_CAPACITY = "quotagate.global.capacity";
    /** Tokens available now in the global quota. */
    public static final String GLOBAL_AVAILABLE = "quotagate.global.available";
    /** Requests shadow mode let through although the limits would have refused them. */
    public static final String SHADOW_REJECTIONS = "quotagate.shadow.rejections";
    /** Requests refused by a bucket beside the tenant's (per-user, a route's own), by route and scope. */
    public static final String SCOPED_REFUSALS = "quotagate.scoped.refusals";
    /** Quota events raised, by type. */
    public static final String EVENTS = "quotagate.events";
    /** Quota events not delivered, by listener and reason: a full queue, a webhook's receiver away or refusing. */
    public static final String EVENTS_DROPPED = "quotagate.events.dropped";

    /** The limit of each plan's calendar quota. */
    public static final String QUOTA_LIMIT = "quotagate.quota.limit";
    /** Units a named tenant used of a calendar quota in the current period. */
    public static final String QUOTA_USED = "quotagate.quota.used";
    /** The share of its calendar quota's limit a named tenant used in the current period (1: used up). */
    public static final String QUOTA_USAGE = "quotagate.quota.usage";

    /** Bucket operations answered from local buckets instead of Redis. */
    public static final String STORE_FALLBACK = "quotagate.store.fallback";
    /** Times this instance switched from Redis to local buckets. */
    public static final String STORE_OUTAGES = "quotagate.store.outages";
    /** 1 while buckets are in Redis, 0 during an outage. */
    public static final String STORE_AVAILABLE = "quotagate.store.available";
    /** Instances sharing the Redis store, from the heartbeat. */
    public static final String STORE_INSTANCES = "quotagate.store.instances";
    /** Gauge: whether the shared store keeps its data on disk (1), keeps nothing (0) or cannot tell (-1). */
    public static final String STORE_PERSISTENCE = "quotagate.store.persistence";
    /** Capacity of each plan in force (its smallest bandwidth). */
    public static final String PLAN_CAPACITY = "quotagate.plan.capacity";
    /** Version of the shared limits record in force. */
    public static final String LIMITS_VERSION = "quotagate.limits.version";
    /** 1 if this instance's plans file has the limits in force, 0 if another file's are (a rolling deploy). */
    public static final String LIMITS_FILE_AGREES = "quotagate.limits.file.agrees";
    /** Shared limits records this instance refused (it kept the last good limits). */
    public static final String LIMITS_REFUSED = "quotagate.limits.refused";
    /** 1 while the shared limits record can be read, 0 while the store cannot be reached. */
    public static final String LIMITS_REACHABLE = "quotagate.limits.reachable";

    /** The in-flight gauges' description, shared by the {@code other} gauge and the named tenants'. */
    static final String INFLIGHT_DESCRIPTION =
            "Requests of a concurrency group in flight, by tenant (top-N, others as 'other')";

    private final StatisticsView statistics;
    private final QuotaSource source;
    private final ConcurrencyView concurrency;
    private final BucketStore store;

    /** Binds everything a filter exposes ({@code new QuotaMeterBinder(quotaFilter.control())}). */
    public QuotaMeterBinder(QuotaSource source) {
        Objects.requireNonNull(source, "source");
        this.statistics = Objects.requireNonNull(source.statistics(), "statistics");
        this.source = source;
        this.concurrency = Objects.requireNonNull(source.concurrency(), "concurrency");
        this.store = source.store();
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        Set<String> groups = concurrency.groups();
        Map<String, Set<String>> namedInflight = bindConcurrency(registry, groups);
        TenantMeters tenants = new TenantMeters(registry, source, concurrency, groups, namedInflight);
        statistics.onCell(tenants::cellCreated, tenants::cellRemoved);
        bindQueueWaits(registry, groups);
        bindThrottle(registry);
        bindShadowRejections(registry);
        bindCosts(registry);
        bindScopedRefusals(registry);
        bindCapacities(registry);
        bindEvents(registry);
        bindQuotaLimits(registry);
        bindSharedLimits(registry);
        bindStore(registry);
    }

    /**
     * Per concurrency group: in flight of the tenants without a gauge of their own ({@code other}), queued,
     * and an adaptive group's limit. Returns, per group, the tenant tags that have their own in-flight gauge
     * ({@link TenantMeters} keeps them): "other" is the total minus these.
     */
    private Map<String, Set<String>> bindConcurrency(MeterRegistry registry, Set<String> groups) {
        Map<String, Set<String>> namedInflight = new HashMap<>();
        for (String group : groups) {
            Set<String> named = ConcurrentHashMap.newKeySet();
            namedInflight.put(group, named);
            Gauge.builder(INFLIGHT, concurrency, c -> otherInflight(c, group, named))
                    .description(INFLIGHT_DESCRIPTION)
                    .tag("group", group).tag("tenant", StatisticsView.OTHER)
                    .register(registry);
            Gauge.builder(QUEUED, concurrency, c -> c.queued(group))
                    .description("Requests waiting in a concurrency group's queue")
                    .tag("group", group)
                    .register(registry);
            if (concurrency.adaptiveLimit(group).isPresent()) {
                Gauge.builder(CONCURRENCY_LIMIT, concurrency, c -> c.adaptiveLimit(group).orElse(0))
                        .description("The adaptive limit of a concurrency group's requests in flight on this instance")
                        .tag("group", group)
                        .register(registry);
            }
        }
        return namedInflight;
    }

    private void bindQueueWaits(MeterRegistry registry, Set<String> groups) {
        Map<String, Timer[]> waits = new HashMap<>();
        for (String group : groups) {
            waits.put(group, new Timer[]{waitTimer(registry, group, "admitted"), waitTimer(registry, group, "timed_out")});
        }
        statistics.onQueueWait((group, tenant, nanos, admitted) -> {
            Timer[] t = waits.get(group);
            if (t != null) t[admitted ? 0 : 1].record(nanos, TimeUnit.NANOSECONDS);
        });
    }

    private void bindThrottle(MeterRegistry registry) {
        Gauge.builder(DELAYED, statistics, StatisticsView::delayedNow)
                .description("Requests delayed by a throttle now, their units reserved, waiting to resume")
                .baseUnit("requests")
                .register(registry);
        // per route and outcome, registered at the first delay: routes come from the plans file
        Map<String, Timer> delays = new ConcurrentHashMap<>();
        statistics.onDelay((route, nanos, resumed) -> delays.computeIfAbsent(route + (resumed ? "\u0000r" : "\u0000d"),
                k -> Timer.builder(DELAY)
                        .description("Delays planned for throttled requests (the wait for their units); count: requests delayed")
                        .tag("route", route).tag("outcome", resumed ? "resumed" : "dropped")
                        .publishPercentiles(0.5, 0.95)
                        .publishPercentileHistogram()
                        .register(registry))
                .record(nanos, TimeUnit.NANOSECONDS));
    }

    private void bindShadowRejections(MeterRegistry registry) {
        for (Reason reason : Reason.values()) {
            FunctionCounter.builder(SHADOW_REJECTIONS, source, s -> s.shadowRejections(reason))
                    .description("Requests shadow mode let through although the limits would have refused them, by reason")
                    .baseUnit("requests")
                    .tag("reason", reason.code())
                    .register(registry);
        }
    }

    private void bindCosts(MeterRegistry registry) {
        Map<String, DistributionSummary[]> costs = new ConcurrentHashMap<>();
        statistics.onCostSettled((route, reserved, actual) -> {
            DistributionSummary[] pair = costs.computeIfAbsent(route, r -> new DistributionSummary[]{
                    costSummary(registry, COST_RESERVED, "Units reserved (estimated) by requests whose actual cost was reported", r),
                    costSummary(registry, COST_ACTUAL, "Units those requests reported using (reservation accuracy: actual / reserved)", r)});
            pair[0].record(reserved);
            pair[1].record(actual);
        });
    }

    private void bindScopedRefusals(MeterRegistry registry) {
        // per route and scope, registered at the first such refusal: routes come from the plans file, the
        // scopes are four, and no user is ever a tag
        Map<String, Counter> scopedRefusals = new ConcurrentHashMap<>();
        statistics.onScopedRefusal((route, scope) -> scopedRefusals.computeIfAbsent(route + '\u0000' + scope,
                k -> Counter.builder(SCOPED_REFUSALS)
                        .description("Requests refused by a bucket beside the tenant's: the plan's per-user, or the route's own")
                        .tag("route", route).tag("scope", scope).register(registry))
                .increment());
    }

    /** The global quota's and each plan's capacity. */
    private void bindCapacities(MeterRegistry registry) {
        // always registered: a global quota may be set at runtime, by any instance (0: none in force)
        Gauge.builder(GLOBAL_CAPACITY, source, QuotaSource::globalQuotaCapacity)
                .description("Capacity of the global quota shared by all tenants (smallest bandwidth; 0: none)")
                .baseUnit("units")
                .register(registry);
        Gauge.builder(GLOBAL_AVAILABLE, source, QuotaSource::globalQuotaAvailable)
                .description("Units available now in the global quota (0: none)")
                .baseUnit("units")
                .register(registry);
        for (String plan : source.planNames()) {
            Gauge.builder(PLAN_CAPACITY, source, s -> s.planCapacity(plan))
                    .description("Capacity of the plan's buckets in force (smallest bandwidth), as every view reports it")
                    .baseUnit("units")
                    .tag("plan", plan)
                    .register(registry);
        }
    }

    /** Quota events raised and not delivered, if the filter has signals. */
    private void bindEvents(MeterRegistry registry) {
        SignalCounts signals = source.signals();
        if (signals == null) return;
        for (String type : QuotaEvent.types()) {
            FunctionCounter.builder(EVENTS, signals, s -> s.raised(type))
                    .description("Quota events raised (near a limit, exhausted, throttled for long, recovered, "
                            + "global quota near its limit, store fallback)")
                    .tag("type", type)
                    .register(registry);
        }
        // every series always, 0 where that listener is absent: one alert over all of them, the same
        // series on every instance
        for (SignalCounts.Drop drop : SignalCounts.Drop.values()) {
            FunctionCounter.builder(EVENTS_DROPPED, signals, s -> s.dropped(drop))
                    .description("Quota events not delivered: dropped by a full queue (the filter's: listener=all; "
                            + "a webhook's), given up or refused by a webhook's receiver, or thrown on by a listener")
                    .tag("listener", drop.listener()).tag("reason", drop.reason())
                    .register(registry);
        }
    }

    /** The limit of each plan's calendar quotas at bind time (a tenant's use: {@link TenantMeters}). */
    private void bindQuotaLimits(MeterRegistry registry) {
        for (String plan : source.planNames()) {
            for (String quota : source.quotaNames(plan)) {
                Gauge.builder(QUOTA_LIMIT, source, s -> s.quotaLimit(plan, quota))
                        .description("Limit per period of the plan's calendar quota in force")
                        .baseUnit("units")
                        .tag("plan", plan).tag("quota", quota)
                        .register(registry);
            }
        }
    }

    /** The shared limits record, with a shared store only. */
    private void bindSharedLimits(MeterRegistry registry) {
        LimitsStatus limits = source.limitsStatus();
        if (limits == null || !limits.shared()) return;
        Gauge.builder(LIMITS_VERSION, source, s -> s.limitsStatus().version())
                .description("Version of the shared limits record in force on this instance")
                .register(registry);
        Gauge.builder(LIMITS_FILE_AGREES, source, s -> s.limitsStatus().fileAgrees() ? 1 : 0)
                .description("1 if this instance's plans file has the limits in force, 0 if another "
                        + "instance's file was published last (a rolling deploy)")
                .register(registry);
        FunctionCounter.builder(LIMITS_REFUSED, source, s -> s.limitsStatus().refused())
                .description("Shared limits records this instance refused, keeping the last good limits")
                .register(registry);
        Gauge.builder(LIMITS_REACHABLE, source, s -> s.limitsStatus().reachable() ? 1 : 0)
                .description("1 while the shared limits record can be read, 0 while the store cannot be reached")
                .register(registry);
    }

    /** The store's health, with a store that reports it (Redis) only. */
    private void bindStore(MeterRegistry registry) {
        StoreHealth health = store == null ? null : store.health().orElse(null);
        if (health == null) return;
        FunctionCounter.builder(STORE_FALLBACK, health, StoreHealth::fallbackDecisions)
                .description("Bucket operations answered from local buckets (quota / instances) instead of Redis")
                .baseUnit("operations")
                .register(registry);
        FunctionCounter.builder(STORE_OUTAGES, health, StoreHealth::outages)
                .description("Times this instance lost Redis and switched to local buckets")
                .register(registry);
        Gauge.builder(STORE_AVAILABLE, health, h -> h.available() ? 1 : 0)
                .description("1 while the buckets are in Redis, 0 while answering from local buckets")
                .register(registry);
        Gauge.builder(STORE_INSTANCES, health, StoreHealth::instanceCount)
                .description("Instances sharing the Redis store (heartbeat; last known value during an outage)")
                .register(registry);
        Gauge.builder(STORE_PERSISTENCE, health, StoreHealth::persistence)
                .description("1 if Redis keeps its data on disk, 0 if it keeps nothing (a restart loses the "
                        + "calendar quotas' counts), -1 if it cannot be told (CONFIG refused)")
                .register(registry);
    }

    private static DistributionSummary costSummary(MeterRegistry registry, String name, String description, String route) {
        return DistributionSummary.builder(name).description(description).baseUnit("units").tag("route", route)
                .register(registry);
    }

    private static Timer waitTimer(MeterRegistry registry, String group, String outcome) {
        // The histogram is what Prometheus gets (its registry writes no client-side percentiles beside
        // one): buckets that add up across instances, p50/p95 by histogram_quantile. The percentiles are
        // for registries without histograms, where they are this instance's alone.
        return Timer.builder(QUEUE_WAIT)
                .description("Time requests waited in a concurrency group's queue")
                .tag("group", group).tag("outcome", outcome)
                .publishPercentiles(0.5, 0.95)
                .publishPercentileHistogram()
                .register(registry);
    }

    private static double otherInflight(ConcurrencyView c, String group, Set<String> named) {
        int total = c.inflight(group);
        for (String tenant : named) total -= c.inflight(group, tenant);
        return Math.max(0, total);
    }
}

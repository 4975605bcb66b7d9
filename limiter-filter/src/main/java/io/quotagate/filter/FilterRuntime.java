package io.quotagate.filter;

import io.quotagate.filter.internal.admission.ConcurrencyLimits;
import io.quotagate.filter.internal.admission.FailureLog;
import io.quotagate.filter.internal.admission.Gate;
import io.quotagate.filter.internal.admission.Outcome;
import io.quotagate.filter.internal.admission.Policy;
import io.quotagate.filter.internal.admission.QuotaPeriod;
import io.quotagate.filter.internal.admission.RequestFacts;
import io.quotagate.filter.internal.limits.SharedLimits;
import io.quotagate.filter.internal.metrics.RequestStatistics;
import io.quotagate.filter.internal.signals.QuotaSignals;
import io.quotagate.filter.internal.signals.SignalProbe;
import io.quotagate.filter.metrics.StatisticsView;
import io.quotagate.filter.signals.QuotaListener;
import io.quotagate.filter.signals.WebhookListener;
import io.quotagate.filter.status.BandwidthStatus;
import io.quotagate.filter.status.ConcurrencyListener;
import io.quotagate.filter.status.ConcurrencyView;
import io.quotagate.filter.status.LimitOverrides;
import io.quotagate.filter.status.LimitsStatus;
import io.quotagate.filter.status.QuotaUsage;
import io.quotagate.filter.status.Reason;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.store.LimitsChannel;
import io.quotagate.filter.store.QuotaClock;
import io.quotagate.filter.store.StoreHealth;
import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.CalendarQuota;
import io.quotagate.plans.PathPattern;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import io.quotagate.plans.RouteRule;
import io.quotagate.plans.SignalSettings;
import io.quotagate.plans.StoreSpec;
import io.quotagate.plans.TenantId;
import io.quotagate.plans.TenantSettings;
import io.quotagate.tenant.ApiKeyResolver;
import io.quotagate.tenant.ClientAddress;
import io.quotagate.tenant.JwtClaimResolver;
import io.quotagate.tenant.TenantContract;
import io.quotagate.tenant.TenantDirectory;
import io.quotagate.tenant.TenantRejectedException;
import io.quotagate.tenant.TenantResolver;
import io.quotagate.tenant.TenantResolvers;
import jakarta.servlet.http.HttpServletRequest;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * A configured filter: the composition root ({@link #compose}, from the builder's settings), what is
 * fixed for the filter's lifetime, and the one reference to what a reload changes ({@link Engine}),
 * behind the {@link QuotaControl} view.
 */
final class FilterRuntime implements QuotaControl {
    private static final System.Logger LOG = System.getLogger(QuotaFilter.class.getName());
    /** The most tenants with a runtime entry ({@link #setTenant}); each change rewrites the whole record. */
    static final int MAX_RUNTIME_TENANTS = 10_000;

    /**
     * What the requests read, swapped as one: the policy, and the servlet-side pieces built from the
     * same plans (the resolver chain, the trusted proxies).
     */
    record Engine(Policy policy, TenantResolver resolver, RequestFacts<HttpServletRequest> facts,
                  Outcome.Refused missingTenant) {
    }

    /**
     * What the builder fixed for the filter's lifetime, whatever the plans in force.
     *
     * @param directory the application's own directory, already cached; asked after the file's assignments
     * @param store     where the buckets live (a reloaded plans file's {@code store:} does not change it)
     * @param ownsStore whether the filter created the store (from {@code store:}) and closes it
     */
    record Setup(TenantResolver resolver, TenantDirectory directory, Map<String, CostEstimator> estimators,
                 BodyLimits body, boolean legacyHeaders, Path plansFile, Duration reloadInterval,
                 long maxPlansFileBytes, ShadowLog shadowLog, BucketStore store, boolean ownsStore,
                 FailureLog resolverFailures, List<PathPattern> unlimitedPaths, OwnUsage ownUsage) {
    }

    final Setup setup;
    final Gate gate;
    final ConcurrencyLimits concurrency;
    /** The request counters' one writer: only their read-only side leaves the filter ({@link #statistics()}). */
    final RequestStatistics.Recorder statistics;
    final RejectionLog rejections;
    /** Serialises engine swaps; never held while calling out (the limits' own lock is taken first). */
    private final Object swap = new Object();
    private volatile Engine engine;
    /** The plans file, the shared record and the runtime changes, put in force through {@link #install}. */
    private final SharedLimits limits;
    /** Quota events: the request path reports admissions and refusals, a daemon thread checks them. */
    final QuotaSignals signals;
    /** The plans file's {@code signals.webhook}, created (and closed) by the filter; null for none. */
    private final WebhookListener webhook;
    /** The local store's quota counters kept in a file, or null. */
    private final Runnable snapshot;
    /** Requests delayed by a {@code throttle:}: their scheduler and bounds. */
    final Throttling throttling;
    /** Where a cost estimator's own failures are logged (rate-limited); its client gets a 500 problem. */
    final FailureLog estimatorFailures;

    private FilterRuntime(Setup setup, Gate gate, ConcurrencyLimits concurrency, RequestStatistics.Recorder statistics,
                          RejectionLog rejections, Plans plans, List<QuotaListener> listeners, QuotaClock clock,
                          byte[] webhookSecret, Runnable snapshot, Throttling throttling) {
        this.setup = setup;
        this.throttling = throttling;
        this.estimatorFailures = new FailureLog(LOG, clock, "cost estimator");
        this.snapshot = snapshot;
        this.gate = gate;
        this.concurrency = concurrency;
        this.statistics = statistics;
        this.rejections = rejections;
        this.engine = engine(plans, null);
        this.webhook = plans.signals().webhook().map(w -> {
            WebhookListener.Builder hook = WebhookListener.builder(w.url(), webhookSecret)
                    .timeout(w.timeout()).retries(w.retries()).queue(w.queue());
            // on a shared store, the id its heartbeat and limits record know this instance by; else the
            // webhook makes one of the same form (host:pid:random): the body names an instance either way
            setup.store().limitsChannel().map(LimitsChannel::instanceId).ifPresent(hook::instance);
            return hook.build();
        }).orElse(null);
        List<QuotaListener> all = new ArrayList<>(listeners);
        if (webhook != null) all.add(webhook);
        this.signals = QuotaSignals.start(() -> plans().signals(), all, new SignalReadings(), clock, true);
        this.limits = setup.store().limitsChannel()
                .map(channel -> SharedLimits.shared(plans, channel, this::install, this::forget))
                .orElseGet(() -> SharedLimits.local(plans, this::install, this::forget));
    }

    /** What the signals thread reads: the limits in force, read off the request path. */
    private final class SignalReadings implements SignalProbe {
        @Override
        public List<BandwidthStatus> tenantLimits(String tenant) {
            return gate.tenantLimits(engine.policy(), tenant);
        }

        @Override
        public List<QuotaPeriod> tenantQuotas(String tenant) {
            return gate.tenantQuotaPeriods(engine.policy(), tenant);
        }

        @Override
        public boolean claim(String key, long expiresAtMillis) {
            return setup.store().quotaCounters().map(c -> c.claim(key, expiresAtMillis)).orElse(true);
        }

        @Override
        public long globalCapacity() {
            return gate.globalCapacity(engine.policy());
        }

        @Override
        public long globalAvailable() {
            return gate.globalAvailable(engine.policy());
        }

        @Override
        public Optional<Boolean> storeAvailable() {
            return setup.store().health().map(StoreHealth::available);
        }
    }

    /** The composition root: the filter's parts from the builder's settings. */
    static FilterRuntime compose(QuotaFilter.Builder b) {
        Plans plans = b.plans;
        if (plans != null && b.plansFile != null) {
            throw new IllegalStateException("QuotaFilter.builder(): plans(...) and plansFile(...) both given; "
                    + "choose one (a reload() would replace the given plans with the file)");
        }
        if (b.store != null && b.storeSettings != null) {
            throw new IllegalStateException("QuotaFilter.builder(): store(...) and storeSettings(...) both given; "
                    + "choose one");
        }
        if (b.reloadInterval != null && b.plansFile == null) {
            throw new IllegalStateException("QuotaFilter.builder(): watchPlansFile(...) needs plansFile(...)");
        }
        if (plans == null && b.plansFile != null) plans = PlansFile.load(b.plansFile, b.maxPlansFileBytes);
        if (plans == null) {
            throw new IllegalStateException("QuotaFilter.builder(): plans(...) or plansFile(...) is required");
        }
        for (String route : b.estimators.keySet()) {
            Plans p = plans;
            if (p.routes().stream().noneMatch(r -> r.name().equals(route) && r.limited())) {
                throw new IllegalStateException("QuotaFilter.builder(): costEstimator for route '" + route
                        + "', but " + p.source() + " has no limited route of that name");
            }
        }
        // the webhook's secret is read before anything is opened: a missing one fails the start with
        // file:line: field: reason, and leaves no store connection behind
        byte[] webhookSecret = plans.signals().webhook().map(SignalSettings.Webhook::secret).orElse(null);
        TenantSettings settings = plans.tenants();
        // the file's store options are its type's to check (limiter-redis's for store.type: redis), also when
        // the builder's store or store settings replace them: a file is refused the same way at start and reload
        BucketStore.check(plans.store());
        StoreSpec where = b.storeSettings != null ? b.storeSettings : plans.store();
        // a shared store comes from its module (store.type: redis needs io.quotagate:limiter-redis)
        BucketStore store = b.store != null ? b.store : BucketStore.open(where, settings.maxTracked(), b.clock);
        boolean owned = b.store == null && store instanceof AutoCloseable;
        TenantDirectory userDirectory = b.directory == null ? null
                : TenantDirectory.cached(b.directory, settings.maxTracked(),
                Duration.ofMinutes(QuotaFilter.Builder.DIRECTORY_TTL_MINUTES),
                Duration.ofSeconds(QuotaFilter.Builder.DIRECTORY_NEGATIVE_TTL_SECONDS), settings.directoryTimeout(),
                settings.directoryLookups(), b.clock::nanoTime);
        RequestStatistics.Recorder statistics = new RequestStatistics.Recorder(b.topTenants,
                settings.assignments().keySet());
        ConcurrencyListener user = b.concurrencyListener;
        ConcurrencyListener waits = (group, tenant, nanos, admitted) -> {
            statistics.queueWait(group, tenant, nanos, admitted);
            user.queueWait(group, tenant, nanos, admitted);
        };
        Setup setup = new Setup(b.resolver, userDirectory, Map.copyOf(b.estimators),
                new BodyLimits(b.maxBodyBytes, b.bodyReadTimeout), b.legacyHeaders, b.plansFile, b.reloadInterval,
                b.maxPlansFileBytes, new ShadowLog(b.clock), store, owned,
                new FailureLog(LOG, b.clock, "tenant resolver"), List.copyOf(b.unlimitedPaths),
                b.usageEndpoint == null ? null : new OwnUsage(b.usageEndpoint, b.usageEndpointShowsHidden, b.clock));
        ConcurrencyLimits concurrency = new ConcurrencyLimits(plans, b.clock, waits, store::instanceCount);
        Gate gate = new Gate(store, concurrency, new FailureLog(LOG, b.clock, "tenant directory"), b.wallClock,
                b.closedPeriodsKept);
        Runnable snapshot = null;
        if (b.quotaSnapshotFile != null) {
            try {
                snapshot = BucketStore.quotaSnapshot(store, b.quotaSnapshotFile, b.quotaSnapshotInterval, b.wallClock);
            } catch (IllegalArgumentException misconfigured) {
                throw new IllegalStateException("QuotaFilter.builder(): " + misconfigured.getMessage(), misconfigured);
            }
        }
        return new FilterRuntime(setup, gate, concurrency, statistics, new RejectionLog(LOG, b.clock), plans,
                b.listeners, b.clock, webhookSecret, snapshot, new Throttling(b.throttleScheduler, b.maxDelayedRequests,
                b.throttleGrace));
    }

    /** The engine of these plans; the builder's own resolver and directory are kept. */
    private Engine engine(Plans plans, Engine previous) {
        TenantSettings s = plans.tenants();
        TenantDirectory directory = TenantDirectory.of(s.assignments());
        if (setup.directory() != null) directory = directory.orElse(setup.directory());
        // the resolvers first: a plans file whose resolver cannot be built is refused before any bucket moves;
        // the file's resolvers are checked even when the builder's resolver replaces them
        if (setup.resolver() != null) TenantResolvers.check(s);
        TenantResolver resolver = setup.resolver() != null ? setup.resolver() : TenantResolvers.fromSettings(s);
        TenantResolver users = TenantResolvers.usersFromSettings(s, System::getenv);
        Policy policy = gate.policy(plans, directory, previous == null ? null : previous.policy());
        return new Engine(policy, resolver, new ServletRequestFacts(ClientAddress.behind(s.trustedProxies()),
                users == null ? null : userOf(users), setup.estimators().keySet()),
                new Outcome.Refused(401, "missing_tenant", missingTenantDetail(s, setup.resolver() != null), null, 0));
    }

    /**
     * The user id {@code users} finds in a request, or null: a request whose user cannot be found (or
     * whose credential for it is refused, a 401 of the resolver) shares the tenant's bucket of requests
     * without a user, so leaving the user out never escapes the per-user limit. A request that names its
     * user ambiguously (a header repeated or folded into a list: the resolver's 400) is not put in that
     * bucket: its {@link TenantRejectedException} goes on, and the gate refuses it with 400 {@code invalid_user}.
     */
    private Function<HttpServletRequest, String> userOf(TenantResolver users) {
        return request -> {
            try {
                return users.resolve(request).orElse(null);
            } catch (TenantRejectedException rejected) {
                if (rejected.status() == 400) throw rejected; // bad input, not a refused credential
                return null;
            } catch (RuntimeException bug) {
                setup.resolverFailures().failed(" (user)", bug);
                return null;
            }
        };
    }

    /**
     * The 401's detail: how a client sends its tenant under these resolvers, and how a route that needs none
     * (a probe, a scrape) is let through, so that a first deploy's 401 says what to change.
     */
    static String missingTenantDetail(TenantSettings s, boolean ownResolver) {
        String how = ownResolver ? "send it the way this application's tenant resolver reads it"
                : s.resolvers().isEmpty() ? "send the header " + TenantResolver.DEFAULT_HEADER
                : "send " + s.resolvers().stream().map(FilterRuntime::howToSend).collect(Collectors.joining(", or "));
        return "No tenant could be identified for this request: " + how
                + ". A path that needs no tenant (health, metrics) is marked limited: false in the plans file's routes.";
    }

    private static String howToSend(TenantSettings.ResolverSpec spec) {
        return switch (spec.type()) {
            case "header" -> "the header " + spec.string("name").orElse(TenantResolver.DEFAULT_HEADER);
            case "api-key" -> "an API key in the header " + spec.string("header").orElse(ApiKeyResolver.DEFAULT_HEADER);
            case "jwt-claim" -> "a bearer token with the claim " + spec.string("claim").orElse(JwtClaimResolver.DEFAULT_CLAIM);
            default -> "a tenant for the " + spec.type() + " resolver";
        };
    }

    /** What requests read now. */
    Engine engine() {
        return engine;
    }

    @Override
    public Plans plans() {
        return engine.policy().plans();
    }

    @Override
    public void reload() {
        if (setup.plansFile() == null) {
            throw new IllegalStateException(
                    "QuotaFilter was built from plans, not from a plans file: nothing to reload");
        }
        apply(PlansFile.load(setup.plansFile(), setup.maxPlansFileBytes()));
    }

    @Override
    public void apply(Plans plans) {
        Objects.requireNonNull(plans, "plans");
        for (String route : setup.estimators().keySet()) {
            // estimators are registered at start: without its route, an estimated request would be charged
            // the static cost of whatever route it now matches, and nobody told
            if (plans.routes().stream().noneMatch(r -> r.name().equals(route) && r.limited())) {
                throw new IllegalArgumentException(plans.source() + ": routes: no limited route '" + route
                        + "', but the filter has a costEstimator for it; keep the route (or rebuild the filter "
                        + "without that estimator)");
            }
        }
        for (RouteRule r : plans.routes()) {
            // slots are sized at start: a group the running filter does not know has no limiter
            if (r.group().isPresent() && !concurrency.groups().contains(r.group().get())) {
                throw new IllegalArgumentException(plans.source() + ": routes." + r.name()
                        + ".group: concurrency group '" + r.group().get()
                        + "' is new; concurrency groups take effect at restart");
            }
        }
        // the resolvers and the store options before anything is published: a file whose resolver cannot be
        // built, or whose store: its type refuses, changes nothing (a store: change itself takes effect at restart)
        TenantResolvers.check(plans.tenants());
        BucketStore.check(plans.store());
        limits.fileChanged(plans);
    }

    /** Puts the limits in force: called by {@link SharedLimits}, under its lock, for every change from anywhere. */
    private void install(Plans plans, boolean asAtStart) {
        synchronized (swap) {
            // limits as at start are built afresh (initial: a bucket not seen yet needs no move), else
            // from the policy in force, keeping what did not change
            engine = engine(plans, asAtStart ? null : engine);
        }
    }

    /** Drops a tenant's cached answer of the application's directory (this instance). */
    private void forget(String tenant) {
        if (setup.directory() != null) setup.directory().invalidate(tenant);
    }

    @Override
    public void setGlobalQuota(List<Bandwidth> global) {
        Objects.requireNonNull(global, "limits");
        limits.change("setGlobalQuota", o -> o.withGlobal(global));
    }

    @Override
    public void setPlanLimits(String plan, List<Bandwidth> planLimits) {
        Objects.requireNonNull(plan, "plan");
        Objects.requireNonNull(planLimits, "limits");
        if (plans().plan(plan).isEmpty()) {
            throw new IllegalArgumentException("unknown plan '" + plan + "', defined: " + plans().plans().keySet());
        }
        limits.change("setPlanLimits " + plan, o -> o.withPlan(plan, planLimits));
    }

    @Override
    public void setPlanQuotas(String plan, List<CalendarQuota> quotas) {
        Objects.requireNonNull(plan, "plan");
        Objects.requireNonNull(quotas, "quotas");
        if (plans().plan(plan).isEmpty()) {
            throw new IllegalArgumentException("unknown plan '" + plan + "', defined: " + plans().plans().keySet());
        }
        limits.change("setPlanQuotas " + plan, o -> o.withPlanQuotas(plan, quotas));
    }

    @Override
    public Optional<TenantContract> tenant(String tenant) {
        if (!TenantId.isValid(tenant)) throw new IllegalArgumentException("not a valid tenant id: " + tenant);
        TenantSettings s = plans().tenants();
        String plan = s.assignments().get(tenant);
        if (plan != null) {
            return Optional.of(new TenantContract(plan, s.overrides().getOrDefault(tenant, List.of()),
                    s.overrideQuotas().get(tenant)));
        }
        return setup.directory() == null ? Optional.empty() : setup.directory().contractOf(tenant);
    }

    @Override
    public void setTenant(String tenant, TenantContract contract) {
        if (!TenantId.isValid(tenant)) throw new IllegalArgumentException("not a valid tenant id: " + tenant);
        Objects.requireNonNull(contract, "contract");
        limits.change("setTenant " + tenant, o -> {
            // the record is read by every instance at every change: customers' contracts belong in the directory
            if (o.tenants().size() >= MAX_RUNTIME_TENANTS && !o.tenants().containsKey(tenant)) {
                throw new IllegalArgumentException("at most " + MAX_RUNTIME_TENANTS + " tenants may have runtime "
                        + "entries; give contracts through the tenant directory (JdbcTenantDirectory)");
            }
            return o.withTenant(tenant, contract);
        });
    }

    @Override
    public boolean clearTenant(String tenant) {
        if (!TenantId.isValid(tenant)) throw new IllegalArgumentException("not a valid tenant id: " + tenant);
        if (!limits.overrides().tenants().containsKey(tenant)) return false;
        limits.change("clearTenant " + tenant, o -> o.withoutTenant(tenant));
        return true;
    }

    @Override
    public LimitOverrides overrides() {
        return limits.overrides();
    }

    @Override
    public void clearOverrides() {
        limits.change("clearOverrides", o -> LimitOverrides.NONE);
    }

    @Override
    public void invalidate(String tenant) {
        limits.invalidate(tenant);
    }

    @Override
    public LimitsStatus limitsStatus() {
        return limits.status();
    }

    /** Checks the shared limits' version now (tests; the filter checks every second on its own). */
    void checkSharedLimits() {
        if (limits.isShared()) limits.check();
    }

    @Override
    public List<BandwidthStatus> tenantLimits(String tenant) {
        return gate.tenantLimits(engine.policy(), tenant);
    }

    @Override
    public List<QuotaUsage> tenantQuotas(String tenant) {
        return gate.tenantQuotas(engine.policy(), tenant);
    }

    @Override
    public io.quotagate.filter.status.UsagePage usage(String cursor, int size) {
        if (size < 1 || size > MAX_USAGE_PAGE) {
            throw new IllegalArgumentException("size must be 1 to " + MAX_USAGE_PAGE + ", was " + size);
        }
        return gate.usage(engine.policy(), cursor, size);
    }

    /** The largest page of a usage export. */
    static final int MAX_USAGE_PAGE = 10_000;

    @Override
    public StatisticsView statistics() {
        return statistics.statistics();
    }

    @Override
    public ConcurrencyView concurrency() {
        return concurrency;
    }

    @Override
    public long globalQuotaCapacity() {
        return gate.globalCapacity(engine.policy());
    }

    @Override
    public Set<String> planNames() {
        return plans().plans().keySet();
    }

    @Override
    public double planCapacity(String plan) {
        return plans().plan(plan).map(p -> (double) p.limits().stream().mapToLong(Bandwidth::capacity).min()
                .orElse(0)).orElse(Double.NaN);
    }

    @Override
    public List<String> quotaNames(String plan) {
        return plans().plan(plan).map(p -> p.quotas().stream().map(CalendarQuota::name).toList()).orElse(List.of());
    }

    @Override
    public double quotaLimit(String plan, String quota) {
        return plans().plan(plan).flatMap(p -> p.quotas().stream().filter(q -> q.name().equals(quota)).findFirst())
                .map(q -> (double) q.limit()).orElse(Double.NaN);
    }

    @Override
    public long globalQuotaAvailable() {
        return gate.globalAvailable(engine.policy());
    }

    @Override
    public long shadowRejections(Reason reason) {
        return gate.shadowRejections(reason);
    }

    @Override
    public BucketStore store() {
        return setup.store();
    }

    @Override
    public QuotaSignals signals() {
        return signals;
    }

    /** Closes what the filter created: the signals threads, the webhook, a shared store made from {@code store:}. */
    void close() {
        throttling.close();
        signals.close();
        if (webhook != null) webhook.close();
        limits.close();
        if (snapshot != null) snapshot.run(); // the last counts, before the store goes
        if (setup.ownsStore() && setup.store() instanceof AutoCloseable owned) {
            try {
                owned.close();
            } catch (Exception failure) {
                LOG.log(System.Logger.Level.WARNING, "quotagate: closing the bucket store failed: " + failure);
            }
        }
    }
}

package io.quotagate.filter.servlet;

import io.quotagate.filter.admission.Acquisition;
import io.quotagate.filter.admission.Admission;
import io.quotagate.filter.admission.ConcurrencyLimits;
import io.quotagate.filter.admission.ConcurrencyListener;
import io.quotagate.filter.admission.ConcurrencyView;
import io.quotagate.filter.admission.Decision;
import io.quotagate.filter.admission.Permit;
import io.quotagate.filter.core.QuotaClock;
import io.quotagate.filter.admission.Reason;
import io.quotagate.filter.admission.TenantPlans;
import io.quotagate.filter.metrics.QuotaSource;
import io.quotagate.filter.metrics.RequestStatistics;
import io.quotagate.filter.metrics.RequestStatistics.Outcome;
import io.quotagate.filter.route.RequestPath;
import io.quotagate.filter.route.Route;
import io.quotagate.filter.route.RouteTable;
import io.quotagate.filter.core.BucketKind;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.store.StoreUnavailableException;
import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.GlobalQuota;
import io.quotagate.plans.InvalidPlansException;
import io.quotagate.plans.Plans;
import io.quotagate.plans.RouteRule;
import io.quotagate.plans.PlansFile;
import io.quotagate.plans.StoreSettings;
import io.quotagate.plans.TenantId;
import io.quotagate.plans.TenantSettings;
import io.quotagate.tenant.ClientAddress;
import io.quotagate.tenant.TenantDirectory;
import io.quotagate.tenant.TenantRejectedException;
import io.quotagate.tenant.TenantResolver;
import io.quotagate.tenant.TenantResolvers;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A servlet filter that limits each tenant of a multi-tenant API to its plan.
 *
 * <p>For every request it finds the route (cost in units, or not limited), the tenant (through the
 * {@link TenantResolver} chain) and the tenant's plan, then asks the {@link Admission} core to take
 * the cost from the tenant's bucket and from the global quota. A refused request never reaches the
 * application: it gets {@code 429 Too Many Requests} with {@code Retry-After} (whole seconds,
 * rounded up, until the request would be admitted) and an {@code application/problem+json} body.
 * A tenant id that is not 1-64 characters of {@code [A-Za-z0-9._:-]} gets 400, a request without a
 * tenant gets 401 (under {@code unresolved: reject}), an unknown tenant under {@code unknown: reject}
 * gets 403.
 *
 * <p>A route with a concurrency {@code group} first takes a slot of that group
 * ({@link ConcurrencyLimits}; 429 {@code reason: concurrency} when the tenant's or the group's cap is
 * reached), then the tokens; the slot is given back at once if the buckets refuse, otherwise when the
 * request really ends, async requests included ({@code PermitRelease}). Install the filter with
 * async support so async servlets behind it work. Only {@code REQUEST} dispatches are limited: a
 * forward, include, error or async re-dispatch of an admitted request passes through.
 *
 * <p>Routes are matched on the upper-cased method ({@code GET} rules cover {@code HEAD}) and the
 * normalised path ({@link RequestPath}), so no variant served by the same servlet leaves its route.
 * The body of a route with a {@link CostEstimator} is read only after its slot and its route's
 * minimum cost are granted, within {@link Builder#bodyReadTimeout}.
 *
 * <p>Two ways to install it: {@link #builder()} for code, or a container-created instance with the
 * init-param {@value #PLANS_PARAM} naming the plans file ({@code classpath:plans.yml} or a path).
 *
 * <p>The limits can change while it runs, keeping every bucket's tokens: {@link #reload()} (or the
 * file watcher) re-reads the plans file, {@link #apply}, {@link #setGlobalQuota} and
 * {@link #setPlanLimits} change them programmatically. A route's cost may be computed per request
 * by a {@link CostEstimator} and settled afterwards with {@link QuotaGate#reportActualCost}.
 */
public final class QuotaFilter implements Filter, QuotaSource {
    /** Init-param naming the plans file when the container creates the filter. */
    public static final String PLANS_PARAM = "plans";
    /**
     * Servlet-context attribute under which an application may place a Micrometer {@code MeterRegistry}
     * before the filter initialises; a container-created filter then binds its meters to it.
     */
    public static final String METER_REGISTRY_ATTRIBUTE = "io.quotagate.meterRegistry";
    /** Default number of tenants named in metrics. */
    public static final int DEFAULT_TOP_TENANTS = 50;
    /** Init-param: poll the plans file (a file path, not a class-path resource) this often, e.g. {@code 2s}. */
    public static final String RELOAD_INTERVAL_PARAM = "reload-interval";
    /** Init-param: the longest a body read for a cost estimator may take, e.g. {@code 5s} ({@link Builder#bodyReadTimeout}). */
    public static final String BODY_READ_TIMEOUT_PARAM = "body-read-timeout";
    /** Init-param: {@code true} to add the legacy {@code X-RateLimit-*} fields to published plans. */
    public static final String LEGACY_HEADERS_PARAM = "legacy-ratelimit-headers";
    /**
     * Init-param: the largest plans file read, in bytes, at start and on reload (default
     * {@link PlansFile#DEFAULT_MAX_BYTES}); see {@link Builder#maxPlansFileBytes}.
     */
    public static final String MAX_PLANS_FILE_BYTES_PARAM = "max-plans-file-bytes";

    private static final System.Logger LOG = System.getLogger(QuotaFilter.class.getName());
    /** The refusals that name no tenant and depend on nothing of the request (immutable: shared). */
    private static final Problem RESOLVER_FAILED =
            new Problem(500, "internal_error", "The tenant of this request could not be determined.", null, 0);
    private static final Problem INVALID_TENANT = new Problem(400, "invalid_tenant", "The tenant id must be 1-"
            + TenantId.MAX_LENGTH + " characters of A-Z a-z 0-9 . _ : -", null, 0);
    private static final Problem INVALID_PATH =
            new Problem(400, "invalid_path", "The request path has a '..' segment, which servlet containers resolve differently.", null, 0);
    private static final Problem MISSING_TENANT =
            new Problem(401, "missing_tenant", "No tenant could be identified for this request.", null, 0);

    private volatile Engine engine;
    private PlansWatcher watcher;

    /** For containers ({@code web.xml}, {@code ServletContext.addFilter}): configured in {@link #init}. */
    public QuotaFilter() {
    }

    private QuotaFilter(Engine engine) {
        this.engine = engine;
    }

    /** A builder for programmatic installation. */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public void init(FilterConfig config) throws ServletException {
        if (engine == null) { // not built by the builder
            String location = config.getInitParameter(PLANS_PARAM);
            if (location == null || location.isBlank()) {
                throw new ServletException("QuotaFilter '" + config.getFilterName() + "': init-param '" + PLANS_PARAM
                        + "' is required (classpath:<resource> or a file path)");
            }
            location = location.trim();
            try {
                Builder b = builder();
                String max = config.getInitParameter(MAX_PLANS_FILE_BYTES_PARAM);
                if (max != null && !max.isBlank()) {
                    try {
                        b.maxPlansFileBytes(Long.parseLong(max.trim()));
                    } catch (IllegalArgumentException e) { // NumberFormatException too
                        throw new IllegalArgumentException("init-param '" + MAX_PLANS_FILE_BYTES_PARAM
                                + "' must be a whole number of bytes from 1 to " + (Integer.MAX_VALUE - 1) + ", was '" + max.trim() + "'");
                    }
                }
                if (location.startsWith(PlansFile.CLASSPATH_PREFIX)) b.plans(PlansFile.load(location, b.maxPlansFileBytes));
                else b.plansFile(Path.of(location));
                String interval = config.getInitParameter(RELOAD_INTERVAL_PARAM);
                if (interval != null && !interval.isBlank()) b.watchPlansFile(PlansFile.parsePeriod(interval.trim()));
                b.legacyRateLimitHeaders(Boolean.parseBoolean(config.getInitParameter(LEGACY_HEADERS_PARAM)));
                String bodyTimeout = config.getInitParameter(BODY_READ_TIMEOUT_PARAM);
                if (bodyTimeout != null && !bodyTimeout.isBlank()) {
                    b.bodyReadTimeout(PlansFile.parsePeriod(bodyTimeout.trim()));
                }
                engine = b.engine();
            } catch (InvalidPlansException e) {
                throw new ServletException("QuotaFilter '" + config.getFilterName() + "': invalid plans: " + e.getMessage(), e);
            } catch (IllegalArgumentException | IllegalStateException e) {
                throw new ServletException("QuotaFilter '" + config.getFilterName() + "': " + e.getMessage(), e);
            }
            Object registry = config.getServletContext() == null ? null
                    : config.getServletContext().getAttribute(METER_REGISTRY_ATTRIBUTE);
            if (registry != null) MeterRegistration.bind(registry, this);
        }
        Setup setup = engine.setup;
        if (setup.plansFile != null && setup.reloadInterval != null && watcher == null) {
            watcher = new PlansWatcher(setup.plansFile, setup.reloadInterval, setup.maxPlansFileBytes, this::reload);
        }
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain) throws IOException, ServletException {
        Engine e = engine;
        if (e == null) throw new ServletException("QuotaFilter used before init()");
        if (!(req instanceof HttpServletRequest request) || !(res instanceof HttpServletResponse response)
                || req.getDispatcherType() != DispatcherType.REQUEST) {
            chain.doFilter(req, res);
            return;
        }
        String path = RequestPath.normalize(pathOf(request));
        if (path == null) { // a ".." segment: which servlet runs it depends on the container
            refuse(e, response, Route.DEFAULT, null, false, null, INVALID_PATH);
            return;
        }
        Route route = e.routes.match(methodOf(request), path);
        if (!route.limited()) {
            chain.doFilter(request, response);
            return;
        }

        Optional<String> resolved;
        try {
            resolved = e.resolver.resolve(request);
        } catch (TenantRejectedException rejected) {
            Problem problem = new Problem(rejected.status(), rejected.reason(), rejected.getMessage(), null, 0);
            refuse(e, response, route, null, false, null, problem);
            return;
        } catch (RuntimeException bug) {
            e.setup.resolverFailures.failed("", bug);
            refuse(e, response, route, null, false, null, RESOLVER_FAILED);
            return;
        }

        String key;        // the bucket key
        String tenant;     // the tenant as named in bodies, metrics and logs
        String plan;
        BucketKind kind;
        if (resolved.isPresent()) {
            tenant = resolved.get();
            if (!TenantId.isValid(tenant)) {
                refuse(e, response, route, null, false, null, INVALID_TENANT);
                return;
            }
            Optional<TenantPlans.Placement> placed;
            try {
                placed = e.tenantPlans.place(tenant); // may ask the application's directory (a database...)
            } catch (RuntimeException directoryFailure) {
                e.setup.directoryFailures.failed(" for tenant " + tenant, directoryFailure);
                refuse(e, response, route, tenant, false, null, new Problem(500, "internal_error",
                        "The plan of tenant " + tenant + " could not be determined.", tenant, 0));
                return;
            }
            if (placed.isEmpty()) {
                refuse(e, response, route, tenant, false, null,
                        new Problem(403, "unknown_tenant", "Tenant " + tenant + " is not known.", tenant, 0));
                return;
            }
            key = tenant;
            plan = placed.get().plan();
            kind = placed.get().kind();
        } else if (e.plans.tenants().unresolved() == TenantSettings.Unresolved.ANONYMOUS) {
            key = anonymousKey(e.clientAddress.of(request));
            tenant = RequestStatistics.ANONYMOUS;
            plan = e.tenantPlans.anonymous().plan();
            kind = BucketKind.GUEST;
        } else {
            refuse(e, response, route, null, false, null, MISSING_TENANT);
            return;
        }
        String named = tenant == RequestStatistics.ANONYMOUS ? null : tenant; // as named in problem bodies
        boolean known = kind == BucketKind.TENANT; // an assignment or the directory knows it: metrics name it first

        // concurrency before tokens: a request never holds tokens while it waits for a slot
        Permit permit = null;
        if (route.group().isPresent()) {
            Acquisition acquired = e.concurrency.acquire(kind, key, plan, route.group().get());
            if (acquired instanceof Acquisition.Refused refused) {
                refuse(e, response, route, tenant, known, plan, tooMany(refused.asDecision(), named));
                return;
            }
            permit = ((Acquisition.Granted) acquired).permit();
        }

        HttpServletRequest admittedRequest = request;
        CostEstimator estimator = e.setup.estimators.get(route.name());
        Decision decision;
        boolean publish;
        try {
            decision = e.admission.admit(kind, key, plan, route.cost());
            if (estimator != null && decision instanceof Decision.Admitted reserved) {
                // The body is read only once the tenant holds its slot and its buckets could pay the
                // route's minimum cost, reserved while the body arrives: a tenant out of units or slots
                // is refused before a byte is read, and its own units bound its slow bodies in flight.
                CostEstimate estimate;
                try {
                    long maxCost = e.admission.maxCost(kind, key, plan);
                    estimate = CostEstimate.of(request, estimator, e.setup.body, maxCost, named);
                } catch (RuntimeException | Error failure) {
                    e.admission.reconcile(reserved, 0);
                    throw failure;
                }
                // A body read and refused (bad input) keeps the minimum: the server did the work, and a
                // client sending bad bodies spends its own units until it is refused before reading.
                if (estimate.problem() == null || !estimate.bodyRead()) e.admission.reconcile(reserved, 0);
                if (estimate.problem() != null) {
                    if (permit != null) permit.cancel();
                    refuse(e, response, route, tenant, known, plan, estimate.problem());
                    return;
                }
                admittedRequest = estimate.request();
                decision = e.admission.admit(kind, key, plan, estimate.cost());
            }
            publish = e.admission.publishes(plan);
        } catch (StoreUnavailableException unavailable) {
            // store.on-failure: closed — refuse rather than admit unchecked
            if (permit != null) permit.cancel();
            refuse(e, response, route, tenant, known, plan, new Problem(503, "store_unavailable", "The quota store is unavailable; "
                    + "retry after " + unavailable.retryAfterSeconds() + " s.", named, unavailable.retryAfterSeconds()));
            return;
        } catch (RuntimeException | Error failure) {
            if (permit != null) permit.cancel();
            throw failure;
        }
        if (decision instanceof Decision.Rejected rejected) {
            if (permit != null) permit.cancel(); // the request does not run: free its slot at once
            if (publish) {
                RateLimitHeaders.write(response, e.admission.status(kind, key, plan), rejected.retryAfterSeconds(),
                        e.setup.legacyHeaders);
            }
            refuse(e, response, route, tenant, known, plan, tooMany(rejected, named));
            return;
        }
        Decision.Admitted admitted = (Decision.Admitted) decision;
        try {
            if (admitted.shadowed()) e.setup.shadowLog.wouldReject(tenant, plan, route.name(), admitted.shadowRejection());
            e.statistics.record(tenant, known, plan, route.name(), Outcome.ALLOWED, null);
            if (publish) RateLimitHeaders.write(response, e.admission.status(kind, key, plan), 0, e.setup.legacyHeaders);
        } catch (RuntimeException | Error failure) {
            // the request will not run: give back its slot and every unit it was charged
            if (permit != null) permit.cancel();
            try {
                e.admission.reconcile(admitted, 0);
            } catch (RuntimeException refundFailure) {
                failure.addSuppressed(refundFailure);
            }
            if (failure instanceof Error error) throw error;
            LOG.log(System.Logger.Level.ERROR, "quota filter failed after admitting a request", failure);
            if (!response.isCommitted()) {
                response.reset();
                new Problem(500, "internal_error", "The request could not be processed.", named, 0).write(response);
            }
            return;
        }
        PermitRelease release = permit == null ? null : new PermitRelease(permit);
        HttpServletRequest visible = new AdmittedRequest(admittedRequest, admitted, release);
        Object[] running = QuotaGate.runningSlot();
        Object outer = running[0]; // another QuotaFilter's further out, if any
        running[0] = admitted;
        try {
            if (release == null) chain.doFilter(visible, response);
            else release.chain(visible, response, chain);
        } finally {
            running[0] = outer;
            CostReconciliation.whenDone(visible, e.admission, admitted, e.statistics, route.name());
        }
    }

    /** The 429 problem of a refused request; {@code named}: the tenant as named in problem bodies, or null. */
    private static Problem tooMany(Decision.Rejected rejected, String named) {
        long seconds = rejected.retryAfterSeconds();
        String detail = switch (rejected.reason()) {
            case TENANT_RATE -> "The tenant's rate limit is exhausted; retry after " + seconds + " s.";
            case GUEST_RATE -> "The quota shared by tenants without a plan of their own is exhausted; retry after "
                    + seconds + " s.";
            case GLOBAL_RATE -> "The API's shared quota is exhausted; retry after " + seconds + " s.";
            case CONCURRENCY -> "Too many requests of this kind are running at once; retry after " + seconds + " s.";
        };
        return new Problem(429, rejected.reason().code(), detail, named, seconds);
    }

    /**
     * The in-flight and queued counts of the concurrency groups, per group and per tenant (for
     * gauges).
     *
     * @throws IllegalStateException before a container-created filter's {@code init}
     */
    public ConcurrencyView concurrency() {
        return configured().concurrency;
    }

    /** Answers a refused request, counts it and logs it (rate-limited). */
    private static void refuse(Engine e, HttpServletResponse response, Route route, String tenant, boolean known,
                               String plan, Problem problem) throws IOException {
        e.statistics.record(tenant, known, plan, route.name(), Outcome.REJECTED, problem.reason());
        e.rejections.rejected(tenant, plan, route.name(), problem.reason(), problem.status(), problem.retryAfterSeconds());
        problem.write(response);
    }

    /** The filter's request counters, by tenant (bounded), plan, route, outcome and reason. */
    public RequestStatistics statistics() {
        return configured().statistics;
    }

    /** The admission core (bucket state, global quota). */
    public Admission admission() {
        return configured().admission;
    }

    /** Where the buckets live (for the store's meters: {@code quotagate.store.*}). */
    @Override
    public BucketStore store() {
        return configured().setup.store();
    }

    private Engine configured() {
        Engine e = engine;
        if (e == null) throw new IllegalStateException("QuotaFilter is not initialised yet");
        return e;
    }

    @Override
    public void destroy() {
        // buckets are heap objects or in Redis; the plans file watcher and a shared store the filter
        // created (store: redis in the plans file) have threads and connections to stop
        if (watcher != null) {
            watcher.close();
            watcher = null;
        }
        Engine e = engine;
        if (e != null && e.setup.ownsStore && e.setup.store instanceof AutoCloseable owned) {
            try {
                owned.close();
            } catch (Exception failure) {
                LOG.log(System.Logger.Level.WARNING, "quotagate: closing the bucket store failed: " + failure);
            }
        }
    }

    // ---- limits changed at runtime ------------------------------------------------------------

    /** The plans in force (the last loaded, applied or changed). */
    public Plans plans() {
        return configured().plans;
    }

    /**
     * Re-reads the plans file this filter was built from and puts it in force, keeping every bucket's
     * tokens ({@link Admission#INHERITANCE}). Routes, tenant assignments and settings change with it.
     *
     * @throws InvalidPlansException if the file is invalid or larger than {@link Builder#maxPlansFileBytes}
     *                               (refused by its size, unparsed); the plans in force stay
     * @throws IllegalStateException if the filter was built from {@link Plans}, not a file
     */
    public void reload() {
        Setup setup = configured().setup;
        if (setup.plansFile == null) {
            throw new IllegalStateException("QuotaFilter was built from plans, not from a plans file: nothing to reload");
        }
        apply(PlansFile.load(setup.plansFile, setup.maxPlansFileBytes));
    }

    /** Puts these plans in force, keeping every bucket's tokens (see {@link #reload()}). */
    public synchronized void apply(Plans plans) {
        Engine e = configured();
        Objects.requireNonNull(plans, "plans");
        for (RouteRule r : plans.routes()) {
            // permits are sized at start: a group the running filter does not know has no limiter
            if (r.group().isPresent() && !e.concurrency.groups().contains(r.group().get())) {
                throw new IllegalArgumentException(plans.source() + ": routes." + r.name() + ".group: concurrency group '"
                        + r.group().get() + "' is new; concurrency groups take effect at restart");
            }
        }
        Engine next = e.withPlans(plans);
        e.admission.apply(plans);
        engine = next;
    }

    /**
     * Replaces the global quota (the hidden quota shared by all tenants) while running; the global
     * bucket keeps its tokens, capped at the new capacity. An empty list removes the global quota.
     * A later {@link #reload()} of the plans file replaces this change.
     *
     * @throws IllegalArgumentException if a route's cost exceeds a new capacity
     */
    public synchronized void setGlobalQuota(List<Bandwidth> limits) {
        Plans current = plans();
        apply(current.withGlobal(limits.isEmpty() ? Optional.empty() : Optional.of(new GlobalQuota(limits))));
    }

    /**
     * Replaces one plan's limits while running; each of its tenants' buckets moves to them, keeping its
     * tokens, on its next request. A later {@link #reload()} of the plans file replaces this change.
     *
     * @throws IllegalArgumentException if the plan is unknown or a route's cost exceeds a new capacity
     */
    public synchronized void setPlanLimits(String plan, List<Bandwidth> limits) {
        apply(plans().withPlanLimits(plan, limits));
    }

    /**
     * Requests that shadow mode let through although the limits would have refused them with this
     * reason, since the filter started.
     */
    public long shadowRejections(Reason reason) {
        return configured().admission.shadowRejections(reason);
    }


    /**
     * The method in upper case: methods are case-sensitive, but an application that serves {@code get}
     * as {@code GET} must not find it cheaper.
     */
    private static String methodOf(HttpServletRequest request) {
        String method = request.getMethod();
        for (int i = 0; i < method.length(); i++) {
            char c = method.charAt(i);
            if (c >= 'a' && c <= 'z') return method.toUpperCase(java.util.Locale.ROOT);
        }
        return method;
    }

    /** The decoded path inside the application, as the servlet mapping saw it (not yet normalised). */
    private static String pathOf(HttpServletRequest request) {
        String servletPath = request.getServletPath();
        String pathInfo = request.getPathInfo();
        if (pathInfo == null) return servletPath.isEmpty() ? "/" : servletPath;
        return servletPath.isEmpty() ? pathInfo : servletPath + pathInfo;
    }

    /**
     * Anonymous clients are keyed by address with a leading {@code @}: a character no tenant id may
     * contain, so a client cannot name another's bucket through the tenant header.
     */
    static String anonymousKey(String remoteAddr) {
        StringBuilder b = new StringBuilder(remoteAddr.length() + 1).append('@');
        for (int i = 0; i < remoteAddr.length() && b.length() <= TenantId.MAX_LENGTH; i++) {
            char c = remoteAddr.charAt(i);
            if (c == '%') break; // IPv6 scope id
            if (c != '[' && c != ']') b.append(c);
        }
        return b.toString();
    }

    /** Everything a configured filter needs; immutable, replaced as a whole when the plans change. */
    private record Engine(RouteTable routes, TenantResolver resolver, TenantPlans tenantPlans,
                          ClientAddress clientAddress, Admission admission,
                          RequestStatistics statistics, RejectionLog rejections, ConcurrencyLimits concurrency,
                          Plans plans, Setup setup) {

        /** The same filter on other plans: the builder's own resolver and directory are kept. */
        Engine withPlans(Plans p) {
            TenantSettings s = p.tenants();
            TenantDirectory d = TenantDirectory.of(s.assignments());
            if (setup.directory != null) d = d.orElse(setup.directory);
            return new Engine(new RouteTable(p.routes()),
                    setup.resolver != null ? setup.resolver : TenantResolvers.fromSettings(s),
                    new TenantPlans(p, d), ClientAddress.behind(s.trustedProxies()),
                    admission, statistics, rejections, concurrency, p, setup);
        }
    }

    /**
     * What the builder fixed for the filter's lifetime, whatever the plans in force.
     *
     * @param directory the application's own directory, already cached; asked after the file's assignments
     * @param store     where the buckets live (a reloaded plans file's {@code store:} does not change it)
     * @param ownsStore whether the filter created the store (from {@code store:}) and closes it
     */
    private record Setup(TenantResolver resolver, TenantDirectory directory, Map<String, CostEstimator> estimators,
                         BodyLimits body, boolean legacyHeaders, Path plansFile, Duration reloadInterval,
                         long maxPlansFileBytes, ShadowLog shadowLog, BucketStore store, boolean ownsStore,
                         FailureLog resolverFailures, FailureLog directoryFailures) {
    }

    /**
     * Builds a {@link QuotaFilter} from loaded plans. Only {@link #plans} is required; the resolver
     * defaults to the plans file's {@code tenants.resolvers}, the directory to its
     * {@code tenants.assignments} (and overrides), the clock to the system clock, and the store to the
     * plans file's {@code store:} (a local store holding {@code tenants.max-tracked} buckets per table,
     * or a Redis store that the filter closes in {@link #destroy()}).
     */
    public static final class Builder {
        /** Default of {@link #maxEstimatedBodyBytes}: 1 MiB. */
        public static final int DEFAULT_MAX_ESTIMATED_BODY_BYTES = 1 << 20;
        /** Default of {@link #bodyReadTimeout}: 5 seconds. */
        public static final Duration DEFAULT_BODY_READ_TIMEOUT = Duration.ofSeconds(5);

        private Plans plans;
        private TenantResolver resolver;
        private TenantDirectory directory;
        private QuotaClock clock = QuotaClock.system();
        private BucketStore store;
        private StoreSettings storeSettings;
        private final Map<String, CostEstimator> estimators = new HashMap<>();
        private int maxBodyBytes = DEFAULT_MAX_ESTIMATED_BODY_BYTES;
        private Duration bodyReadTimeout = DEFAULT_BODY_READ_TIMEOUT;
        private boolean legacyHeaders;
        private Path plansFile;
        private long maxPlansFileBytes = PlansFile.DEFAULT_MAX_BYTES;
        private Duration reloadInterval;
        private int topTenants = DEFAULT_TOP_TENANTS;
        private ConcurrencyListener concurrencyListener = ConcurrencyListener.NONE;

        /** How long a plan from a user directory is cached. */
        public static final long DIRECTORY_TTL_MINUTES = 5;
        /** How long a user directory's "unknown tenant" is cached. */
        public static final long DIRECTORY_NEGATIVE_TTL_SECONDS = 30;

        private Builder() {
        }

        /** The plans (from {@link PlansFile}); required. */
        public Builder plans(Plans plans) {
            this.plans = Objects.requireNonNull(plans, "plans");
            return this;
        }

        /** How requests are mapped to tenants. */
        public Builder tenantResolver(TenantResolver resolver) {
            this.resolver = Objects.requireNonNull(resolver, "resolver");
            return this;
        }

        /**
         * Which plan each tenant is on, beyond the plans file's assignments (which are asked first).
         * The directory is cached ({@link TenantDirectory#cached}): at most {@code tenants.max-tracked}
         * answers, a plan for {@value #DIRECTORY_TTL_MINUTES} minutes, "unknown" for
         * {@value #DIRECTORY_NEGATIVE_TTL_SECONDS} s, timed by {@link #clock}.
         */
        public Builder tenantDirectory(TenantDirectory directory) {
            this.directory = Objects.requireNonNull(directory, "directory");
            return this;
        }

        /** Time source; also used by the default store. Give a custom store the same clock. */
        public Builder clock(QuotaClock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** Where buckets live (the caller closes a store it passes here, such as a {@code RedisStore}). */
        public Builder store(BucketStore store) {
            this.store = Objects.requireNonNull(store, "store");
            return this;
        }

        /**
         * Where buckets live, instead of the plans file's {@code store:} (e.g. a Redis URI from the
         * command line); a Redis store made from these is the filter's to close. Ignored if
         * {@link #store(BucketStore)} is given.
         */
        public Builder storeSettings(StoreSettings settings) {
            this.storeSettings = Objects.requireNonNull(settings, "settings");
            return this;
        }

        /** Told how long requests waited in concurrency queues (e.g. for a queue-wait timer). */
        public Builder concurrencyListener(ConcurrencyListener listener) {
            this.concurrencyListener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /**
         * How many tenants have their own {@code tenant} tag in metrics at once: assigned and
         * directory-known tenants first, then the heaviest by recent traffic (see
         * {@link RequestStatistics}); all others are counted as {@code other}. Default {@value #DEFAULT_TOP_TENANTS}.
         */
        public Builder topTenants(int topTenants) {
            if (topTenants < 0) throw new IllegalArgumentException("topTenants must be >= 0, was " + topTenants);
            this.topTenants = topTenants;
            return this;
        }

        /**
         * Takes the plans from this file (instead of {@link #plans}) and remembers it, so
         * {@link QuotaFilter#reload()} and {@link #watchPlansFile} can read it again. The file is read
         * by {@link #build()}, within {@link #maxPlansFileBytes}, whatever order the two are given in.
         */
        public Builder plansFile(Path file) {
            this.plansFile = Objects.requireNonNull(file, "file");
            this.plans = null;
            return this;
        }

        /**
         * The largest plans file read, at start and on every reload (default
         * {@link PlansFile#DEFAULT_MAX_BYTES}, 1 MiB). A larger file is refused by its size, before it
         * is parsed, with an {@link InvalidPlansException} naming the file, its size and the limit; on
         * reload the plans in force stay. Real plans files are a few kilobytes: the cap keeps a file
         * filled by mistake (or by an attacker with write access) from tying up a core in the parser.
         */
        public Builder maxPlansFileBytes(long bytes) {
            if (bytes <= 0 || bytes >= Integer.MAX_VALUE) {
                throw new IllegalArgumentException("maxPlansFileBytes must be 1 to " + (Integer.MAX_VALUE - 1) + ", was " + bytes);
            }
            this.maxPlansFileBytes = bytes;
            return this;
        }

        /**
         * Polls the {@link #plansFile} this often and reloads it when its content changes: a valid
         * file is put in force keeping every bucket's tokens; an invalid one is logged with its
         * file:line:field reason and the plans in force stay. The polling thread stops in
         * {@link QuotaFilter#destroy()}.
         */
        public Builder watchPlansFile(Duration interval) {
            Objects.requireNonNull(interval, "interval");
            if (interval.isZero() || interval.isNegative()) {
                throw new IllegalArgumentException("watchPlansFile: the interval must be > 0, was " + interval);
            }
            this.reloadInterval = interval;
            return this;
        }

        /**
         * Computes the cost of the route with this name (from the plans' {@code routes}) per request,
         * in place of its static {@code cost:}.
         */
        public Builder costEstimator(String routeName, CostEstimator estimator) {
            Objects.requireNonNull(routeName, "routeName");
            estimators.put(routeName, Objects.requireNonNull(estimator, "estimator"));
            return this;
        }

        /**
         * The largest body read for a {@link CostEstimator} (default 1 MiB); a larger one is answered
         * with 413 before the application sees it.
         */
        public Builder maxEstimatedBodyBytes(int bytes) {
            if (bytes <= 0 || bytes == Integer.MAX_VALUE) {
                throw new IllegalArgumentException("maxEstimatedBodyBytes must be > 0 and < Integer.MAX_VALUE, was " + bytes);
            }
            this.maxBodyBytes = bytes;
            return this;
        }

        /**
         * The longest a request body read for a {@link CostEstimator} may take to arrive, in all (default
         * 5 s). A slower body is answered with 408 ({@code reason: body_timeout}), its thread is free
         * again and the units reserved for it go back to the tenant. Keep it short: a slow client holds
         * a server thread for this long, at most as many times as its plan's units and concurrency
         * slots allow.
         */
        public Builder bodyReadTimeout(Duration timeout) {
            Objects.requireNonNull(timeout, "timeout");
            if (timeout.isZero() || timeout.isNegative()) {
                throw new IllegalArgumentException("bodyReadTimeout must be > 0, was " + timeout);
            }
            this.bodyReadTimeout = timeout;
            return this;
        }

        /**
         * For plans with {@code publish: true}, also send the legacy {@code X-RateLimit-Limit},
         * {@code X-RateLimit-Remaining} and {@code X-RateLimit-Reset} fields (default false).
         */
        public Builder legacyRateLimitHeaders(boolean legacy) {
            this.legacyHeaders = legacy;
            return this;
        }

        /**
         * The filter.
         *
         * @throws IllegalStateException if no plans were given
         * @throws InvalidPlansException  if the {@link #plansFile} is missing, larger than
         *                                {@link #maxPlansFileBytes} or invalid
         */
        public QuotaFilter build() {
            return new QuotaFilter(engine());
        }

        private Engine engine() {
            if (plans == null && plansFile != null) plans = PlansFile.load(plansFile, maxPlansFileBytes);
            if (plans == null) throw new IllegalStateException("QuotaFilter.builder(): plans(...) is required");
            if (reloadInterval != null && plansFile == null) {
                throw new IllegalStateException("QuotaFilter.builder(): watchPlansFile(...) needs plansFile(...)");
            }
            for (String route : estimators.keySet()) {
                if (plans.routes().stream().noneMatch(r -> r.name().equals(route) && r.limited())) {
                    throw new IllegalStateException("QuotaFilter.builder(): costEstimator for route '" + route
                            + "', but " + plans.source() + " has no limited route of that name");
                }
            }
            TenantSettings settings = plans.tenants();
            StoreSettings where = storeSettings != null ? storeSettings : plans.store();
            // a shared store comes from its module (store.type: redis needs io.quotagate:limiter-redis)
            BucketStore s = store != null ? store : BucketStore.open(where, settings.maxTracked(), clock);
            boolean owned = store == null && s instanceof AutoCloseable;
            TenantDirectory userDirectory = directory == null ? null
                    : TenantDirectory.cached(directory, settings.maxTracked(), Duration.ofMinutes(DIRECTORY_TTL_MINUTES),
                    Duration.ofSeconds(DIRECTORY_NEGATIVE_TTL_SECONDS), clock::nanoTime);
            RequestStatistics statistics = new RequestStatistics(topTenants, settings.assignments().keySet());
            ConcurrencyListener user = concurrencyListener;
            ConcurrencyListener waits = (group, tenant, nanos, admitted) -> {
                statistics.queueWait(group, tenant, nanos, admitted);
                user.queueWait(group, tenant, nanos, admitted);
            };
            Setup setup = new Setup(resolver, userDirectory, Map.copyOf(estimators),
                    new BodyLimits(maxBodyBytes, bodyReadTimeout), legacyHeaders, plansFile, reloadInterval,
                    maxPlansFileBytes, new ShadowLog(clock), s, owned,
                    new FailureLog(LOG, clock, "tenant resolver"), new FailureLog(LOG, clock, "tenant directory"));
            return new Engine(null, null, null, null, new Admission(plans, s), statistics,
                    new RejectionLog(LOG, clock), new ConcurrencyLimits(plans, clock, waits, s::instanceCount), null, setup)
                    .withPlans(plans);
        }
    }
}

package io.quotagate.filter.servlet;

import io.quotagate.filter.admission.Acquisition;
import io.quotagate.filter.admission.Admission;
import io.quotagate.filter.admission.ConcurrencyLimits;
import io.quotagate.filter.admission.ConcurrencyListener;
import io.quotagate.filter.admission.ConcurrencyView;
import io.quotagate.filter.admission.Decision;
import io.quotagate.filter.admission.Permit;
import io.quotagate.filter.admission.QuotaClock;
import io.quotagate.filter.admission.TenantPlans;
import io.quotagate.filter.metrics.QuotaSource;
import io.quotagate.filter.metrics.RequestStatistics;
import io.quotagate.filter.metrics.RequestStatistics.Outcome;
import io.quotagate.filter.route.Route;
import io.quotagate.filter.route.RouteTable;
import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.plans.InvalidPlansException;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
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
import java.time.Duration;
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
 * <p>Two ways to install it: {@link #builder()} for code, or a container-created instance with the
 * init-param {@value #PLANS_PARAM} naming the plans file ({@code classpath:plans.yml} or a path).
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

    private static final System.Logger LOG = System.getLogger(QuotaFilter.class.getName());

    private volatile Engine engine;

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
        if (engine != null) return; // built by the builder
        String location = config.getInitParameter(PLANS_PARAM);
        if (location == null || location.isBlank()) {
            throw new ServletException("QuotaFilter '" + config.getFilterName() + "': init-param '" + PLANS_PARAM
                    + "' is required (classpath:<resource> or a file path)");
        }
        try {
            engine = builder().plans(PlansFile.load(location.trim())).engine();
        } catch (InvalidPlansException e) {
            throw new ServletException("QuotaFilter '" + config.getFilterName() + "': invalid plans: " + e.getMessage(), e);
        }
        Object registry = config.getServletContext() == null ? null
                : config.getServletContext().getAttribute(METER_REGISTRY_ATTRIBUTE);
        if (registry != null) MeterRegistration.bind(registry, this);
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
        Route route = e.routes.match(request.getMethod(), pathOf(request));
        if (!route.limited()) {
            chain.doFilter(request, response);
            return;
        }

        Optional<String> resolved;
        try {
            resolved = e.resolver.resolve(request);
        } catch (TenantRejectedException rejected) {
            refuse(e, response, route, null, null, new Problem(rejected.status(), rejected.reason(), rejected.getMessage(), null, 0));
            return;
        } catch (RuntimeException bug) {
            LOG.log(System.Logger.Level.ERROR, "tenant resolver failed", bug);
            refuse(e, response, route, null, null,
                    new Problem(500, "internal_error", "The tenant of this request could not be determined.", null, 0));
            return;
        }

        String key;        // the bucket key
        String tenant;     // the tenant as named in bodies, metrics and logs
        String plan;
        BucketKind kind;
        if (resolved.isPresent()) {
            tenant = resolved.get();
            if (!TenantId.isValid(tenant)) {
                refuse(e, response, route, null, null, new Problem(400, "invalid_tenant", "The tenant id must be 1-"
                        + TenantId.MAX_LENGTH + " characters of A-Z a-z 0-9 . _ : -", null, 0));
                return;
            }
            Optional<TenantPlans.Placement> placed = e.tenantPlans.place(tenant);
            if (placed.isEmpty()) {
                refuse(e, response, route, tenant, null,
                        new Problem(403, "unknown_tenant", "Tenant " + tenant + " is not known.", tenant, 0));
                return;
            }
            key = tenant;
            plan = placed.get().plan();
            kind = placed.get().kind();
        } else if (e.settings.unresolved() == TenantSettings.Unresolved.ANONYMOUS) {
            key = anonymousKey(e.clientAddress.of(request));
            tenant = RequestStatistics.ANONYMOUS;
            plan = e.tenantPlans.anonymous().plan();
            kind = BucketKind.GUEST;
        } else {
            refuse(e, response, route, null, null,
                    new Problem(401, "missing_tenant", "No tenant could be identified for this request.", null, 0));
            return;
        }

        // concurrency first: a request never holds tokens while it waits for a slot
        Permit permit = null;
        if (route.group().isPresent()) {
            Acquisition acquired = e.concurrency.acquire(key, plan, route.group().get());
            if (acquired instanceof Acquisition.Refused refused) {
                refuse(e, response, route, tenant, plan, tooMany(refused.asDecision(), tenant));
                return;
            }
            permit = ((Acquisition.Granted) acquired).permit();
        }

        Decision decision;
        try {
            decision = e.admission.admit(kind, key, plan, route.cost());
        } catch (RuntimeException | Error failure) {
            if (permit != null) permit.cancel();
            throw failure;
        }
        if (decision instanceof Decision.Rejected rejected) {
            if (permit != null) permit.cancel(); // the request does not run: free its slot at once
            refuse(e, response, route, tenant, plan, tooMany(rejected, tenant));
            return;
        }
        e.statistics.record(tenant, plan, route.name(), Outcome.ALLOWED, null);
        if (permit == null) chain.doFilter(request, response);
        else PermitRelease.chain(permit, request, response, chain);
    }

    /** The 429 problem of a refused request. */
    private static Problem tooMany(Decision.Rejected rejected, String tenant) {
        long seconds = rejected.retryAfterSeconds();
        String detail = switch (rejected.reason()) {
            case TENANT_RATE -> "The tenant's rate limit is exhausted; retry after " + seconds + " s.";
            case GLOBAL_RATE -> "The API's shared quota is exhausted; retry after " + seconds + " s.";
            case CONCURRENCY -> "Too many requests of this kind are running at once; retry after " + seconds + " s.";
        };
        String named = tenant == RequestStatistics.ANONYMOUS ? null : tenant;
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
    private static void refuse(Engine e, HttpServletResponse response, Route route, String tenant, String plan,
                               Problem problem) throws IOException {
        e.statistics.record(tenant, plan, route.name(), Outcome.REJECTED, problem.reason());
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

    private Engine configured() {
        Engine e = engine;
        if (e == null) throw new IllegalStateException("QuotaFilter is not initialised yet");
        return e;
    }

    @Override
    public void destroy() {
        // buckets are plain heap objects; nothing to close for the local store
    }

    /** The decoded path inside the application, as the servlet mapping saw it. */
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

    /** Everything a configured filter needs; immutable. */
    private record Engine(RouteTable routes, TenantResolver resolver, TenantPlans tenantPlans,
                          ClientAddress clientAddress, TenantSettings settings, Admission admission,
                          RequestStatistics statistics, RejectionLog rejections, ConcurrencyLimits concurrency) {
    }

    /**
     * Builds a {@link QuotaFilter} from loaded plans. Only {@link #plans} is required; the resolver
     * defaults to the plans file's {@code tenants.resolvers}, the directory to its
     * {@code tenants.assignments} (and overrides), the clock to the system clock, and the store to a
     * local store holding {@code tenants.max-tracked} buckets per table.
     */
    public static final class Builder {
        private Plans plans;
        private TenantResolver resolver;
        private TenantDirectory directory;
        private QuotaClock clock = QuotaClock.system();
        private BucketStore store;
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

        /** Where buckets live. */
        public Builder store(BucketStore store) {
            this.store = Objects.requireNonNull(store, "store");
            return this;
        }

        /** Told how long requests waited in concurrency queues (e.g. for a queue-wait timer). */
        public Builder concurrencyListener(ConcurrencyListener listener) {
            this.concurrencyListener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /**
         * How many tenants keep their own {@code tenant} tag in metrics (assigned tenants first, then
         * the first others seen); all others are counted as {@code other}. Default {@value #DEFAULT_TOP_TENANTS}.
         */
        public Builder topTenants(int topTenants) {
            if (topTenants < 0) throw new IllegalArgumentException("topTenants must be >= 0, was " + topTenants);
            this.topTenants = topTenants;
            return this;
        }

        /**
         * The filter.
         *
         * @throws IllegalStateException if no plans were given
         */
        public QuotaFilter build() {
            return new QuotaFilter(engine());
        }

        private Engine engine() {
            if (plans == null) throw new IllegalStateException("QuotaFilter.builder(): plans(...) is required");
            TenantSettings settings = plans.tenants();
            BucketStore s = store != null ? store : BucketStore.local(settings.maxTracked(), clock);
            TenantDirectory d = TenantDirectory.of(settings.assignments());
            if (directory != null) {
                d = d.orElse(TenantDirectory.cached(directory, settings.maxTracked(), Duration.ofMinutes(DIRECTORY_TTL_MINUTES),
                        Duration.ofSeconds(DIRECTORY_NEGATIVE_TTL_SECONDS), clock::nanoTime));
            }
            RequestStatistics statistics = new RequestStatistics(topTenants, settings.assignments().keySet());
            ConcurrencyListener user = concurrencyListener;
            ConcurrencyListener waits = (group, tenant, nanos, admitted) -> {
                statistics.queueWait(group, tenant, nanos, admitted);
                user.queueWait(group, tenant, nanos, admitted);
            };
            return new Engine(new RouteTable(plans.routes()),
                    resolver != null ? resolver : TenantResolvers.fromSettings(settings),
                    new TenantPlans(plans, d), ClientAddress.behind(settings.trustedProxies()),
                    settings, new Admission(plans, s), statistics,
                    new RejectionLog(LOG, clock), new ConcurrencyLimits(plans, clock, waits));
        }
    }
}

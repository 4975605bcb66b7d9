package io.quotagate.filter;

import io.quotagate.filter.internal.admission.Outcome;
import io.quotagate.filter.internal.admission.Ticket;
import io.quotagate.filter.internal.route.RequestPath;
import io.quotagate.filter.internal.route.Route;
import io.quotagate.filter.metrics.StatisticsView;
import io.quotagate.filter.signals.QuotaListener;
import io.quotagate.filter.status.BandwidthStatus;
import io.quotagate.filter.status.ConcurrencyListener;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.store.QuotaClock;
import io.quotagate.plans.InvalidPlansException;
import io.quotagate.plans.PathPattern;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import io.quotagate.plans.StoreSpec;
import io.quotagate.tenant.TenantDirectory;
import io.quotagate.tenant.TenantRejectedException;
import io.quotagate.tenant.TenantResolver;
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
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * A servlet filter that limits each tenant of a multi-tenant API to its plan.
 *
 * <p>For every request it finds the route (cost in units, or not limited) and the tenant (through the
 * {@link TenantResolver} chain), then asks the servlet-free gate to place the tenant on its
 * plan and take the cost from its buckets and the global quota, under the one policy in force. A
 * refused request never reaches the application: it gets {@code 429 Too Many Requests} with
 * {@code Retry-After} (whole seconds, rounded up, until the request would be admitted) and an
 * {@code application/problem+json} body.
 * A tenant id that is not 1-64 characters of {@code [A-Za-z0-9._:-]} gets 400, a request without a
 * tenant gets 401 (under {@code unresolved: reject}), an unknown tenant under {@code unknown: reject}
 * gets 403.
 *
 * <p>A route with a concurrency {@code group} first takes a slot of that group
 * ({@code control().concurrency()} shows them; 429 {@code reason: concurrency} when the tenant's or the group's cap is
 * reached), then the tokens; the slot is given back at once if the buckets refuse, otherwise when the
 * request really ends, async requests included ({@code AdmittedRequest}). Install the filter with
 * async support so async servlets behind it work. Only {@code REQUEST} dispatches are limited: a
 * forward, include, error or async re-dispatch of an admitted request passes through.
 *
 * <p>Routes are matched on the upper-cased method ({@code GET} rules cover {@code HEAD}) and the
 * normalised path (empty and {@code .} segments dropped, path parameters cut, a {@code ..} segment
 * refused), so no variant served by the same servlet leaves its route.
 * The body of a route with a {@link CostEstimator} is read only while the request holds its slot and,
 * on a route without a concurrency group, its route's minimum cost, within
 * {@link Builder#bodyReadTimeout}: a request its buckets refuse is read only to state the wait for
 * its own cost.
 *
 * <p>Two ways to install it: {@link #builder()} for code, or a container-created instance with the
 * init-param {@value #PLANS_PARAM} naming the plans file ({@code classpath:plans.yml} or a path).
 *
 * <p>The limits can change while it runs, keeping every bucket's tokens, through {@link #control()}:
 * {@link QuotaControl#reload()} (or the file watcher) re-reads the plans file,
 * {@link QuotaControl#apply}, {@link QuotaControl#setGlobalQuota} and {@link QuotaControl#setPlanLimits}
 * change them programmatically. A route's cost may be computed per request
 * by a {@link CostEstimator} and settled afterwards with {@link ActualCost#report}.
 */
public final class QuotaFilter implements Filter {
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
    /**
     * Init-param: the longest a body read for a cost estimator may take, e.g. {@code 5s}
     * ({@link Builder#bodyReadTimeout}).
     */
    public static final String BODY_READ_TIMEOUT_PARAM = "body-read-timeout";
    /** Init-param: the most requests delayed by a {@code throttle:} at once ({@link Builder#maxDelayedRequests}). */
    public static final String MAX_DELAYED_REQUESTS_PARAM = "max-delayed-requests";
    /** Init-param: {@code true} to add the legacy {@code X-RateLimit-*} fields to published plans. */
    public static final String LEGACY_HEADERS_PARAM = "legacy-ratelimit-headers";
    /**
     * Init-param: the largest plans file read, in bytes, at start and on reload (default
     * {@link PlansFile#DEFAULT_MAX_BYTES}); see {@link Builder#maxPlansFileBytes}.
     */
    public static final String MAX_PLANS_FILE_BYTES_PARAM = "max-plans-file-bytes";
    /**
     * Init-param: a file keeping the local store's calendar quota counters across restarts
     * ({@link Builder#quotaSnapshot}); written every {@value #DEFAULT_QUOTA_SNAPSHOT_INTERVAL} unless
     * {@code quota-snapshot-interval} says otherwise.
     */
    public static final String QUOTA_SNAPSHOT_PARAM = "quota-snapshot";
    /** Init-param: how often the {@code quota-snapshot} file is written, e.g. {@code 30s}. */
    public static final String QUOTA_SNAPSHOT_INTERVAL_PARAM = "quota-snapshot-interval";
    /**
     * Init-param: the path of the tenant's own usage endpoint, e.g. {@code /rate_limit}
     * ({@link Builder#usageEndpoint}); absent: no endpoint.
     */
    public static final String USAGE_ENDPOINT_PARAM = "usage-endpoint";
    /** Init-param: {@code true} for the usage endpoint to answer tenants of hidden plans too. */
    public static final String USAGE_ENDPOINT_HIDDEN_PARAM = "usage-endpoint-shows-hidden-plans";
    /** Init-param: how many closed periods the quota counters are kept for ({@link Builder#closedPeriodsKept}). */
    public static final String CLOSED_PERIODS_KEPT_PARAM = "closed-periods-kept";
    /** Default interval of the {@code quota-snapshot} init-param. */
    public static final String DEFAULT_QUOTA_SNAPSHOT_INTERVAL = "1m";

    /** The refusals that name no tenant and depend on nothing of the request (immutable: shared). */
    private static final Outcome.Refused RESOLVER_FAILED =
            new Outcome.Refused(500, "internal_error", "The tenant of this request could not be determined.", null, 0);
    private static final Outcome.Refused INVALID_PATH = new Outcome.Refused(400, "invalid_path",
            "The request path has a '..' segment, which servlet containers resolve differently.", null, 0);

    private volatile FilterRuntime runtime;
    private PlansWatcher watcher;

    /** For containers ({@code web.xml}, {@code ServletContext.addFilter}): configured in {@link #init}. */
    public QuotaFilter() {
    }

    private QuotaFilter(FilterRuntime runtime) {
        this.runtime = runtime;
    }

    /** A builder for programmatic installation. */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public void init(FilterConfig config) throws ServletException {
        if (runtime == null) { // created by the container, not the builder
            try {
                runtime = FilterRuntime.compose(InitParams.builder(config));
            } catch (InvalidPlansException e) {
                throw new ServletException("QuotaFilter '" + config.getFilterName() + "': invalid plans: "
                        + e.getMessage(), e);
            } catch (IllegalArgumentException | IllegalStateException e) {
                throw new ServletException("QuotaFilter '" + config.getFilterName() + "': " + e.getMessage(), e);
            }
            Object registry = config.getServletContext() == null ? null
                    : config.getServletContext().getAttribute(METER_REGISTRY_ATTRIBUTE);
            if (registry != null) MeterRegistration.bind(registry, runtime);
        }
        FilterRuntime.Setup setup = runtime.setup;
        if (setup.plansFile() != null && setup.reloadInterval() != null && watcher == null) {
            watcher = new PlansWatcher(setup.plansFile(), setup.reloadInterval(), setup.maxPlansFileBytes(),
                    runtime::reload);
        }
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
            throws IOException, ServletException {
        FilterRuntime rt = runtime;
        if (rt == null) throw new ServletException("QuotaFilter used before init()");
        if (!(req instanceof HttpServletRequest request) || !(res instanceof HttpServletResponse response)
                || req.getDispatcherType() != DispatcherType.REQUEST) {
            chain.doFilter(req, res);
            return;
        }
        FilterRuntime.Engine engine = rt.engine(); // read once: one policy decides and settles this request
        String path = RequestPath.normalize(pathOf(request));
        OwnUsage own = rt.setup.ownUsage();
        if (own != null && path != null && own.matches(path)) { // the tenant's own usage: answered here, never charged
            own.answer(rt, engine, request, response);
            return;
        }
        if (path != null && unlimitedPath(rt, path)) {
            chain.doFilter(request, response);
            return;
        }
        if (path == null) { // a ".." segment: which servlet runs it depends on the container
            Answers.refuse(rt, response, Route.DEFAULT, INVALID_PATH, Answers.hasHttp1Body(request));
            return;
        }
        Route route = engine.policy().route(methodOf(request), path);
        if (!route.limited()) {
            chain.doFilter(request, response);
            return;
        }
        answer(rt, engine, route, decide(rt, engine, route, request), request, response, chain);
    }

    /** Answers a limited request as its outcome says: refused, delayed, or run holding its ticket. */
    private static void answer(FilterRuntime rt, FilterRuntime.Engine engine, Route route, Outcome outcome,
                               HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        if (outcome instanceof Outcome.Refused refused) {
            Answers.refuse(rt, response, route, refused, Answers.hasHttp1Body(request)); // refused before a byte is read
            return;
        }
        if (outcome instanceof Outcome.Delayed delayed) {
            delay(rt, engine, route, delayed, request, response);
            return;
        }
        // frees the slot and the units on every exit before the chain; the refusals below close it
        // themselves before answering, so a client that reads the answer finds its units back
        Ticket ticket = (Ticket) outcome;
        try {
            HttpServletRequest priced = priced(rt, engine, ticket, request, response);
            if (priced != null) run(rt, ticket, priced, response, chain);
        } finally {
            rt.gate.release(ticket); // frees nothing once the request runs
        }
    }

    /** The tenant from the resolvers, then the gate's decision. */
    private static Outcome decide(FilterRuntime rt, FilterRuntime.Engine engine, Route route,
                                  HttpServletRequest request) {
        String tenant;
        try {
            tenant = engine.resolver().resolve(request).orElse(null);
        } catch (TenantRejectedException rejected) {
            return new Outcome.Refused(rejected.status(), rejected.reason(), rejected.getMessage(), null, 0);
        } catch (RuntimeException bug) {
            rt.setup.resolverFailures().failed("", bug);
            return RESOLVER_FAILED;
        }
        // an estimated route's refusal reads the body to state the wait for its own cost (see priced)
        Outcome outcome = rt.gate.decide(engine.policy(), route, tenant, request, engine.facts());
        // the 401 says how to send a tenant under the resolvers in force, and how to need none
        return outcome instanceof Outcome.Refused r && r.status() == 401 && "missing_tenant".equals(r.reason())
                ? engine.missingTenant() : outcome;
    }

    /** Whether the path is one of the builder's {@link Builder#unlimitedPaths}, passed before any route. */
    private static boolean unlimitedPath(FilterRuntime rt, String path) {
        List<PathPattern> unlimited = rt.setup.unlimitedPaths();
        for (int i = 0, n = unlimited.size(); i < n; i++) { // by index: no iterator on every request
            if (unlimited.get(i).matches(path)) return true;
        }
        return false;
    }

    /**
     * The request to pass on: itself, or for a route with a {@link CostEstimator}, its body replayed
     * with the estimate charged instead of the minimum; null if it was refused (and answered). The body
     * is read only now that the tenant holds its slot and its buckets paid the route's minimum cost,
     * reserved while the body arrives: a tenant out of slots is refused before a byte is read, and its
     * own units and slots bound its slow bodies in flight. A tenant out of units is read only while it
     * holds the route's slot ({@link Ticket#unpaid()}), so that its refusal states the wait for the
     * request's own cost; it is charged nothing then, unless its body is bad input or too slow (the
     * minimum, in debt).
     */
    private static HttpServletRequest priced(FilterRuntime rt, FilterRuntime.Engine engine, Ticket ticket,
                                             HttpServletRequest request, HttpServletResponse response)
            throws IOException {
        CostEstimator estimator = rt.setup.estimators().get(ticket.route().name());
        if (estimator == null) return request;
        CostEstimate estimate;
        try {
            estimate = CostEstimate.of(request, estimator, rt.setup.body(), ticket.maxCost(), ticket.caller().tenant(),
                    rt.estimatorFailures);
        } catch (Error failure) {
            answerFailed(rt, ticket, request, response);
            // an Error says the JVM or the deployment is broken (out of memory, a class that did not load):
            // answered and cleaned up, it goes on to the container and the JVM's own handlers, never swallowed
            throw failure;
        }
        if (estimate.problem() != null) {
            // A body read and refused (bad input), too slow or broken off keeps the minimum: the server
            // did the work or held the slot, and a client sending such bodies spends its own units
            // until it is refused before reading.
            if (estimate.keepsCharge()) ticket.keepCharge();
            rt.gate.release(ticket); // before the answer: a client that sees it finds its units already back
            Problem p = estimate.problem();
            Answers.refuse(rt, response, ticket.route(),
                    new Outcome.Refused(p.status(), p.reason(), p.detail(), ticket.caller(), p.retryAfterSeconds()),
                    Answers.hasHttp1Body(request) && estimate.bodyLeftUnread());
            return null;
        }
        Outcome.Refused refused = rt.gate.reprice(ticket, estimate.cost());
        if (refused != null) {
            rt.gate.release(ticket);
            Answers.refuse(rt, response, ticket.route(), refused, false, estimate.cost()); // the body was read to its end
            return null;
        }
        return estimate.request();
    }

    /**
     * The estimator threw an {@link Error}: the units and the slot go back, then the client gets the 500 problem
     * answer, sent at once (the container, seeing the Error next, cannot replace it with its error page).
     */
    private static void answerFailed(FilterRuntime rt, Ticket ticket, HttpServletRequest request,
                                     HttpServletResponse response) {
        rt.gate.release(ticket);
        try {
            if (response.isCommitted()) return;
            response.reset();
            Answers.refuse(rt, response, ticket.route(), new Outcome.Refused(500, CostEstimate.FAILED.reason(),
                    CostEstimate.FAILED.detail(), ticket.caller(), 0), Answers.hasHttp1Body(request));
            // closed, not only flushed: the answer ends here (an HTTP/2 stream too) before the Error reaches the
            // container, which might otherwise reset a stream still open (Tomcat 10.1 did, once in a CI run)
            response.getOutputStream().close();
        } catch (IOException | RuntimeException | Error answering) {
            // out of memory again, or the client gone: the Error that got here is the one to throw
        }
    }

    /**
     * Delays a throttled request in async mode until its reserved units have arrived ({@link DelayedRequest});
     * refuses it at once, giving its reservation back, if its tenant's or the filter's room for delayed
     * requests is full, or the request cannot go async (this filter or one before it without async support;
     * the servlet's does not matter, it is reached by the dispatch that resumes the request): then
     * the answer is a 429 whose Retry-After is the wait its units had.
     */
    private static void delay(FilterRuntime rt, FilterRuntime.Engine engine, Route route, Outcome.Delayed delayed,
                              HttpServletRequest request, HttpServletResponse response) throws IOException {
        Ticket ticket = delayed.ticket();
        boolean async = request.isAsyncSupported();
        if (async && rt.throttling.enter(ticket, delayed.throttle().queue())) {
            try {
                DelayedRequest.start(rt, delayed, request, response);
                return;
            } catch (RuntimeException cannot) {
                rt.throttling.leave(ticket); // async mode refused: answered below like a full room
            }
        }
        rt.gate.release(ticket); // the reservation back before the answer: the client that sees it finds its units
        long seconds = io.quotagate.filter.status.RetryAfter.seconds(delayed.delayNanos());
        // its fields as its own reservation left the buckets, given back since
        List<BandwidthStatus> published = ticket.published();
        Answers.refuse(rt, response, route, new Outcome.Refused(429, "throttle_full",
                "Too many of this tenant's requests are already delayed; retry after " + seconds + " s.",
                ticket.caller(), seconds, published), Answers.hasHttp1Body(request));
    }

    /** Counts the admitted request, then runs the chain holding its slot until the request really ends. */
    private static void run(FilterRuntime rt, Ticket ticket, HttpServletRequest request, HttpServletResponse response,
                            FilterChain chain) throws IOException, ServletException {
        if (!Answers.admitted(rt, ticket, response)) return;
        // from here on the admitted request itself releases the slot and settles the units when it ends
        new AdmittedRequest(request, ticket, rt.gate, rt.statistics).chain(response, chain);
    }

    /**
     * The running filter's controls and monitoring view: plans in force, reload and runtime limit
     * changes, tenant status, statistics and concurrency counts ({@code new QuotaMeterBinder(filter.control())}).
     *
     * @throws IllegalStateException before a container-created filter's {@code init}
     */
    public QuotaControl control() {
        FilterRuntime rt = runtime;
        if (rt == null) throw new IllegalStateException("QuotaFilter is not initialised yet");
        return rt;
    }

    @Override
    public void destroy() {
        // buckets are heap objects or in Redis; the plans file watcher and a shared store the filter
        // created (store: redis in the plans file) have threads and connections to stop
        if (watcher != null) {
            watcher.close();
            watcher = null;
        }
        FilterRuntime rt = runtime;
        if (rt != null) rt.close();
    }

    /**
     * The method in upper case: methods are case-sensitive, but an application that serves {@code get}
     * as {@code GET} must not find it cheaper.
     */
    private static String methodOf(HttpServletRequest request) {
        String method = request.getMethod();
        for (int i = 0; i < method.length(); i++) {
            char c = method.charAt(i);
            if (c >= 'a' && c <= 'z') return method.toUpperCase(Locale.ROOT);
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
     * Builds a {@link QuotaFilter}. Only {@link #plans} or {@link #plansFile} is required; the resolver
     * defaults to the plans file's {@code tenants.resolvers}, the directory to its
     * {@code tenants.assignments} (and overrides), the clock to the system clock, and the store to the
     * plans file's {@code store:} (a local store holding {@code tenants.max-tracked} buckets per table,
     * or a Redis store that the filter closes in {@link #destroy()}). Settings that contradict each
     * other fail in {@link #build()}, naming both; the composition itself is {@code FilterRuntime}'s.
     */
    public static final class Builder {
        /** Default of {@link #maxEstimatedBodyBytes}: 1 MiB. */
        public static final int DEFAULT_MAX_ESTIMATED_BODY_BYTES = 1 << 20;
        /** Default of {@link #bodyReadTimeout}: 5 seconds. */
        public static final Duration DEFAULT_BODY_READ_TIMEOUT = Duration.ofSeconds(5);

        // read by FilterRuntime.compose, the composition root
        Plans plans;
        TenantResolver resolver;
        TenantDirectory directory;
        QuotaClock clock = QuotaClock.system();
        java.time.Clock wallClock = java.time.Clock.systemUTC();
        Path quotaSnapshotFile;
        Duration quotaSnapshotInterval;
        BucketStore store;
        StoreSpec storeSettings;
        final Map<String, CostEstimator> estimators = new HashMap<>();
        int maxBodyBytes = DEFAULT_MAX_ESTIMATED_BODY_BYTES;
        Duration bodyReadTimeout = DEFAULT_BODY_READ_TIMEOUT;
        boolean legacyHeaders;
        Path plansFile;
        long maxPlansFileBytes = PlansFile.DEFAULT_MAX_BYTES;
        Duration reloadInterval;
        int topTenants = DEFAULT_TOP_TENANTS;
        ConcurrencyListener concurrencyListener = ConcurrencyListener.NONE;
        int maxDelayedRequests = Throttling.DEFAULT_MAX_DELAYED;
        java.util.concurrent.ScheduledExecutorService throttleScheduler;
        /** Beyond its delay, how long a delayed request waits for a late scheduler (tests hold theirs). */
        Duration throttleGrace = Throttling.DEFAULT_GRACE;
        final List<PathPattern> unlimitedPaths = new ArrayList<>();
        final List<QuotaListener> listeners = new ArrayList<>();
        String usageEndpoint;
        boolean usageEndpointShowsHidden;
        int closedPeriodsKept = DEFAULT_CLOSED_PERIODS_KEPT;

        /** Default of {@link #closedPeriodsKept}. */
        public static final int DEFAULT_CLOSED_PERIODS_KEPT = 3;
        /** The most closed periods {@link #closedPeriodsKept} takes. */
        public static final int MAX_CLOSED_PERIODS_KEPT = 36;

        /** How long a plan from a user directory is cached. */
        public static final long DIRECTORY_TTL_MINUTES = 5;
        /** How long a user directory's "unknown tenant" is cached. */
        public static final long DIRECTORY_NEGATIVE_TTL_SECONDS = 30;

        private Builder() {
        }

        /** The plans (from {@link PlansFile}); this or {@link #plansFile} is required, not both. */
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
         * answers, a plan read again in the background after half of {@value #DIRECTORY_TTL_MINUTES} minutes
         * (and served from the cache meanwhile, and while the directory fails), "unknown" for
         * {@value #DIRECTORY_NEGATIVE_TTL_SECONDS} s, timed by {@link #clock}. A tenant the cache does not know
         * waits at most {@code tenants.directory.timeout} for its lookup, at most
         * {@code tenants.directory.max-lookups} run at once (both read when the filter is built), and a tenant
         * the directory cannot place now gets what {@code tenants.directory.unavailable} says, never a 500.
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

        /**
         * The calendar of the plans' calendar quotas (which day, week and month it is; their zones are
         * the quotas' own); the system's by default. Tests move it by hand.
         */
        public Builder wallClock(java.time.Clock wallClock) {
            this.wallClock = Objects.requireNonNull(wallClock, "wallClock");
            return this;
        }

        /**
         * Turns on the tenant's own usage endpoint at {@code path} (e.g. {@code /rate_limit}, like GitHub's): a
         * {@code GET} there is answered by the filter with the calling tenant's limits, calendar quotas and their
         * use as JSON, never charged, never another tenant's (the tenant is resolved as for any request; a query
         * parameter naming another is ignored), and 404 for a tenant whose plan keeps its limits hidden unless
         * {@code showHiddenPlans}. Off unless set. See docs/quotas.md.
         *
         * @param path an absolute path without {@code ..}, {@code //} or a trailing {@code /}
         * @throws IllegalArgumentException for a path that is not one
         */
        public Builder usageEndpoint(String path, boolean showHiddenPlans) {
            Objects.requireNonNull(path, "path");
            if (!path.startsWith("/") || path.length() < 2 || path.endsWith("/")
                    || !path.equals(RequestPath.normalize(path))) {
                throw new IllegalArgumentException("usage endpoint: the path must be absolute and normalised (no "
                        + "'..', '//', '.' segment or trailing '/'), was '" + path + "'");
            }
            this.usageEndpoint = path;
            this.usageEndpointShowsHidden = showHiddenPlans;
            return this;
        }

        /**
         * How many closed periods the calendar quotas' counters are kept for after their own ends (default
         * {@value #DEFAULT_CLOSED_PERIODS_KEPT}), so that the usage export ({@link QuotaControl#usage}) lists them:
         * a counter then expires at its period's end plus that many periods plus an hour. More periods keep more
         * counters in the store (see docs/redis.md). Every instance sharing a store should keep the same number.
         *
         * @throws IllegalArgumentException if not 0 to {@value #MAX_CLOSED_PERIODS_KEPT}
         */
        public Builder closedPeriodsKept(int periods) {
            if (periods < 0 || periods > MAX_CLOSED_PERIODS_KEPT) {
                throw new IllegalArgumentException("closed periods kept must be 0 to " + MAX_CLOSED_PERIODS_KEPT
                        + ", was " + periods);
            }
            this.closedPeriodsKept = periods;
            return this;
        }

        /**
         * Keeps the local store's calendar quota counters across restarts in {@code file}: read at
         * start, written every {@code interval} and in {@link QuotaFilter#destroy()} (a killed process
         * loses at most the last interval's counts). Only with the local store; the file's directory
         * must exist and be writable, and belong to the service's user alone. {@link #build()} fails
         * naming the file and the reason, leaving the file as it is, if it is there but cannot be read
         * or is not a snapshot (a directory, a link, a file of something else); an unreadable line of a
         * snapshot is skipped and logged, the others restored.
         */
        public Builder quotaSnapshot(Path file, Duration interval) {
            this.quotaSnapshotFile = Objects.requireNonNull(file, "file");
            this.quotaSnapshotInterval = Objects.requireNonNull(interval, "interval");
            return this;
        }

        /**
         * Where buckets live (the caller closes a {@code RedisStore} it passes here); not together with
         * {@link #storeSettings}.
         */
        public Builder store(BucketStore store) {
            this.store = Objects.requireNonNull(store, "store");
            return this;
        }

        /**
         * Where buckets live, instead of the plans file's {@code store:} (e.g. a Redis URI from the
         * command line): a type and its options, checked by the type's provider at {@link #build()}; a
         * shared store made from these is the filter's to close. Not together with {@link #store(BucketStore)}.
         */
        public Builder storeSettings(StoreSpec settings) {
            this.storeSettings = Objects.requireNonNull(settings, "settings");
            return this;
        }

        /**
         * Told of every quota event (near a limit, exhausted, throttled for long, recovered, the global
         * quota near its limit, store fallback), on the filter's signals thread, never a request's; the
         * thresholds are the plans file's {@code signals:}. May be called several times.
         */
        public Builder listener(QuotaListener listener) {
            listeners.add(Objects.requireNonNull(listener, "listener"));
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
         * {@link StatisticsView#topTenants()}); all others are counted as {@code other}. Default
         * {@value #DEFAULT_TOP_TENANTS}.
         */
        public Builder topTenants(int topTenants) {
            if (topTenants < 0) throw new IllegalArgumentException("topTenants must be >= 0, was " + topTenants);
            this.topTenants = topTenants;
            return this;
        }

        /**
         * Takes the plans from this file (instead of {@link #plans}, not together with it) and remembers it, so
         * {@link QuotaControl#reload()} and {@link #watchPlansFile} can read it again. The file is read
         * by {@link #build()}, within {@link #maxPlansFileBytes}, whatever order the two are given in.
         */
        public Builder plansFile(Path file) {
            this.plansFile = Objects.requireNonNull(file, "file");
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
                throw new IllegalArgumentException("maxPlansFileBytes must be 1 to " + (Integer.MAX_VALUE - 1)
                        + ", was " + bytes);
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
                throw new IllegalArgumentException("maxEstimatedBodyBytes must be > 0 and < Integer.MAX_VALUE, was "
                        + bytes);
            }
            this.maxBodyBytes = bytes;
            return this;
        }

        /**
         * The most requests delayed by a {@code throttle:} at once, over every tenant (default 10,000): one
         * more is refused at once with 429 ({@code reason: throttle_full}) and the wait its units had. Each
         * tenant is bounded by its throttle's {@code queue} as well, so one tenant cannot fill this room.
         */
        public Builder maxDelayedRequests(int max) {
            if (max <= 0) throw new IllegalArgumentException("maxDelayedRequests must be > 0, was " + max);
            this.maxDelayedRequests = max;
            return this;
        }

        /**
         * The scheduler that resumes requests delayed by a {@code throttle:} (default: one daemon thread of
         * the filter's own, stopped by {@code destroy()}). Its tasks only dispatch: the requests run on
         * container threads. A scheduler given here is the caller's to stop.
         */
        public Builder throttleScheduler(java.util.concurrent.ScheduledExecutorService scheduler) {
            this.throttleScheduler = Objects.requireNonNull(scheduler, "scheduler");
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
         * Paths that are never limited and need no tenant, whatever the plans file's routes (also after a
         * reload): e.g. {@code "/actuator/**"} for a framework's operational endpoints. Patterns as in
         * {@code routes[].paths} ({@code *} one segment, a final {@code **} any rest), matched against the
         * normalised path before any route. Default: none.
         *
         * @throws IllegalArgumentException if a pattern is not a valid path pattern
         */
        public Builder unlimitedPaths(String... patterns) {
            for (String p : patterns) unlimitedPaths.add(PathPattern.parse(Objects.requireNonNull(p, "pattern")));
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
         * @throws IllegalStateException if no plans were given, or settings contradict each other
         *                               ({@link #plans} and {@link #plansFile}, {@link #store} and
         *                               {@link #storeSettings}, {@link #watchPlansFile} without a file)
         * @throws InvalidPlansException  if the {@link #plansFile} is missing, larger than
         *                                {@link #maxPlansFileBytes} or invalid
         */
        public QuotaFilter build() {
            return new QuotaFilter(FilterRuntime.compose(this));
        }
    }
}

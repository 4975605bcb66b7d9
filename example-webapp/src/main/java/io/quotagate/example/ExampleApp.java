package io.quotagate.example;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.metrics.QuotaMeterBinder;
import io.quotagate.filter.redis.RedisSettings;
import io.quotagate.plans.InvalidPlansException;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import io.quotagate.plans.StoreSpec;
import io.quotagate.tenant.JdbcTenantDirectory;
import jakarta.servlet.DispatcherType;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.ContextHandlerCollection;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine;

import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.LongSupplier;

/**
 * An embedded Jetty 12 API protected by {@link QuotaFilter}: {@code GET /items/{id}} (cost 1),
 * {@code GET /reports/{id}?ms=N} (cost 5, asynchronous, N ms of simulated work, concurrency group
 * {@code reports}), {@code POST /v1/completions} (cost in tokens, reserved then reconciled) and
 * {@code GET /health} (never limited). The tenant comes from {@code X-Tenant-Id}.
 *
 * <p>The operational endpoints live on a second port, the management port (default
 * {@value #DEFAULT_MANAGEMENT_PORT} on 127.0.0.1): {@code GET /metrics} (Prometheus text),
 * {@code GET /dashboard} (live charts) and {@code PUT /admin/quota} (changes the hidden global quota;
 * only with an admin token), plus {@code GET /health}. They name customers and reveal the hidden
 * global quota, so the public API port answers 404 for them; only this machine reaches them unless
 * {@code --management-host} says otherwise, and only under the names the port is bound to (plus
 * {@code --management-allowed-hosts}), against DNS rebinding ({@link ManagementHosts}).
 */
@Command(name = "example-webapp", mixinStandardHelpOptions = true,
        description = "A multi-tenant demo API protected by quotagate.")
public final class ExampleApp implements Callable<Integer> {
    /** The plans file inside the jar, used when {@code --plans} is not given. */
    public static final String DEFAULT_PLANS = "classpath:example-plans.yml";
    /**
     * The management port unless {@code --management-port} says otherwise: beside the API's 8080, and
     * not 9090, where the Prometheus that scrapes it listens.
     */
    public static final int DEFAULT_MANAGEMENT_PORT = 8081;
    /** Paths served on the management port only (the API port answers 404 for them). */
    static final String[] MANAGEMENT_PATHS = {"/metrics", "/dashboard/*", "/admin/*"};

    @Option(names = "--port", description = "HTTP port (0 picks a free one; default ${DEFAULT-VALUE})")
    int port = 8080;

    @Option(names = "--host", description = "Address to bind (default ${DEFAULT-VALUE})")
    String host = "127.0.0.1";

    @Option(names = "--management-port", paramLabel = "PORT",
            description = "Port of /metrics, /dashboard and /admin/quota (0 picks a free one; default ${DEFAULT-VALUE})")
    int managementPort = DEFAULT_MANAGEMENT_PORT;

    @Option(names = "--management-host", paramLabel = "ADDRESS",
            description = "Address the management port binds (default ${DEFAULT-VALUE}: this machine only)")
    String managementHost = "127.0.0.1";

    @Option(names = "--management-allowed-hosts", paramLabel = "HOST", split = ",",
            description = "Host names or addresses the management port also answers to, besides those it is bound to "
                    + "(e.g. a name that reaches it through a proxy); others get 421")
    List<String> managementAllowedHosts = new java.util.ArrayList<>();

    @Option(names = "--max-plans-bytes", paramLabel = "BYTES",
            description = "Largest --plans file read, at start and on every reload (default ${DEFAULT-VALUE})")
    long maxPlansBytes = PlansFile.DEFAULT_MAX_BYTES;

    @Option(names = "--plans", paramLabel = "FILE",
            description = "Plans file (YAML), reloaded when it changes; default: the embedded example plans")
    String plans = DEFAULT_PLANS;

    @Option(names = "--redis", paramLabel = "URI",
            description = "Keep the buckets in Redis (redis://host:port; also rediss://, redis-sentinel://, "
                    + "redis-cluster://host1:port1,host2:port2) so several instances share one quota; "
                    + "overrides the plans file's store.uri")
    String redis;

    @Option(names = "--admin-token", paramLabel = "TOKEN", defaultValue = "${env:QUOTAGATE_ADMIN_TOKEN}",
            description = "Bearer token for PUT /admin/quota (default: env QUOTAGATE_ADMIN_TOKEN); none: the endpoint is off")
    String adminToken;

    @Option(names = "--tenants-jdbc", paramLabel = "URL", arity = "0..1", fallbackValue = TenantsDatabase.H2,
            description = "Tenants' plans, own limits and own quotas from a database: a JDBC URL (jdbc:postgresql://host:5432/db), "
                    + "or h2 (also the option alone) for the H2 file ./quotagate-tenants; table quotagate_tenants, "
                    + "created if absent; default: none, the plans file's assignments only")
    String tenantsJdbc;

    @Option(names = "--tenants-jdbc-user", paramLabel = "USER", description = "User of the --tenants-jdbc database")
    String tenantsJdbcUser;

    @Option(names = "--tenants-jdbc-password", paramLabel = "PASSWORD",
            defaultValue = "${env:QUOTAGATE_TENANTS_JDBC_PASSWORD}",
            description = "Password of the --tenants-jdbc database (default: env QUOTAGATE_TENANTS_JDBC_PASSWORD)")
    String tenantsJdbcPassword;

    @Option(names = "--tenants-jdbc-query", paramLabel = "SQL",
            description = "Query of one tenant in tables of your own: one ? (the tenant id), columns plan and, "
                    + "optionally, limits, quotas and zone (default: " + JdbcTenantDirectory.DEFAULT_QUERY + ")")
    String tenantsJdbcQuery;

    @Option(names = "--usage-endpoint", paramLabel = "PATH",
            description = "Answer each tenant's own limits, quotas and use at PATH on the API port (e.g. /rate_limit), "
                    + "never charged; default: off")
    String usageEndpoint;

    /** How often a {@code --plans} file is polled for changes. */
    static final Duration RELOAD_INTERVAL = Duration.ofSeconds(2);

    public static void main(String[] args) {
        System.exit(new CommandLine(new ExampleApp()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        if (port != 0 && port == managementPort) {
            System.err.println("example-webapp: --management-port must differ from --port (both " + port + ")");
            return 2;
        }
        if (maxPlansBytes <= 0 || maxPlansBytes >= Integer.MAX_VALUE) {
            System.err.println("example-webapp: --max-plans-bytes must be 1 to " + (Integer.MAX_VALUE - 1) + ", was " + maxPlansBytes);
            return 2;
        }
        ManagementHosts managementHosts;
        try {
            managementHosts = ManagementHosts.of(managementHost, managementAllowedHosts);
        } catch (IllegalArgumentException e) {
            System.err.println("example-webapp: --management-allowed-hosts: " + e.getMessage());
            return 2;
        } catch (java.net.UnknownHostException e) {
            System.err.println("example-webapp: --management-host: no such host '" + managementHost + "'");
            return 2;
        }
        QuotaFilter filter;
        try {
            QuotaFilter.Builder builder = QuotaFilter.builder().maxPlansFileBytes(maxPlansBytes);
            Plans loaded = PlansFile.load(plans, maxPlansBytes);
            if (plans.startsWith(PlansFile.CLASSPATH_PREFIX)) builder.plans(loaded);
            else builder.plansFile(Path.of(plans)).watchPlansFile(RELOAD_INTERVAL);
            if (redis != null) {
                try {
                    builder.storeSettings(withRedis(loaded, redis).store());
                } catch (IllegalArgumentException e) {
                    System.err.println("example-webapp: --redis: " + e.getMessage());
                    return 2;
                }
            }
            if (usageEndpoint != null) {
                try {
                    builder.usageEndpoint(usageEndpoint, false);
                } catch (IllegalArgumentException e) {
                    System.err.println("example-webapp: --usage-endpoint: " + e.getMessage());
                    return 2;
                }
            }
            if (tenantsJdbc != null) {
                try {
                    builder.tenantDirectory(tenantDirectory());
                } catch (IllegalArgumentException | IllegalStateException e) {
                    System.err.println("example-webapp: --tenants-jdbc: " + e.getMessage());
                    return 2;
                }
            }
            filter = withEstimators(builder, loaded).build();
        } catch (InvalidPlansException e) {
            System.err.println("example-webapp: invalid plans: " + e.getMessage());
            return 2;
        }
        String token = adminToken == null || adminToken.isBlank() ? null : adminToken.trim();
        Running app = start(host, port, managementHost, managementPort, filter, token, managementHosts, System::nanoTime);
        System.out.println(banner(app, plans, token != null, redis != null));
        if (tenantsJdbc != null) {
            System.out.println("tenants from " + TenantsDatabase.redact(TenantsDatabase.url(tenantsJdbc))
                    + (tenantsJdbcQuery == null ? " (table quotagate_tenants)" : " (" + tenantsJdbcQuery + ")"));
        }
        app.server().join();
        return 0;
    }

    /**
     * The {@code --tenants-jdbc} directory: the database reached, its default table created if absent,
     * the query run once; the filter caches it.
     *
     * @throws IllegalArgumentException for a value that is not a JDBC URL or {@code h2}, or a bad query
     * @throws IllegalStateException    if the database cannot be reached or the query does not run
     */
    JdbcTenantDirectory tenantDirectory() {
        return TenantsDatabase.open(tenantsJdbc, tenantsJdbcUser, tenantsJdbcPassword, tenantsJdbcQuery);
    }

    /** The start-up lines: both base URLs, and what runs where. */
    static String banner(Running app, String plans, boolean admin, boolean redis) {
        return "example-webapp listening on " + app.baseUri() + " (API; plans: " + plans + ", store: "
                + (redis ? "redis" : "plans file") + ")\n"
                + "management on " + app.managementUri() + " (/metrics, /dashboard, /admin/quota "
                + (admin ? "on" : "off") + ", /health)";
    }

    /**
     * The plans with their buckets in Redis at {@code uri}: the file's other store settings (prefix,
     * timeout...) are kept when it already names a Redis store.
     */
    public static Plans withRedis(Plans plans, String uri) {
        if (!RedisSettings.isRedisUri(uri)) {
            throw new IllegalArgumentException("expected redis://host:port, was '" + RedisSettings.redact(uri) + "'");
        }
        StoreSpec s = plans.store();
        return plans.withStore(s.type().equals(RedisSettings.TYPE)
                ? s.with("uri", uri) : StoreSpec.of(RedisSettings.TYPE, Map.of("uri", uri)));
    }

    /**
     * Starts the app (admin API off), its management port on a free port of 127.0.0.1; the caller
     * stops it with {@link Running#close()}.
     */
    public static Running start(String host, int port, Plans plans) throws Exception {
        return start(host, port, withEstimators(QuotaFilter.builder().plans(plans), plans).build());
    }

    /** Starts the app behind a filter built by the caller (to inject a clock or a store); admin API off. */
    public static Running start(String host, int port, QuotaFilter filter) throws Exception {
        return start(host, port, filter, null);
    }

    /**
     * Starts the app behind a filter built by the caller (see {@link #withEstimators}), its
     * management port on a free port of 127.0.0.1 ({@link Running#managementUri()}).
     *
     * @param adminToken the bearer token of {@code /admin/quota}, or null to leave it off (404)
     */
    public static Running start(String host, int port, QuotaFilter filter, String adminToken) throws Exception {
        return start(host, port, "127.0.0.1", 0, filter, adminToken);
    }

    /**
     * Starts the app: the API on {@code host:port} behind {@code filter}, the operational endpoints on
     * {@code managementHost:managementPort} (port 0: a free one).
     *
     * @param adminToken the bearer token of {@code /admin/quota}, or null to leave it off (404)
     */
    public static Running start(String host, int port, String managementHost, int managementPort, QuotaFilter filter,
                                String adminToken) throws Exception {
        return start(host, port, managementHost, managementPort, filter, adminToken, System::nanoTime);
    }

    /** As the public {@code start}, the admin endpoint's lockouts timed by {@code adminNanos} (tests). */
    static Running start(String host, int port, String managementHost, int managementPort, QuotaFilter filter,
                         String adminToken, LongSupplier adminNanos) throws Exception {
        return start(host, port, managementHost, managementPort, filter, adminToken,
                ManagementHosts.of(managementHost, List.of()), adminNanos);
    }

    /** As the public {@code start}, the management port answering {@code managementHosts} only. */
    static Running start(String host, int port, String managementHost, int managementPort, QuotaFilter filter,
                         String adminToken, ManagementHosts managementHosts, LongSupplier adminNanos) throws Exception {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        new QuotaMeterBinder(filter.control()).bindTo(registry);
        DashboardHistory history = new DashboardHistory(filter.control());

        Server server = new Server();
        ServerConnector api = connector(server, "api", host, port);
        ServerConnector management = connector(server, "management", managementHost, managementPort);

        // one context per connector ("@name" virtual hosts): a request to one port never reaches the other's servlets
        ServletContextHandler apiContext = new ServletContextHandler();
        apiContext.setContextPath("/");
        apiContext.setVirtualHosts(List.of("@api"));
        FilterHolder quota = new FilterHolder(filter);
        quota.setAsyncSupported(true); // the reports servlet behind it is asynchronous
        apiContext.addFilter(quota, "/*", EnumSet.of(DispatcherType.REQUEST));
        apiContext.addServlet(new ServletHolder(new ExampleServlets.Items()), "/items/*");
        ServletHolder reports = new ServletHolder(new ExampleServlets.Reports());
        reports.setAsyncSupported(true);
        apiContext.addServlet(reports, "/reports/*");
        apiContext.addServlet(new ServletHolder(new ExampleServlets.Health()), "/health");
        apiContext.addServlet(new ServletHolder(new Completions()), "/v1/completions");
        ServletHolder notHere = new ServletHolder(new ExampleServlets.NotFound());
        for (String path : MANAGEMENT_PATHS) apiContext.addServlet(notHere, path); // as if absent
        apiContext.addServlet(notHere, "/"); // not Jetty's default servlet, whose HttpServlet.doTrace echoes headers

        ServletContextHandler managementContext = new ServletContextHandler();
        managementContext.setContextPath("/");
        managementContext.setVirtualHosts(List.of("@management"));
        // before every servlet of the port: a DNS-rebinding page must not read a byte of it
        managementContext.addFilter(new FilterHolder(managementHosts), "/*", EnumSet.of(DispatcherType.REQUEST));
        managementContext.addServlet(new ServletHolder(new ObservabilityServlets.Metrics(registry)), "/metrics");
        managementContext.addServlet(new ServletHolder(new ObservabilityServlets.Dashboard(history)), "/dashboard/*");
        managementContext.addServlet(new ServletHolder(new ExampleServlets.Health()), "/health");
        if (adminToken != null) {
            AdminQuota quotaAdmin = new AdminQuota(filter, adminToken, new WrongTokenBackoff(adminNanos));
            managementContext.addServlet(new ServletHolder(quotaAdmin), "/admin/quota");
            ServletHolder tenantsAdmin = new ServletHolder(new AdminTenants(filter, quotaAdmin));
            managementContext.addServlet(tenantsAdmin, "/admin/tenants/*");
            managementContext.addServlet(tenantsAdmin, "/admin/overrides");
            managementContext.addServlet(new ServletHolder(new AdminUsage(filter, quotaAdmin)), "/admin/usage");
        } else {
            managementContext.addServlet(new ServletHolder(new ExampleServlets.NotFound()), "/admin/*"); // off: as if absent
        }
        managementContext.addServlet(new ServletHolder(new ExampleServlets.NotFound()), "/");

        server.setHandler(new ContextHandlerCollection(apiContext, managementContext));
        try {
            server.start();
        } catch (Exception e) {
            history.close();
            throw e;
        }
        return new Running(server, api.getLocalPort(), host, management.getLocalPort(), managementHost, filter, registry, history);
    }

    private static ServerConnector connector(Server server, String name, String host, int port) {
        ServerConnector connector = new ServerConnector(server);
        connector.setName(name);
        connector.setHost(host);
        connector.setPort(port);
        server.addConnector(connector);
        return connector;
    }

    /**
     * Registers the app's cost estimators: the {@code completions} route, when {@code plans} define
     * it, is priced in tokens (prompt tokens + {@code max_tokens}).
     */
    public static QuotaFilter.Builder withEstimators(QuotaFilter.Builder builder, Plans plans) {
        if (plans.routes().stream().anyMatch(r -> r.name().equals(Completions.ROUTE))) {
            builder.costEstimator(Completions.ROUTE, Completions::estimate);
        }
        return builder;
    }

    /** A started app; {@link #close()} stops it. */
    public static final class Running implements AutoCloseable {
        private final Server server;
        private final int port;
        private final String host;
        private final int managementPort;
        private final String managementHost;
        private final QuotaFilter filter;
        private final PrometheusMeterRegistry registry;
        private final DashboardHistory history;

        private Running(Server server, int port, String host, int managementPort, String managementHost, QuotaFilter filter,
                        PrometheusMeterRegistry registry, DashboardHistory history) {
            this.server = server;
            this.port = port;
            this.host = host;
            this.managementPort = managementPort;
            this.managementHost = managementHost;
            this.filter = filter;
            this.registry = registry;
            this.history = history;
        }

        /** {@code http://host:port} of the API. */
        public String baseUri() {
            return uri(host, port);
        }

        /** {@code http://host:port} of the management port: {@code /metrics}, {@code /dashboard}, {@code /admin/quota}. */
        public String managementUri() {
            return uri(managementHost, managementPort);
        }

        private static String uri(String host, int port) {
            return "http://" + (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
        }

        public Server server() {
            return server;
        }

        public int port() {
            return port;
        }

        /** The management port actually bound (a free one if 0 was asked for). */
        public int managementPort() {
            return managementPort;
        }

        /** The filter protecting the app (statistics, admission, runtime controls). */
        public QuotaFilter filter() {
            return filter;
        }

        /** The registry behind {@code /metrics}. */
        public PrometheusMeterRegistry registry() {
            return registry;
        }

        /** Takes a dashboard sample now instead of waiting for the next second (tests). */
        void sampleDashboard() {
            history.sample();
        }

        @Override
        public void close() throws Exception {
            history.close();
            server.stop();
            registry.close();
        }
    }
}

package io.quotagate.example;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.quotagate.filter.metrics.QuotaMeterBinder;
import io.quotagate.filter.servlet.QuotaFilter;
import io.quotagate.plans.InvalidPlansException;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import io.quotagate.plans.StoreSettings;
import jakarta.servlet.DispatcherType;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.Callable;
import java.util.function.LongSupplier;

/**
 * An embedded Jetty 12 API protected by {@link QuotaFilter}: {@code GET /items/{id}} (cost 1),
 * {@code GET /reports/{id}?ms=N} (cost 5, asynchronous, N ms of simulated work, concurrency group
 * {@code reports}), {@code POST /v1/completions} (cost in tokens, reserved then reconciled),
 * {@code GET /health} (never limited), {@code GET /metrics} (Prometheus text), {@code GET /dashboard}
 * (live charts) and {@code PUT /admin/quota} (changes the hidden global quota; only with an admin
 * token). The tenant comes from {@code X-Tenant-Id}.
 */
@Command(name = "example-webapp", mixinStandardHelpOptions = true,
        description = "A multi-tenant demo API protected by quotagate.")
public final class ExampleApp implements Callable<Integer> {
    /** The plans file inside the jar, used when {@code --plans} is not given. */
    public static final String DEFAULT_PLANS = "classpath:example-plans.yml";

    @Option(names = "--port", description = "HTTP port (0 picks a free one; default ${DEFAULT-VALUE})")
    int port = 8080;

    @Option(names = "--host", description = "Address to bind (default ${DEFAULT-VALUE})")
    String host = "127.0.0.1";

    @Option(names = "--plans", paramLabel = "FILE",
            description = "Plans file (YAML), reloaded when it changes; default: the embedded example plans")
    String plans = DEFAULT_PLANS;

    @Option(names = "--redis", paramLabel = "URI",
            description = "Keep the buckets in Redis (redis://host:port) so several instances share one quota; "
                    + "overrides the plans file's store.uri")
    String redis;

    @Option(names = "--admin-token", paramLabel = "TOKEN", defaultValue = "${env:QUOTAGATE_ADMIN_TOKEN}",
            description = "Bearer token for PUT /admin/quota (default: env QUOTAGATE_ADMIN_TOKEN); none: the endpoint is off")
    String adminToken;

    /** How often a {@code --plans} file is polled for changes. */
    static final Duration RELOAD_INTERVAL = Duration.ofSeconds(2);

    public static void main(String[] args) {
        System.exit(new CommandLine(new ExampleApp()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        QuotaFilter filter;
        try {
            QuotaFilter.Builder builder = QuotaFilter.builder();
            Plans loaded = PlansFile.load(plans);
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
            filter = withEstimators(builder, loaded).build();
        } catch (InvalidPlansException e) {
            System.err.println("example-webapp: invalid plans: " + e.getMessage());
            return 2;
        }
        String token = adminToken == null || adminToken.isBlank() ? null : adminToken.trim();
        Running app = start(host, port, filter, token);
        System.out.println("example-webapp listening on " + app.baseUri() + " (plans: " + plans + ", admin API "
                + (token == null ? "off" : "on") + ", store: " + (redis == null ? "plans file" : "redis") + ")");
        app.server().join();
        return 0;
    }

    /**
     * The plans with their buckets in Redis at {@code uri}: the file's other store settings (prefix,
     * timeout...) are kept when it already names a Redis store.
     */
    public static Plans withRedis(Plans plans, String uri) {
        if (!StoreSettings.isRedisUri(uri)) {
            throw new IllegalArgumentException("expected redis://host:port, was '" + StoreSettings.redact(uri) + "'");
        }
        StoreSettings s = plans.store();
        return plans.withStore(s.type() == StoreSettings.Type.REDIS
                ? s.withUri(uri) : StoreSettings.redis(uri));
    }

    /** Starts the app (admin API off); the caller stops it with {@link Running#close()}. */
    public static Running start(String host, int port, Plans plans) throws Exception {
        return start(host, port, withEstimators(QuotaFilter.builder().plans(plans), plans).build());
    }

    /** Starts the app behind a filter built by the caller (to inject a clock or a store); admin API off. */
    public static Running start(String host, int port, QuotaFilter filter) throws Exception {
        return start(host, port, filter, null);
    }

    /**
     * Starts the app behind a filter built by the caller (see {@link #withEstimators}).
     *
     * @param adminToken the bearer token of {@code /admin/quota}, or null to leave it off (404)
     */
    public static Running start(String host, int port, QuotaFilter filter, String adminToken) throws Exception {
        return start(host, port, filter, adminToken, System::nanoTime);
    }

    /** As the public {@code start}, the admin endpoint's lockouts timed by {@code adminNanos} (tests). */
    static Running start(String host, int port, QuotaFilter filter, String adminToken, LongSupplier adminNanos) throws Exception {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        new QuotaMeterBinder(filter).bindTo(registry);
        DashboardHistory history = new DashboardHistory(filter);

        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        FilterHolder quota = new FilterHolder(filter);
        quota.setAsyncSupported(true); // the reports servlet behind it is asynchronous
        context.addFilter(quota, "/*", EnumSet.of(DispatcherType.REQUEST));
        context.addServlet(new ServletHolder(new ObservabilityServlets.Metrics(registry)), "/metrics");
        context.addServlet(new ServletHolder(new ObservabilityServlets.Dashboard(history)), "/dashboard/*");
        context.addServlet(new ServletHolder(new ExampleServlets.Items()), "/items/*");
        ServletHolder reports = new ServletHolder(new ExampleServlets.Reports());
        reports.setAsyncSupported(true);
        context.addServlet(reports, "/reports/*");
        context.addServlet(new ServletHolder(new ExampleServlets.Health()), "/health");
        context.addServlet(new ServletHolder(new Completions()), "/v1/completions");
        if (adminToken != null) context.addServlet(new ServletHolder(new AdminQuota(filter, adminToken,
                new WrongTokenBackoff(adminNanos))), "/admin/quota");
        else context.addServlet(new ServletHolder(new ExampleServlets.NotFound()), "/admin/*"); // off: as if absent

        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost(host);
        connector.setPort(port);
        server.addConnector(connector);
        server.setHandler(context);
        try {
            server.start();
        } catch (Exception e) {
            history.close();
            throw e;
        }
        return new Running(server, connector.getLocalPort(), host, filter, registry, history);
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
        private final QuotaFilter filter;
        private final PrometheusMeterRegistry registry;
        private final DashboardHistory history;

        private Running(Server server, int port, String host, QuotaFilter filter, PrometheusMeterRegistry registry,
                        DashboardHistory history) {
            this.server = server;
            this.port = port;
            this.host = host;
            this.filter = filter;
            this.registry = registry;
            this.history = history;
        }

        /** {@code http://host:port}. */
        public String baseUri() {
            return "http://" + host + ":" + port;
        }

        public Server server() {
            return server;
        }

        public int port() {
            return port;
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

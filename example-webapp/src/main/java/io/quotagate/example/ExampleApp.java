package io.quotagate.example;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.quotagate.filter.metrics.QuotaMeterBinder;
import io.quotagate.filter.servlet.QuotaFilter;
import io.quotagate.plans.InvalidPlansException;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import jakarta.servlet.DispatcherType;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.EnumSet;
import java.util.concurrent.Callable;

/**
 * An embedded Jetty 12 API protected by {@link QuotaFilter}: {@code GET /items/{id}} (cost 1),
 * {@code GET /reports/{id}?ms=N} (cost 5, asynchronous, N ms of simulated work, concurrency group
 * {@code reports}), {@code GET /health} (never limited), {@code GET /metrics} (Prometheus text) and
 * {@code GET /dashboard} (live charts). The tenant comes from
 * {@code X-Tenant-Id}.
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

    @Option(names = "--plans", paramLabel = "FILE", description = "Plans file (YAML); default: the embedded example plans")
    String plans = DEFAULT_PLANS;

    public static void main(String[] args) {
        System.exit(new CommandLine(new ExampleApp()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        Plans loaded;
        try {
            loaded = PlansFile.load(plans);
        } catch (InvalidPlansException e) {
            System.err.println("example-webapp: invalid plans: " + e.getMessage());
            return 2;
        }
        Running app = start(host, port, loaded);
        System.out.println("example-webapp listening on " + app.baseUri() + " (plans: " + plans + ")");
        app.server().join();
        return 0;
    }

    /** Starts the app; the caller stops it with {@link Running#close()}. */
    public static Running start(String host, int port, Plans plans) throws Exception {
        return start(host, port, QuotaFilter.builder().plans(plans).build());
    }

    /** Starts the app behind a filter built by the caller (to inject a clock or a store). */
    public static Running start(String host, int port, QuotaFilter filter) throws Exception {
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

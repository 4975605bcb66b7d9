package io.quotagate.example.readme;

// README snippet
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.metrics.QuotaMeterBinder;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import java.io.IOException;
// README snippet end
import io.quotagate.plans.Plans;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;

/** docs/metrics.md, "Metrics (Micrometer)": compiled here, held verbatim by that page. */
class MetricsSnippet {
    void expose(Plans plans, ServletContextHandler context) {
        // README snippet
        QuotaFilter filter = QuotaFilter.builder().plans(plans).topTenants(50).build();
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT); // or any MeterRegistry
        new QuotaMeterBinder(filter.control()).bindTo(registry);
        // the Prometheus text on GET /metrics (a Jetty context here; any container alike)
        context.addServlet(new ServletHolder(new HttpServlet() {
            @Override
            protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
                response.setContentType("text/plain; version=0.0.4; charset=utf-8");
                response.getWriter().write(registry.scrape());
            }
        }), "/metrics");
        // README snippet end
    }
}

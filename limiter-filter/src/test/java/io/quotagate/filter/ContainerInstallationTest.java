package io.quotagate.filter;

import io.quotagate.filter.testing.FilterConfigs;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.FilterRegistration;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletContextEvent;
import jakarta.servlet.ServletContextListener;
import jakarta.servlet.ServletException;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.ee10.webapp.WebAppContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The filter created by the container from a plans-file init-param: web.xml and ServletContext.addFilter. */
class ContainerInstallationTest {

    private static void assertLimitsAtTwoRequests(JettyServer server) throws Exception {
        assertThat(Http.get(server.uri("/items/1"), "acme").statusCode()).isEqualTo(200);
        assertThat(Http.get(server.uri("/items/1"), "acme").statusCode()).isEqualTo(200);
        var refused = Http.get(server.uri("/items/1"), "acme");
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.headers().firstValue("Retry-After")).isPresent();
        assertThat(Http.get(server.uri("/health"), null).statusCode()).isEqualTo(200);
    }

    @Test
    void webXmlWithAPlansFilePath(@TempDir Path webapp) throws Exception {
        Path plans = webapp.resolve("quota-plans.yml");
        Files.writeString(plans, """
                plans: { free: { limits: [ { capacity: 2, refill: 1, period: 1m } ] } }
                routes: [ { name: ops, paths: ["/health"], limited: false } ]
                """);
        Files.createDirectories(webapp.resolve("WEB-INF"));
        Files.writeString(webapp.resolve("WEB-INF/web.xml"), """
                <?xml version="1.0" encoding="UTF-8"?>
                <web-app xmlns="https://jakarta.ee/xml/ns/jakartaee" version="6.0">
                  <filter>
                    <filter-name>quota</filter-name>
                    <filter-class>io.quotagate.filter.QuotaFilter</filter-class>
                    <async-supported>true</async-supported>
                    <init-param>
                      <param-name>plans</param-name>
                      <param-value>%s</param-value>
                    </init-param>
                  </filter>
                  <filter-mapping>
                    <filter-name>quota</filter-name>
                    <url-pattern>/*</url-pattern>
                  </filter-mapping>
                  <servlet>
                    <servlet-name>ok</servlet-name>
                    <servlet-class>io.quotagate.filter.testing.JettyServer$OkServlet</servlet-class>
                  </servlet>
                  <servlet-mapping>
                    <servlet-name>ok</servlet-name>
                    <url-pattern>/</url-pattern>
                  </servlet-mapping>
                </web-app>
                """.formatted(plans));
        WebAppContext context = new WebAppContext();
        context.setContextPath("/");
        context.setBaseResourceAsPath(webapp);
        context.setParentLoaderPriority(true);
        context.setThrowUnavailableOnStartupException(true);
        try (JettyServer server = JettyServer.start(context)) {
            assertLimitsAtTwoRequests(server);
        }
    }

    /** What an application's own listener (or a ServletContainerInitializer) does. */
    public static final class InstallsQuotaFilter implements ServletContextListener {
        @Override
        public void contextInitialized(ServletContextEvent event) {
            ServletContext ctx = event.getServletContext();
            FilterRegistration.Dynamic quota = ctx.addFilter("quota", QuotaFilter.class);
            quota.setInitParameter(QuotaFilter.PLANS_PARAM, "classpath:two-per-minute.yml");
            quota.setAsyncSupported(true); // the default is false: an async servlet behind it would answer 500
            quota.addMappingForUrlPatterns(EnumSet.of(DispatcherType.REQUEST), false, "/*");
        }
    }

    @Test
    void servletContextAddFilterWithAClassPathPlansFile() throws Exception {
        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        context.addEventListener(new InstallsQuotaFilter());
        context.addServlet(new ServletHolder(new JettyServer.OkServlet()), "/");
        ServletHolder async = new ServletHolder(new AsyncOkServlet());
        async.setAsyncSupported(true);
        context.addServlet(async, "/reports/*");
        try (JettyServer server = JettyServer.start(context)) {
            // the registration of docs/installation.md lets an async servlet run behind the filter (not a 500)
            assertThat(Http.get(server.uri("/reports/1"), "other").statusCode()).isEqualTo(200);
            assertLimitsAtTwoRequests(server);
        }
    }

    /** Answers from another thread, as a heavy report endpoint does. */
    static final class AsyncOkServlet extends jakarta.servlet.http.HttpServlet {
        @Override
        protected void doGet(jakarta.servlet.http.HttpServletRequest req, jakarta.servlet.http.HttpServletResponse resp) {
            jakarta.servlet.AsyncContext async = req.startAsync();
            async.start(() -> {
                try {
                    async.getResponse().getWriter().write("ok");
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                } finally {
                    async.complete();
                }
            });
        }
    }

    private static FilterConfig config(String plans) {
        return config(plans, null);
    }

    /** With {@code maxDelayed} as the init-param {@code max-delayed-requests} (null: not given). */
    private static FilterConfig config(String plans, String maxDelayed) {
        Map<String, String> params = new LinkedHashMap<>();
        params.put(QuotaFilter.PLANS_PARAM, plans);
        params.put(QuotaFilter.MAX_DELAYED_REQUESTS_PARAM, maxDelayed);
        return FilterConfigs.of(params);
    }

    @Test
    void startupFailsNamingFileLineAndFieldOfABadPlansFile(@TempDir Path dir) throws Exception {
        Path bad = dir.resolve("bad.yml");
        Files.writeString(bad, "plans:\n  free:\n    limits: [ { capacity: 0, refill: 1, period: 1s } ]\n");
        assertThatThrownBy(() -> new QuotaFilter().init(config(bad.toString())))
                .isInstanceOf(ServletException.class)
                .hasMessageContaining(bad + ":3:")
                .hasMessageContaining("plans.free.limits[0].capacity")
                .hasMessageContaining("must be > 0");
    }

    @Test
    void startupFailsWithoutAPlansInitParam() {
        assertThatThrownBy(() -> new QuotaFilter().init(config(null)))
                .isInstanceOf(ServletException.class)
                .hasMessageContaining("init-param 'plans' is required");
    }

    @Test
    void startupFailsNamingABadMaxDelayedRequestsInitParam(@TempDir Path dir) throws Exception {
        Path plans = dir.resolve("plans.yml");
        Files.writeString(plans, "plans:\n  free:\n    limits: [ { capacity: 1, refill: 1, period: 1s } ]\n");
        assertThatThrownBy(() -> new QuotaFilter().init(config(plans.toString(), "many")))
                .isInstanceOf(ServletException.class).hasMessageContaining("max-delayed-requests");
        assertThatThrownBy(() -> new QuotaFilter().init(config(plans.toString(), "0")))
                .isInstanceOf(ServletException.class).hasMessageContaining("maxDelayedRequests must be > 0");
        QuotaFilter accepted = new QuotaFilter();
        accepted.init(config(plans.toString(), "25"));
        accepted.destroy();
    }
}

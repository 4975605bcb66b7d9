package io.quotagate.containers.readme;

// README snippet
import io.quotagate.filter.QuotaFilter;
import io.quotagate.plans.PlansFile;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.FilterRegistration;
import org.apache.catalina.Context;
import org.apache.catalina.startup.Tomcat;
import java.util.EnumSet;
// README snippet end
import org.apache.catalina.LifecycleException;

import java.nio.file.Path;

/**
 * docs/installation.md, embedded Tomcat from code: compiled here, held verbatim by that page (example-webapp's
 * {@code ReadmeSnippetsTest}), run by {@link EmbeddedSnippetsTest}.
 */
class TomcatSnippet {
    Tomcat start(int port, Path workDir) throws LifecycleException {
        // README snippet
        QuotaFilter filter = QuotaFilter.builder()
                .plans(PlansFile.load("classpath:plans.yml"))
                .build();
        Tomcat tomcat = new Tomcat();
        tomcat.setBaseDir(workDir.toString());                // Tomcat's work files
        tomcat.setPort(port);
        Context context = tomcat.addContext("", null);        // the root context, no static files
        Tomcat.addServlet(context, "api", new ApiServlet()).addMapping("/*");
        // the filter instance, registered as the container starts the context
        context.addServletContainerInitializer((classes, servletContext) -> {
            FilterRegistration.Dynamic quota = servletContext.addFilter("quota", filter);
            quota.setAsyncSupported(true);                    // always (see above)
            quota.addMappingForUrlPatterns(EnumSet.of(DispatcherType.REQUEST), false, "/*");
        }, null);
        tomcat.getConnector();                                // creates the HTTP connector on the port
        tomcat.start();
        // README snippet end
        return tomcat;
    }
}

package io.quotagate.containers.readme;

// README snippet
import io.quotagate.filter.QuotaFilter;
import io.quotagate.plans.PlansFile;
import io.undertow.Undertow;
import io.undertow.servlet.Servlets;
import io.undertow.servlet.api.DeploymentInfo;
import io.undertow.servlet.api.DeploymentManager;
import io.undertow.servlet.util.ImmediateInstanceFactory;
import jakarta.servlet.DispatcherType;
// README snippet end
import jakarta.servlet.ServletException;

/**
 * docs/installation.md, Undertow from code with a filter built in code: compiled here, held verbatim by that page
 * (example-webapp's {@code ReadmeSnippetsTest}), run by {@link EmbeddedSnippetsTest}.
 */
class UndertowInCodeSnippet {
    /** What the snippet starts, for the test to stop. */
    record Running(Undertow server, DeploymentManager manager) {
    }

    Running start(int port) throws ServletException {
        // README snippet
        QuotaFilter filter = QuotaFilter.builder()
                .plans(PlansFile.load("classpath:plans.yml"))
                .build();
        DeploymentInfo app = Servlets.deployment()
                .setClassLoader(ApiServlet.class.getClassLoader())
                .setContextPath("/")
                .setDeploymentName("api")
                .addServlet(Servlets.servlet("api", ApiServlet.class).addMapping("/*"))
                .addFilter(Servlets.filter("quota", QuotaFilter.class, new ImmediateInstanceFactory<>(filter))
                        .setAsyncSupported(true))                 // Undertow's default is false
                .addFilterUrlMapping("quota", "/*", DispatcherType.REQUEST);
        DeploymentManager manager = Servlets.defaultContainer().addDeployment(app);
        manager.deploy();
        Undertow server = Undertow.builder()
                .addHttpListener(port, "0.0.0.0")
                .setHandler(manager.start())
                .build();
        server.start();
        // README snippet end
        return new Running(server, manager);
    }
}

package io.quotagate.containers.readme;

// README snippet
import io.quotagate.filter.QuotaFilter;
import io.undertow.servlet.Servlets;
import io.undertow.servlet.api.DeploymentInfo;
import jakarta.servlet.DispatcherType;
// README snippet end

/**
 * docs/installation.md, Undertow's own API: compiled here, held verbatim by that page (checked by example-webapp's
 * {@code ReadmeSnippetsTest}).
 */
class UndertowSnippet {
    DeploymentInfo deployment() {
        // README snippet
        DeploymentInfo app = Servlets.deployment()   // ... class loader, context path, servlets
                .addFilter(Servlets.filter("quota", QuotaFilter.class)
                        .addInitParam(QuotaFilter.PLANS_PARAM, "classpath:plans.yml")
                        .setAsyncSupported(true))   // Undertow's default is false
                .addFilterUrlMapping("quota", "/*", DispatcherType.REQUEST);
        // README snippet end
        return app;
    }
}

package io.quotagate.example.readme;

// README snippet
import io.quotagate.filter.QuotaFilter;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.FilterRegistration;
import java.util.EnumSet;
// README snippet end
import jakarta.servlet.ServletContext;

/** docs/installation.md, "From web.xml (or ServletContext.addFilter)": compiled here, held verbatim by that page. */
class ServletContextSnippet {
    void register(ServletContext servletContext) {
        // README snippet
        FilterRegistration.Dynamic quota = servletContext.addFilter("quota", QuotaFilter.class);
        quota.setInitParameter(QuotaFilter.PLANS_PARAM, "/etc/myapi/plans.yml");
        quota.setAsyncSupported(true);
        quota.addMappingForUrlPatterns(EnumSet.of(DispatcherType.REQUEST), false, "/*");
        // README snippet end
    }
}

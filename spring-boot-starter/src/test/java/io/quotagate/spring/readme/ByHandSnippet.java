package io.quotagate.spring.readme;

// README snippet
import io.quotagate.filter.QuotaFilter;
import io.quotagate.plans.PlansFile;
import jakarta.servlet.DispatcherType;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
// README snippet end
import org.springframework.context.annotation.Configuration;

/**
 * docs/spring-boot.md, "Without the starter": compiled here, held verbatim by that page (checked by
 * example-webapp's {@code ReadmeSnippetsTest}).
 */
@Configuration(proxyBeanMethods = false)
class ByHandSnippet {
    // README snippet
    @Bean
    FilterRegistrationBean<QuotaFilter> quotaFilter() {
        FilterRegistrationBean<QuotaFilter> registration = new FilterRegistrationBean<>(
                QuotaFilter.builder().plans(PlansFile.load("classpath:plans.yml")).build());
        registration.setAsyncSupported(true);
        registration.setDispatcherTypes(DispatcherType.REQUEST);
        registration.addUrlPatterns("/*");
        registration.setOrder(-99);   // after Spring Security's chain (SecurityProperties.DEFAULT_FILTER_ORDER + 1)
        return registration;
    }
    // README snippet end
}

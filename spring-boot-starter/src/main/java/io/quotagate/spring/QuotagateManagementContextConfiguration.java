package io.quotagate.spring;

import io.quotagate.filter.QuotaFilter;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextType;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;

/**
 * With {@code quotagate.limit-actuator=true}, the application's filter on a management port of its own too
 * ({@code management.server.port}): Boot serves it from a child context whose servlet container does not see the
 * application's filters. The same filter instance decides (one set of buckets and counters); the application's
 * container initialises and destroys it, so this registration only forwards requests to it.
 */
@ManagementContextConfiguration(value = ManagementContextType.CHILD, proxyBeanMethods = false)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnProperty(prefix = "quotagate", name = "limit-actuator", havingValue = "true")
@ConditionalOnBean(QuotaFilter.class)
class QuotagateManagementContextConfiguration {

    @Bean
    FilterRegistrationBean<Filter> quotaManagementFilterRegistration(QuotaFilter filter, QuotagateProperties properties) {
        Filter forward = filter::doFilter;
        FilterRegistrationBean<Filter> registration = new FilterRegistrationBean<>(forward);
        registration.setName("quotaFilter");
        registration.setAsyncSupported(true);
        registration.setDispatcherTypes(DispatcherType.REQUEST);
        registration.addUrlPatterns("/*");
        registration.setOrder(properties.order());
        return registration;
    }
}

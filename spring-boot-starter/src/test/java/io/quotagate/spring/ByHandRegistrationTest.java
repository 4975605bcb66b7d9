package io.quotagate.spring;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.plans.PlansFile;
import jakarta.servlet.DispatcherType;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/** The "without the starter" registration of docs/spring-boot.md compiles, and the starter stays out of its way. */
class ByHandRegistrationTest {

    @Test
    void theReadmesRegistrationRunsWithAsyncSupportAfterSecurity() {
        new WebApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(QuotagateAutoConfiguration.class))
                .withPropertyValues("quotagate.enabled=false")
                .withUserConfiguration(ByHand.class)
                .run(context -> {
                    FilterRegistrationBean<?> registration = context.getBean(FilterRegistrationBean.class);
                    assertThat(registration.isAsyncSupported()).isTrue();
                    assertThat(registration.getFilter()).isInstanceOf(QuotaFilter.class);
                    assertThat(registration.getOrder()).isEqualTo(QuotagateProperties.DEFAULT_ORDER);
                });
    }

    @Configuration(proxyBeanMethods = false)
    static class ByHand {
        // docs/spring-boot.md, "Without the starter": keep the two the same
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
    }
}

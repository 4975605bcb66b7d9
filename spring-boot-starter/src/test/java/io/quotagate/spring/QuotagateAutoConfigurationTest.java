package io.quotagate.spring;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.metrics.QuotaMeterBinder;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.store.QuotaClock;
import io.quotagate.tenant.TenantDirectory;
import io.quotagate.tenant.TenantResolver;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.security.SecurityProperties;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

class QuotagateAutoConfigurationTest {

    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(QuotagateAutoConfiguration.class))
            .withPropertyValues("quotagate.plans=classpath:runner-plans.yml");

    @Test
    void registersTheFilterRightAfterSpringSecurityWithAsyncSupportOnEveryPath() {
        runner.run(context -> {
            assertThat(context).hasSingleBean(QuotaFilter.class);
            FilterRegistrationBean<?> registration =
                    context.getBean(QuotagateAutoConfiguration.REGISTRATION_BEAN, FilterRegistrationBean.class);
            assertThat(registration.getFilter()).isSameAs(context.getBean(QuotaFilter.class));
            assertThat(registration.getOrder()).isEqualTo(SecurityProperties.DEFAULT_FILTER_ORDER + 1);
            assertThat(registration.isAsyncSupported()).isTrue();
            assertThat(registration.getUrlPatterns()).containsExactly("/*");
        });
    }

    @Test
    void keepsTheSameOrderWithoutSpringSecurityOnTheClassPath() {
        runner.withClassLoader(new FilteredClassLoader("org.springframework.security")).run(context -> {
            FilterRegistrationBean<?> registration =
                    context.getBean(QuotagateAutoConfiguration.REGISTRATION_BEAN, FilterRegistrationBean.class);
            assertThat(registration.getOrder()).isEqualTo(QuotagateProperties.DEFAULT_ORDER);
        });
    }

    @Test
    void takesUrlPatternsAndOrderFromProperties() {
        runner.withPropertyValues("quotagate.url-patterns=/api/*,/v2/*", "quotagate.order=5").run(context -> {
            FilterRegistrationBean<?> registration =
                    context.getBean(QuotagateAutoConfiguration.REGISTRATION_BEAN, FilterRegistrationBean.class);
            assertThat(registration.getUrlPatterns()).containsExactly("/api/*", "/v2/*");
            assertThat(registration.getOrder()).isEqualTo(5);
        });
    }

    @Test
    void installsNothingWhenDisabled() {
        runner.withPropertyValues("quotagate.enabled=false").run(context -> {
            assertThat(context).doesNotHaveBean(QuotaFilter.class);
            assertThat(context).doesNotHaveBean(QuotagateAutoConfiguration.REGISTRATION_BEAN);
        });
    }

    @Test
    void installsNothingOutsideAServletApplication() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(QuotagateAutoConfiguration.class))
                .withPropertyValues("quotagate.plans=classpath:runner-plans.yml")
                .run(context -> assertThat(context).doesNotHaveBean(QuotaFilter.class));
    }

    @Test
    void failsStartUpNamingQuotagatePlansWhenItIsMissing() {
        new WebApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(QuotagateAutoConfiguration.class))
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(invalidProperty(context.getStartupFailure()).getName()).isEqualTo("quotagate.plans");
                });
    }

    @Test
    void failsStartUpNamingQuotagatePlansAndTheFileWhenTheFileIsAbsent() {
        runner.withPropertyValues("quotagate.plans=classpath:no-such-plans.yml").run(context -> {
            assertThat(context).hasFailed();
            InvalidConfigurationPropertyValueException e = invalidProperty(context.getStartupFailure());
            assertThat(e.getName()).isEqualTo("quotagate.plans");
            assertThat(e.getMessage()).contains("no-such-plans.yml");
        });
    }

    @Test
    void refusesAWaitingRoomOfNoRequestNamingTheProperty() {
        for (String value : new String[] {"0", "-5"}) {
            runner.withPropertyValues("quotagate.max-delayed-requests=" + value).run(context -> {
                assertThat(context).hasFailed();
                InvalidConfigurationPropertyValueException e = invalidProperty(context.getStartupFailure());
                assertThat(e.getName()).isEqualTo("quotagate.max-delayed-requests");
                assertThat(e.getMessage()).contains(value, "at least 1");
            });
        }
    }

    @Test
    void refusesToWatchAClassPathResource() {
        runner.withPropertyValues("quotagate.watch-plans=2s").run(context -> {
            assertThat(context).hasFailed();
            assertThat(invalidProperty(context.getStartupFailure()).getName()).isEqualTo("quotagate.watch-plans");
        });
    }

    @Test
    void usesTheApplicationsTenantResolver() {
        // unresolved: reject in the plans file, so only a resolver that finds the tenant lets the request through
        runner.withBean(TenantResolver.class, () -> TenantResolver.header("X-Org")).run(context -> {
            MockHttpServletResponse response = post(context.getBean(QuotaFilter.class), Map.of("X-Org", "acme"));
            assertThat(response.getStatus()).isEqualTo(200);
        });
        runner.run(context -> {
            MockHttpServletResponse response = post(context.getBean(QuotaFilter.class), Map.of("X-Org", "acme"));
            assertThat(response.getStatus()).isEqualTo(401);
        });
    }

    @Test
    void usesTheApplicationsTenantDirectoryAndStore() {
        BucketStore store = BucketStore.local(1000, QuotaClock.system());
        runner.withBean(TenantDirectory.class, () -> tenant -> Optional.of("pro"))
                .withBean(BucketStore.class, () -> store)
                .run(context -> {
                    QuotaFilter filter = context.getBean(QuotaFilter.class);
                    assertThat(filter.control().tenantLimits("acme")).singleElement()
                            .satisfies(s -> assertThat(s.capacity()).isEqualTo(200));
                    assertThat(filter.control().store()).isSameAs(store);
                });
    }

    @Test
    void usesTheApplicationsRouteCostEstimator() {
        runner.withBean(RouteCostEstimator.class, () -> new RouteCostEstimator("chat", (request, body) -> 7))
                .run(context -> {
                    QuotaFilter filter = context.getBean(QuotaFilter.class);
                    assertThat(post(filter, Map.of("X-Tenant-Id", "acme")).getStatus()).isEqualTo(200);
                    assertThat(filter.control().tenantLimits("acme")).singleElement()
                            .satisfies(s -> assertThat(s.remaining()).isEqualTo(20 - 7));
                });
    }

    @Test
    void anApplicationsQuotaFilterReplacesTheDefaultAndIsRegisteredTheSameWay() {
        QuotaFilter own = QuotaFilter.builder().plans(io.quotagate.plans.PlansFile.load("classpath:runner-plans.yml"))
                .build();
        runner.withBean(QuotaFilter.class, () -> own).run(context -> {
            assertThat(context.getBean(QuotaFilter.class)).isSameAs(own);
            FilterRegistrationBean<?> registration =
                    context.getBean(QuotagateAutoConfiguration.REGISTRATION_BEAN, FilterRegistrationBean.class);
            assertThat(registration.getFilter()).isSameAs(own);
            assertThat(registration.isAsyncSupported()).isTrue();
        });
    }

    @Test
    void bindsTheMetersToTheApplicationsRegistry() {
        runner.withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
                        CompositeMeterRegistryAutoConfiguration.class))
                .withUserConfiguration(RegistryConfiguration.class)
                .run(context -> {
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    assertThat(registry.get(QuotaMeterBinder.GLOBAL_CAPACITY).gauge().value()).isEqualTo(500.0);
                });
    }

    @Test
    void definesNoMeterBinderWithoutARegistry() {
        runner.run(context -> assertThat(context).doesNotHaveBean("quotagateMeterBinder"));
    }

    @Test
    void definesTheEndpointOnlyWhenItIsExposedAndTheHealthIndicatorByDefault() {
        runner.run(context -> {
            assertThat(context).doesNotHaveBean(QuotagateEndpoint.class);
            assertThat(context).hasSingleBean(QuotagateHealthIndicator.class);
        });
        runner.withPropertyValues("management.endpoints.web.exposure.include=quotagate",
                        "management.health.quotagate.enabled=false")
                .run(context -> {
                    assertThat(context).hasSingleBean(QuotagateEndpoint.class);
                    assertThat(context).doesNotHaveBean(QuotagateHealthIndicator.class);
                });
    }

    private static MockHttpServletResponse post(QuotaFilter filter, Map<String, String> headers) throws Exception {
        MockHttpServletRequest request = new MockHttpServletRequest("POST", "/chat");
        request.setServletPath("/chat");
        headers.forEach(request::addHeader);
        request.setContent("{}".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        MockHttpServletResponse response = new MockHttpServletResponse();
        filter.doFilter(request, response, new MockFilterChain());
        return response;
    }

    private static InvalidConfigurationPropertyValueException invalidProperty(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof InvalidConfigurationPropertyValueException e) return e;
        }
        throw new AssertionError("no InvalidConfigurationPropertyValueException in", failure);
    }

    @Configuration(proxyBeanMethods = false)
    static class RegistryConfiguration {
        @Bean
        SimpleMeterRegistry simpleMeterRegistry() {
            return new SimpleMeterRegistry();
        }
    }
}

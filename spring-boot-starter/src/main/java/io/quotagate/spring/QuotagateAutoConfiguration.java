package io.quotagate.spring;

import io.micrometer.core.instrument.binder.MeterBinder;
import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.metrics.QuotaMeterBinder;
import io.quotagate.filter.signals.QuotaListener;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.plans.InvalidPlansException;
import io.quotagate.plans.PlansFile;
import io.quotagate.tenant.TenantDirectory;
import io.quotagate.tenant.TenantResolver;
import jakarta.servlet.DispatcherType;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;

/**
 * Installs a {@link QuotaFilter} in a Spring Boot servlet application from {@link QuotagateProperties}
 * and the limits, given by a plans file ({@code quotagate.plans}) or written under {@code quotagate.limits} with the
 * plans file's keys and rules (one of the two, never both), and, when the application has them, its Micrometer
 * meters, a {@code quotagate} health indicator and the {@code quotagate} Actuator endpoint.
 *
 * <p>Application beans take part instead of the plans file's defaults: a {@link TenantResolver}, a
 * {@link TenantDirectory}, a {@link BucketStore} (the application closes it: Spring does for an
 * {@code AutoCloseable} bean) and any number of {@link RouteCostEstimator}s. A {@link QuotaFilter} bean of the
 * application replaces the one built here and is registered the same way (async support on, after Spring
 * Security); a bean named {@value #REGISTRATION_BEAN} replaces the registration.
 *
 * <p>The container initialises and destroys the filter it was registered with (starting and stopping the plans
 * file watcher, closing a Redis store the plans file asked for).
 */
@AutoConfiguration(afterName = {
        // the meter binder needs to see the application's MeterRegistry: after every registry is defined
        "org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration",
        "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
        // the same two on Boot 4.0, where metrics moved to a module of their own
        "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration"})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnProperty(prefix = "quotagate", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(QuotagateProperties.class)
public class QuotagateAutoConfiguration {

    /** The name of the filter's {@link FilterRegistrationBean}; an application bean of this name replaces it. */
    public static final String REGISTRATION_BEAN = "quotaFilterRegistration";

    private static final String PLANS_PROPERTY = "quotagate.plans";
    private static final String WATCH_PROPERTY = "quotagate.watch-plans";
    private static final String MAX_DELAYED_PROPERTY = "quotagate.max-delayed-requests";
    private static final String ACTUATOR_ENDPOINT = "org.springframework.boot.actuate.endpoint.annotation.Endpoint";

    /**
     * The filter, built from the plans file or the limits under {@code quotagate.limits}, and the application's
     * optional beans.
     *
     * @throws InvalidConfigurationPropertyValueException naming {@code quotagate.plans} (or
     *         {@code quotagate.watch-plans}) when it is missing, invalid or contradicts the other, or the property
     *         under {@code quotagate.limits} that the plans rules refuse
     */
    @Bean
    @ConditionalOnMissingBean
    public QuotaFilter quotaFilter(QuotagateProperties properties,
                                   ObjectProvider<TenantResolver> resolver,
                                   ObjectProvider<TenantDirectory> directory,
                                   ObjectProvider<BucketStore> store,
                                   ObjectProvider<RouteCostEstimator> estimators,
                                   ObjectProvider<QuotaListener> listeners,
                                   Environment environment) {
        String plans = properties.plans();
        boolean file = plans != null && !plans.isBlank();
        Optional<InlineLimits> inline = InlineLimits.read(environment);
        if (file && inline.isPresent()) {
            throw new InvalidConfigurationPropertyValueException(PLANS_PROPERTY, plans, "the limits are written under "
                    + InlineLimits.PREFIX + " too; they come from one place: remove quotagate.plans or "
                    + InlineLimits.PREFIX);
        }
        if (!file && inline.isEmpty()) {
            throw new InvalidConfigurationPropertyValueException(PLANS_PROPERTY, plans,
                    "the limits are required: set quotagate.plans=classpath:plans.yml or a file path, or write them"
                            + " under " + InlineLimits.PREFIX);
        }
        QuotaFilter.Builder builder = QuotaFilter.builder();
        if (properties.maxDelayedRequests() <= 0) {
            throw new InvalidConfigurationPropertyValueException(MAX_DELAYED_PROPERTY, properties.maxDelayedRequests(),
                    "at least 1 request must be allowed to wait for a throttle");
        }
        builder.maxDelayedRequests(properties.maxDelayedRequests());
        usage(builder, properties);
        if (inline.isPresent()) {
            if (properties.watchPlans() != null) {
                throw new InvalidConfigurationPropertyValueException(WATCH_PROPERTY, properties.watchPlans(),
                        "only a plans file can be watched; the limits under " + InlineLimits.PREFIX
                                + " change with the application's configuration, at restart");
            }
            builder.plans(inline.get().plans());
        } else {
            plansFile(builder, plans, properties.watchPlans());
        }
        if (!properties.limitActuator()) actuatorPaths(environment).ifPresent(builder::unlimitedPaths);
        resolver.ifAvailable(builder::tenantResolver);
        directory.ifAvailable(builder::tenantDirectory);
        store.ifAvailable(builder::store);
        listeners.orderedStream().forEach(builder::listener); // every QuotaListener bean hears the quota events
        Set<String> routes = new HashSet<>();
        estimators.orderedStream().forEach(e -> {
            if (!routes.add(e.route())) {
                throw new IllegalStateException("two RouteCostEstimator beans for the route '" + e.route() + "'");
            }
            builder.costEstimator(e.route(), e.estimator());
        });
        try {
            return builder.build();
        } catch (InvalidPlansException e) {
            // the file is read by build(), a store's or resolver's options are checked there: the property's problem
            if (inline.isPresent()) throw inline.get().invalid(e);
            throw new InvalidConfigurationPropertyValueException(PLANS_PROPERTY, plans, e.getMessage());
        }
    }

    /** The plans file at {@code plans} (class path or file), watched every {@code watch} if set (a file only). */
    /** The own-usage endpoint and the closed periods kept, each failing start-up naming its property. */
    private static void usage(QuotaFilter.Builder builder, QuotagateProperties properties) {
        QuotagateProperties.UsageEndpoint endpoint = properties.usageEndpoint();
        if (endpoint != null && endpoint.path() != null && !endpoint.path().isBlank()) {
            try {
                builder.usageEndpoint(endpoint.path().trim(), endpoint.showHiddenPlans());
            } catch (IllegalArgumentException e) {
                throw new InvalidConfigurationPropertyValueException("quotagate.usage-endpoint.path", endpoint.path(),
                        e.getMessage());
            }
        }
        try {
            builder.closedPeriodsKept(properties.closedPeriodsKept());
        } catch (IllegalArgumentException e) {
            throw new InvalidConfigurationPropertyValueException("quotagate.closed-periods-kept",
                    properties.closedPeriodsKept(), e.getMessage());
        }
    }

    private static void plansFile(QuotaFilter.Builder builder, String plans, Duration watch) {
        boolean classpath = plans.startsWith(PlansFile.CLASSPATH_PREFIX);
        try {
            if (classpath) {
                builder.plans(PlansFile.load(plans));
            } else {
                // a file is remembered by the filter, so QuotaControl.reload() and the watcher can read it again
                builder.plansFile(Path.of(plans.startsWith("file:") ? plans.substring("file:".length()) : plans));
            }
        } catch (InvalidPlansException e) {
            throw new InvalidConfigurationPropertyValueException(PLANS_PROPERTY, plans, e.getMessage());
        }
        if (watch != null) {
            if (classpath) {
                throw new InvalidConfigurationPropertyValueException(WATCH_PROPERTY, watch,
                        "only a plans file given by its path can be watched, not " + plans);
            }
            try {
                builder.watchPlansFile(watch);
            } catch (IllegalArgumentException e) {
                throw new InvalidConfigurationPropertyValueException(WATCH_PROPERTY, watch, e.getMessage());
            }
        }
    }

    /**
     * The Actuator's paths when it serves on the application's port: left unlimited (a readiness probe or a scrape
     * has no tenant) unless {@code quotagate.limit-actuator}. A management port of its own is a servlet context
     * of its own (the same rule as Boot's {@code ManagementPortType}: a port set, and 0 or not {@code server.port}),
     * filtered only when opted in ({@link QuotagateManagementContextConfiguration}); under a base path of {@code /}
     * the endpoints are not told apart from the API's.
     */
    static Optional<String> actuatorPaths(Environment env) {
        if (!ClassUtils.isPresent(ACTUATOR_ENDPOINT, QuotagateAutoConfiguration.class.getClassLoader())) {
            return Optional.empty();
        }
        Integer management = env.getProperty("management.server.port", Integer.class);
        Integer server = env.getProperty("server.port", Integer.class);
        boolean samePort = management == null || (server == null && management == 8080)
                || (management != 0 && management.equals(server));
        String base = trimSlash(env.getProperty("management.endpoints.web.base-path", "/actuator"));
        if (!samePort || base.isEmpty()) return Optional.empty();
        return Optional.of(trimSlash(env.getProperty("spring.mvc.servlet.path", "")) + base + "/**");
    }

    private static String trimSlash(String path) {
        return path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
    }

    /**
     * Registers the filter for {@code REQUEST} dispatches with async support (the filter holds a concurrency
     * slot across an async request and frees it when the request completes; without async support an async
     * controller behind it cannot start), on {@code quotagate.url-patterns} at {@code quotagate.order}.
     */
    @Bean(name = REGISTRATION_BEAN)
    @ConditionalOnMissingBean(name = REGISTRATION_BEAN)
    public FilterRegistrationBean<QuotaFilter> quotaFilterRegistration(QuotaFilter filter,
                                                                      QuotagateProperties properties) {
        FilterRegistrationBean<QuotaFilter> registration = new FilterRegistrationBean<>(filter);
        registration.setName("quotaFilter");
        registration.setAsyncSupported(true);
        registration.setDispatcherTypes(DispatcherType.REQUEST);
        registration.setUrlPatterns(properties.urlPatterns());
        registration.setOrder(properties.order());
        return registration;
    }

    /** The filter's meters in the application's registry (Boot binds every {@link MeterBinder} bean). */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.micrometer.core.instrument.MeterRegistry")
    @ConditionalOnBean(type = "io.micrometer.core.instrument.MeterRegistry")
    static class MetricsConfiguration {

        @Bean
        @ConditionalOnMissingBean(name = "quotagateMeterBinder")
        MeterBinder quotagateMeterBinder(QuotaFilter filter) {
            return new QuotaMeterBinder(filter.control());
        }
    }

    /** The {@code quotagate} health indicator, with Boot 3.5's Actuator. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.actuate.health.HealthIndicator")
    @ConditionalOnEnabledHealthIndicator("quotagate")
    static class HealthConfiguration {

        @Bean
        @ConditionalOnMissingBean(name = "quotagateHealthIndicator")
        QuotagateHealthIndicator quotagateHealthIndicator(QuotaFilter filter) {
            return new QuotagateHealthIndicator(filter.control());
        }
    }

    /**
     * The {@code quotagate} health indicator, with Boot 4.0's Actuator (its health types moved packages). The
     * annotations name Boot 4 types: on Boot 3.5 they cannot be loaded and the condition on the class fails first.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
    @org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator("quotagate")
    static class Boot4HealthConfiguration {

        @Bean
        @ConditionalOnMissingBean(name = "quotagateHealthIndicator")
        QuotagateBoot4HealthIndicator quotagateHealthIndicator(QuotaFilter filter) {
            return new QuotagateBoot4HealthIndicator(filter.control());
        }
    }

    /** The {@code quotagate} Actuator endpoint, when exposed. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.actuate.endpoint.annotation.Endpoint")
    @ConditionalOnAvailableEndpoint(endpoint = QuotagateEndpoint.class)
    static class EndpointConfiguration {

        @Bean
        @ConditionalOnMissingBean
        QuotagateEndpoint quotagateEndpoint(QuotaFilter filter) {
            return new QuotagateEndpoint(filter.control());
        }
    }
}

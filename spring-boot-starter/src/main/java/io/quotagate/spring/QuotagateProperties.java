package io.quotagate.spring;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

import java.time.Duration;
import java.util.List;

/**
 * The {@code quotagate.*} properties of the Spring Boot starter. The limits must be given: a plans file
 * ({@code quotagate.plans}) or the same keys written under {@code quotagate.limits} (read by {@code InlineLimits},
 * not bound here: the plans module's parser binds and checks them; their metadata is in
 * {@code additional-spring-configuration-metadata.json}).
 *
 * <p>The {@code @param} texts below are the IDE's descriptions (configuration metadata): plain text, no tags.
 *
 * @param plans       The plans file: classpath:plans.yml or a file path (a file: prefix is allowed). Required unless
 *                    the limits are written under quotagate.limits, and not together with them; a missing or invalid
 *                    file fails start-up naming this property.
 * @param enabled     Whether the starter installs the quota filter.
 * @param urlPatterns URL patterns the filter is mapped to. Which requests are limited, and at what cost, is
 *                    still decided by the plans file's routes.
 * @param order       Order of the filter among the servlet filters. The default, -99, is right after Spring
 *                    Security's filter chain (-100), so the principal and attribute resolvers see the
 *                    authenticated request.
 * @param watchPlans  How often to poll the plans file and reload it when its content changes, keeping every
 *                    bucket's tokens. Only for a file path, not a class-path resource nor quotagate.limits. Unset:
 *                    never.
 * @param limitActuator Whether the filter limits the Actuator's endpoints too, on the application's port and on a
 *                    separate management port (management.server.port). By default they are never limited and need
 *                    no tenant (health probes, Prometheus scrapes).
 * @param maxDelayedRequests The most requests a throttle (throttle: in the plans) may keep delayed at once on this
 *                    instance, all tenants together; one more is refused at once with 429 throttle_full. Each
 *                    tenant is bounded by its throttle's queue too. At least 1.
 * @param usageEndpoint The tenant's own usage endpoint (like GitHub's GET /rate_limit): off unless a path is set.
 * @param closedPeriodsKept How many closed periods of each calendar quota the store keeps after the period ends, for
 *                    the usage export (current period plus this many closed ones). 0 to 36.
 */
@ConfigurationProperties("quotagate")
public record QuotagateProperties(
        String plans,
        @DefaultValue("true") boolean enabled,
        @DefaultValue("/*") List<String> urlPatterns,
        @DefaultValue("" + QuotagateProperties.DEFAULT_ORDER) int order,
        Duration watchPlans,
        @DefaultValue("false") boolean limitActuator,
        @DefaultValue("" + QuotagateProperties.DEFAULT_MAX_DELAYED_REQUESTS) int maxDelayedRequests,
        UsageEndpoint usageEndpoint,
        @DefaultValue("3") int closedPeriodsKept) {

    /**
     * The tenant's own usage endpoint ({@code quotagate.usage-endpoint.*}).
     *
     * @param path            Path of the tenant's own usage endpoint, answered by the filter with the calling tenant's
     *                        limits, quotas and use as JSON, never charged; e.g. /rate_limit. Unset: no endpoint.
     * @param showHiddenPlans Whether tenants of plans that keep their limits hidden (no publish: true) are answered
     *                        too; by default they get 404.
     */
    public record UsageEndpoint(String path, @DefaultValue("false") boolean showHiddenPlans) {
    }

    /**
     * Right after Spring Security's filter chain ({@code SecurityProperties.DEFAULT_FILTER_ORDER + 1}). A literal,
     * because Spring Security is optional here and its classes must not be loaded when it is absent.
     */
    public static final int DEFAULT_ORDER = -99;

    /** Default of {@code quotagate.max-delayed-requests}: {@code QuotaFilter.Builder#maxDelayedRequests}'s default. */
    public static final int DEFAULT_MAX_DELAYED_REQUESTS = 10_000;
}

package io.quotagate.spring;

import io.quotagate.filter.QuotaControl;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;

import java.util.Objects;

/**
 * The {@code quotagate} health component of Spring Boot 3.5 (for Boot 4.0: {@link QuotagateBoot4HealthIndicator}):
 * where the buckets live and, for a store shared by several instances (Redis), whether it answers.
 *
 * <ul>
 * <li>A local store: {@code UP}, {@code store: local}.</li>
 * <li>A shared store: {@code store: shared}, {@code available}, {@code instances}, {@code fallbackDecisions},
 *     {@code outages}. While it cannot be reached, {@code fallback: true} and the status depends on
 *     {@code store.on-failure}: {@code UP} under {@code open} (the default: this instance keeps admitting from
 *     local buckets sized to its share, so it still serves traffic, and a readiness probe must not take every
 *     instance out at once because Redis is down), {@code DOWN} under {@code closed} (limited requests get 503
 *     until Redis answers again).</li>
 * </ul>
 */
public final class QuotagateHealthIndicator implements HealthIndicator {

    private final QuotaControl control;

    /** A health indicator of the filter with these controls. */
    public QuotagateHealthIndicator(QuotaControl control) {
        this.control = Objects.requireNonNull(control, "control");
    }

    @Override
    public Health health() {
        StoreStatus status = StoreStatus.of(control);
        return (status.up() ? Health.up() : Health.down()).withDetails(status.details()).build();
    }
}

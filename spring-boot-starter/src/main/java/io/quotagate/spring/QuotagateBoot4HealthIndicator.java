package io.quotagate.spring;

import io.quotagate.filter.QuotaControl;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

import java.util.Objects;

/**
 * The {@code quotagate} health component on Spring Boot 4.0, whose health types moved to
 * {@code org.springframework.boot.health}; it reports exactly what {@link QuotagateHealthIndicator} reports on
 * Boot 3.5.
 */
public final class QuotagateBoot4HealthIndicator implements HealthIndicator {

    private final QuotaControl control;

    /** A health indicator of the filter with these controls. */
    public QuotagateBoot4HealthIndicator(QuotaControl control) {
        this.control = Objects.requireNonNull(control, "control");
    }

    @Override
    public Health health() {
        StoreStatus status = StoreStatus.of(control);
        return (status.up() ? Health.up() : Health.down()).withDetails(status.details()).build();
    }
}

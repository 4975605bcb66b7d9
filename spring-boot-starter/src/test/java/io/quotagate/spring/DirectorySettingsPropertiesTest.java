package io.quotagate.spring;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.plans.TenantSettings;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Spring Boot application sets the tenant directory's bounds and its outage answer as properties, under
 * {@code quotagate.limits.tenants.directory}, the plans file's keys (docs/tenants.md, "When the directory is
 * down"); a value the plans file refuses fails start-up naming the property.
 */
class DirectorySettingsPropertiesTest {
    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(QuotagateAutoConfiguration.class))
            .withPropertyValues(
                    "quotagate.limits.plans.free.limits[0].capacity=20",
                    "quotagate.limits.plans.free.limits[0].refill=10",
                    "quotagate.limits.plans.free.limits[0].period=10s");

    @Test
    void theDirectorysTimeoutLookupsAndAnswerAreProperties() {
        runner.withPropertyValues(
                        "quotagate.limits.tenants.directory.timeout=100ms",
                        "quotagate.limits.tenants.directory.max-lookups=4",
                        "quotagate.limits.tenants.directory.unavailable=refuse")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    TenantSettings t = context.getBean(QuotaFilter.class).control().plans().tenants();
                    assertThat(t.directoryTimeout()).isEqualTo(Duration.ofMillis(100));
                    assertThat(t.directoryLookups()).isEqualTo(4);
                    assertThat(t.directoryFailure()).isEqualTo(TenantSettings.DirectoryFailure.REFUSE);
                });
    }

    @Test
    void aBadValueFailsStartUpNamingTheProperty() {
        runner.withPropertyValues("quotagate.limits.tenants.directory.unavailable=fail")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("quotagate.limits.tenants.directory.unavailable")
                        .hasStackTraceContaining("expected one of [default, refuse]"));
    }
}

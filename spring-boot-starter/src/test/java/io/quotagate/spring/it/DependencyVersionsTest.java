package io.quotagate.spring.it;

import com.github.benmanes.caffeine.cache.Caffeine;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The application tests beside this one ran on the Micrometer, Jackson and Caffeine the build says: ours in
 * spring-boot-starter, Spring Boot's managed ones in spring-boot-managed-it (a build that imports Boot's BOM). The
 * expected versions come from the build (surefire's {@code expected.*}, set by every module that runs this test); a
 * build that forgets them fails here rather than skipping the check.
 */
class DependencyVersionsTest {

    @Test
    void micrometerJacksonAndCaffeineAreTheVersionsTheBuildManages() {
        for (String property : new String[]{"expected.micrometer", "expected.jackson", "expected.caffeine"}) {
            assertThat(System.getProperty(property)).as("system property %s: set it in this module's surefire "
                    + "systemPropertyVariables", property).isNotBlank();
        }
        assertThat(MeterRegistry.class.getPackage().getImplementationVersion()).as("Micrometer")
                .isEqualTo(System.getProperty("expected.micrometer"));
        assertThat(com.fasterxml.jackson.databind.cfg.PackageVersion.VERSION.toString()).as("Jackson databind")
                .isEqualTo(System.getProperty("expected.jackson"));
        assertThat(com.fasterxml.jackson.dataformat.yaml.PackageVersion.VERSION.toString()).as("Jackson YAML (plans files)")
                .isEqualTo(System.getProperty("expected.jackson"));
        assertThat(Caffeine.class.getPackage().getImplementationVersion()).as("Caffeine")
                .isEqualTo(System.getProperty("expected.caffeine"));
    }
}

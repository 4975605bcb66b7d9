package io.quotagate.spring;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.plans.CalendarQuota;
import io.quotagate.plans.CalendarQuota.Anchor;
import io.quotagate.plans.Plans;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.test.context.assertj.AssertableWebApplicationContext;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.ByteArrayResource;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.DayOfWeek;
import java.time.LocalTime;
import java.time.ZoneId;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Billing anchors and a tenant's zone written under {@code quotagate.limits}: the plans file's keys and checks. */
class InlineQuotaAnchorsTest {
    private static final String PLANS = """
            quotagate:
              limits:
                plans:
                  pro:
                    limits:
                      - { name: burst, capacity: 200, refill: 100, period: 10s }
                    quotas:
                      - { name: monthly, limit: 100000, per: month, zone: Europe/Berlin, anchor: { day: 15, time: "09:00" } }
                      - { name: weekly, limit: 30000, per: week, anchor: { weekday: wednesday } }
                tenants:
                  default-plan: pro
                  overrides:
                    acme: { plan: pro, zone: America/New_York }
            """;

    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(QuotagateAutoConfiguration.class));

    @Test
    void anchorsAndATenantsZoneBindFromApplicationYml() {
        withYaml(PLANS).run(context -> {
            assertThat(context).hasNotFailed();
            Plans plans = context.getBean(QuotaFilter.class).control().plans();
            CalendarQuota monthly = new CalendarQuota("monthly", 100000, CalendarQuota.Per.MONTH,
                    ZoneId.of("Europe/Berlin"), Anchor.monthly(15, LocalTime.of(9, 0)));
            CalendarQuota weekly = new CalendarQuota("weekly", 30000, CalendarQuota.Per.WEEK, ZoneId.of("UTC"),
                    Anchor.weekly(DayOfWeek.WEDNESDAY, LocalTime.MIDNIGHT));
            assertThat(plans.plans().get("pro").quotas()).containsExactly(monthly, weekly);
            ZoneId ny = ZoneId.of("America/New_York");
            assertThat(plans.tenants().overrideQuotas().get("acme")).containsExactly(monthly.inZone(ny), weekly.inZone(ny));
        });
    }

    @Test
    void anchorsBindFromPropertiesWhoseValuesAreText() {
        runner.withPropertyValues(
                        "quotagate.limits.plans.pro.limits[0].capacity=20",
                        "quotagate.limits.plans.pro.limits[0].refill=10",
                        "quotagate.limits.plans.pro.limits[0].period=10s",
                        "quotagate.limits.plans.pro.quotas[0].name=monthly",
                        "quotagate.limits.plans.pro.quotas[0].limit=1000",
                        "quotagate.limits.plans.pro.quotas[0].per=month",
                        "quotagate.limits.plans.pro.quotas[0].anchor.day=31",
                        "quotagate.limits.plans.pro.quotas[0].anchor.time=18:30",
                        "quotagate.limits.tenants.default-plan=pro")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(QuotaFilter.class).control().plans().plans().get("pro").quotas())
                            .singleElement().satisfies(q -> assertThat(q.anchor())
                                    .isEqualTo(Anchor.monthly(31, LocalTime.of(18, 30))));
                });
    }

    @Test
    void aBadAnchorFailsStartUpNamingItsProperty() {
        withYaml(PLANS.replace("day: 15,", "day: 32,")).run(context -> {
            InvalidConfigurationPropertyValueException e = invalidProperty(context);
            assertThat(e.getName()).isEqualTo("quotagate.limits.plans.pro.quotas[0].anchor.day");
            assertThat(e.getMessage()).endsWith(": must be <= 31, was 32");
        });
        withYaml(PLANS.replace("anchor: { weekday: wednesday }", "anchor: { day: 3 }")).run(context -> {
            InvalidConfigurationPropertyValueException e = invalidProperty(context);
            assertThat(e.getName()).isEqualTo("quotagate.limits.plans.pro.quotas[1].anchor.day");
            assertThat(e.getMessage()).contains("a day of the month anchors a monthly quota only");
        });
    }

    @Test
    void anUnquotedTimeThatYamlReadsAsANumberFailsStartUpNamingIt() {
        // YAML 1.1 (Boot's loader) reads 18:30 unquoted as the base-60 number 1110
        withYaml(PLANS.replace("{ weekday: wednesday }", "{ weekday: wednesday, time: 18:30 }")).run(context -> {
            InvalidConfigurationPropertyValueException e = invalidProperty(context);
            assertThat(e.getName()).isEqualTo("quotagate.limits.plans.pro.quotas[1].anchor.time");
            assertThat(e.getMessage()).contains("expected a local time HH:MM from 00:00 to 23:59 (quoted, \"09:00\"), "
                    + "was the number 1110 (YAML 1.1 reads an unquoted time such as 18:30 as a number: quote it)");
        });
    }

    private WebApplicationContextRunner withYaml(String yaml) {
        return runner.withInitializer(c -> c.getEnvironment().getPropertySources().addLast(yaml(yaml)));
    }

    /** As Spring Boot loads application.yml. */
    private static PropertySource<?> yaml(String text) {
        try {
            List<PropertySource<?>> sources = new YamlPropertySourceLoader().load("test application.yml",
                    new ByteArrayResource(text.getBytes(StandardCharsets.UTF_8), "test application.yml"));
            return sources.get(0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static InvalidConfigurationPropertyValueException invalidProperty(AssertableWebApplicationContext context) {
        assertThat(context).hasFailed();
        for (Throwable t = context.getStartupFailure(); t != null; t = t.getCause()) {
            if (t instanceof InvalidConfigurationPropertyValueException e) return e;
        }
        throw new AssertionError("no InvalidConfigurationPropertyValueException in " + context.getStartupFailure());
    }
}

package io.quotagate.spring;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.test.context.assertj.AssertableWebApplicationContext;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.core.io.ByteArrayResource;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The limits written under {@code quotagate.limits}: the plans file's model and rules, Spring Boot's sources and
 * precedence, errors that name the property. YAML is loaded by Boot's own loader, as application.yml is.
 */
class InlineLimitsTest {

    /** runner-plans.yml, written under quotagate.limits. */
    private static final String RUNNER_PLANS = """
            quotagate:
              limits:
                global:
                  limits:
                    - { name: api, capacity: 500, refill: 500, period: 1m }
                plans:
                  free:
                    limits:
                      - { name: burst, capacity: 20, refill: 10, period: 10s }
                  pro:
                    limits:
                      - { name: burst, capacity: 200, refill: 100, period: 10s }
                routes:
                  - { name: chat, methods: [POST], paths: ["/chat"], cost: 1 }
                tenants:
                  default-plan: free
                  unresolved: reject
            """;

    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(QuotagateAutoConfiguration.class));

    @Test
    void bindsTheSameModelAsThePlansFileWithTheSameKeys() {
        Plans file = PlansFile.load("classpath:runner-plans.yml");
        withYaml(RUNNER_PLANS).run(context -> {
            assertThat(context).hasNotFailed();
            Plans inline = context.getBean(QuotaFilter.class).control().plans();
            assertThat(inline.source()).isEqualTo("quotagate.limits");
            assertThat(inline.global()).isEqualTo(file.global());
            assertThat(inline.plans()).isEqualTo(file.plans());
            assertThat(inline.routes()).isEqualTo(file.routes());
            assertThat(inline.tenants()).isEqualTo(file.tenants());
            assertThat(inline.groups()).isEqualTo(file.groups());
            assertThat(inline.store()).isEqualTo(file.store());
            assertThat(inline.signals()).isEqualTo(file.signals());
        });
    }

    @Test
    void readsPropertiesWhoseValuesAreTextAsYamlReadsThemUnquoted() {
        // a .properties file or an environment variable holds only text: 20 is still the number 20, false a boolean
        runner.withPropertyValues(
                        "quotagate.limits.plans.free.limits[0].capacity=20",
                        "quotagate.limits.plans.free.limits[0].refill=10",
                        "quotagate.limits.plans.free.limits[0].period=10s",
                        "quotagate.limits.routes[0].name=ops",
                        "quotagate.limits.routes[0].paths[0]=/health",
                        "quotagate.limits.routes[0].limited=false")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    Plans plans = context.getBean(QuotaFilter.class).control().plans();
                    assertThat(plans.plans().get("free").limits()).singleElement()
                            .satisfies(b -> assertThat(b.capacity()).isEqualTo(20));
                    assertThat(plans.routes()).singleElement().satisfies(r -> assertThat(r.limited()).isFalse());
                });
    }

    @Test
    void anInvalidValueFailsStartUpNamingItsPropertyNotALineOfADocumentNobodyWrote() {
        withYaml(RUNNER_PLANS.replace("capacity: 20,", "capacity: -1,")).run(context -> {
            InvalidConfigurationPropertyValueException e = invalidProperty(context);
            assertThat(e.getName()).isEqualTo("quotagate.limits.plans.free.limits[0].capacity");
            assertThat(e.getValue()).isEqualTo(-1);
            assertThat(e.getMessage()).endsWith(": must be > 0, was -1").doesNotContainPattern(":[0-9]+:");
        });
    }

    @Test
    void theAlgorithmOfEachLimitIsReadFromPropertiesAndShownByTheEndpoint() {
        runner.withPropertyValues(
                        "quotagate.limits.plans.free.limits[0].algorithm=sliding-window",
                        "quotagate.limits.plans.free.limits[0].capacity=100",
                        "quotagate.limits.plans.free.limits[0].period=1m",
                        "quotagate.limits.plans.free.limits[1].name=burst",
                        "quotagate.limits.plans.free.limits[1].algorithm=gcra",
                        "quotagate.limits.plans.free.limits[1].capacity=20",
                        "quotagate.limits.plans.free.limits[1].refill=10",
                        "quotagate.limits.plans.free.limits[1].period=10s",
                        "quotagate.limits.global.limits[0].capacity=500",
                        "quotagate.limits.global.limits[0].refill=500",
                        "quotagate.limits.global.limits[0].period=1m")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    Plans plans = context.getBean(QuotaFilter.class).control().plans();
                    assertThat(plans.plans().get("free").limits()).containsExactly(
                            io.quotagate.plans.Bandwidth.slidingWindow("b0", 100, java.time.Duration.ofMinutes(1)),
                            io.quotagate.plans.Bandwidth.gcra("burst", 20, 10, java.time.Duration.ofSeconds(10)));
                    Map<String, Object> body = new QuotagateEndpoint(context.getBean(QuotaFilter.class).control()).quotas();
                    assertThat(body).extractingByKey("plans").asString()
                            .contains("algorithm=sliding-window", "algorithm=gcra");
                    assertThat(body).extractingByKey("global").asString().contains("algorithm=token-bucket");
                });
    }

    @Test
    void aRefillOnASlidingWindowOrAnUnknownAlgorithmFailsStartUpNamingTheProperty() {
        runner.withPropertyValues(
                        "quotagate.limits.plans.free.limits[0].algorithm=sliding-window",
                        "quotagate.limits.plans.free.limits[0].capacity=100",
                        "quotagate.limits.plans.free.limits[0].refill=100",
                        "quotagate.limits.plans.free.limits[0].period=1m")
                .run(context -> {
                    InvalidConfigurationPropertyValueException e = invalidProperty(context);
                    assertThat(e.getName()).isEqualTo("quotagate.limits.plans.free.limits[0].refill");
                    assertThat(e.getMessage()).contains("a sliding window takes no refill");
                });
        runner.withPropertyValues(
                        "quotagate.limits.plans.free.limits[0].algorithm=fixed-window",
                        "quotagate.limits.plans.free.limits[0].capacity=100",
                        "quotagate.limits.plans.free.limits[0].refill=100",
                        "quotagate.limits.plans.free.limits[0].period=1m")
                .run(context -> {
                    InvalidConfigurationPropertyValueException e = invalidProperty(context);
                    assertThat(e.getName()).isEqualTo("quotagate.limits.plans.free.limits[0].algorithm");
                    assertThat(e.getMessage()).endsWith("expected one of [token-bucket, gcra, sliding-window]");
                });
    }

    @Test
    void aMissingRequiredKeyIsNamedAsTheKeyItLacks() {
        runner.withPropertyValues("quotagate.limits.plans.free.limits[0].capacity=20",
                        "quotagate.limits.plans.free.limits[0].period=10s")
                .run(context -> {
                    InvalidConfigurationPropertyValueException e = invalidProperty(context);
                    assertThat(e.getName()).isEqualTo("quotagate.limits.plans.free.limits[0].refill");
                    assertThat(e.getMessage()).endsWith(": required");
                });
    }

    @Test
    void anUnknownKeyIsRefusedLikeInThePlansFile() {
        withYaml(RUNNER_PLANS.replace("default-plan: free", "default-plan: free\n      unknwon: reject"))
                .run(context -> {
                    InvalidConfigurationPropertyValueException e = invalidProperty(context);
                    assertThat(e.getName()).isEqualTo("quotagate.limits.tenants.unknwon");
                    assertThat(e.getMessage()).contains("unknown key, expected one of", "unknown");
                });
    }

    @Test
    void aStoresOptionsAreCheckedByItsProviderAndNamedAsProperties() {
        // limiter-redis is on this module's test class path: its provider refuses the store when the filter is built
        withYaml(RUNNER_PLANS + "    store: { type: redis }\n").run(context -> {
            InvalidConfigurationPropertyValueException e = invalidProperty(context);
            assertThat(e.getName()).isEqualTo("quotagate.limits.store.uri");
            assertThat(e.getMessage()).endsWith(": required");
        });
    }

    @Test
    void aPlansFileAndInlineLimitsTogetherFailStartUp() {
        withYaml(RUNNER_PLANS).withPropertyValues("quotagate.plans=classpath:runner-plans.yml").run(context -> {
            InvalidConfigurationPropertyValueException e = invalidProperty(context);
            assertThat(e.getName()).isEqualTo("quotagate.plans");
            assertThat(e.getMessage()).contains("quotagate.limits", "one place");
        });
    }

    @Test
    void inlineLimitsAreNotWatched() {
        withYaml(RUNNER_PLANS).withPropertyValues("quotagate.watch-plans=2s").run(context -> {
            InvalidConfigurationPropertyValueException e = invalidProperty(context);
            assertThat(e.getName()).isEqualTo("quotagate.watch-plans");
            assertThat(e.getMessage()).contains("application's configuration");
        });
    }

    @Test
    void withNeitherAPlansFileNorInlineLimitsStartUpFailsNamingBoth() {
        runner.run(context -> {
            InvalidConfigurationPropertyValueException e = invalidProperty(context);
            assertThat(e.getName()).isEqualTo("quotagate.plans");
            assertThat(e.getMessage()).contains("quotagate.limits");
        });
    }

    @Test
    void tenantIdsAndKeyHashesInBracketsAreKeptAsWritten() {
        String hash = "9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08";
        withYaml(RUNNER_PLANS + """
                      resolvers: [ { type: api-key, header: X-Api-Key }, { type: header, name: X-Tenant-Id } ]
                      assignments:
                        "[acme.eu]": pro
                        "[a:b]": pro
                        Globex: pro
                        "[Initech]": pro
                        "007": pro
                      api-keys:
                        %s: Globex
                """.formatted(hash)).run(context -> {
            assertThat(context).hasNotFailed();
            Plans plans = context.getBean(QuotaFilter.class).control().plans();
            assertThat(plans.tenants().assignments()).containsOnlyKeys("acme.eu", "a:b", "Globex", "Initech", "007");
            assertThat(plans.tenants().apiKeys()).containsEntry(hash.toLowerCase(), "Globex");
            assertThat(context.getBean(QuotaFilter.class).control().tenantLimits("acme.eu")).singleElement()
                    .satisfies(s -> assertThat(s.capacity()).isEqualTo(200));
        });
    }

    @Test
    void aPropertiesFileKeepsKeysInBracketsToo() {
        runner.withPropertyValues(
                        "quotagate.limits.plans.pro.limits[0].capacity=200",
                        "quotagate.limits.plans.pro.limits[0].refill=100",
                        "quotagate.limits.plans.pro.limits[0].period=10s",
                        "quotagate.limits.tenants.assignments[acme.eu]=pro")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(QuotaFilter.class).control().plans().tenants().assignments())
                            .containsOnlyKeys("acme.eu");
                });
    }

    @Test
    void aKeyThatSpringBootWouldChangeOutsideBracketsFailsStartUp() {
        // Spring Boot reads a:b outside brackets as the tenant ab, without a word
        withYaml(RUNNER_PLANS + "      assignments: { \"a:b\": pro }\n").run(context -> {
            InvalidConfigurationPropertyValueException e = invalidProperty(context);
            assertThat(e.getName()).isEqualTo("quotagate.limits.tenants.assignments.a:b");
            assertThat(e.getMessage()).contains("brackets", "[a:b]");
        });
    }

    @Test
    void aDottedKeyOutsideBracketsIsANestedMapThatThePlansRulesRefuse() {
        withYaml(RUNNER_PLANS + "      assignments: { acme.eu: pro }\n").run(context -> {
            InvalidConfigurationPropertyValueException e = invalidProperty(context);
            // the property as written (Spring Boot's report says where), and the map the rules refused
            assertThat(e.getName()).isEqualTo("quotagate.limits.tenants.assignments.acme.eu");
            assertThat(e.getValue()).isEqualTo("pro");
            assertThat(e.getMessage()).contains("found a map", "\"[acme.eu]\"",
                    "(at quotagate.limits.tenants.assignments.acme)");
        });
    }

    @Test
    void twoTenantIdsThatDifferOnlyInCaseMustBeInBrackets() {
        withYaml(RUNNER_PLANS + "      assignments: { Acme: pro, acme: free }\n").run(context -> {
            InvalidConfigurationPropertyValueException e = invalidProperty(context);
            assertThat(e.getMessage()).contains("[Acme, acme]", "one key", "brackets");
        });
        withYaml(RUNNER_PLANS + "      assignments: { \"[Acme]\": pro, \"[acme]\": free }\n").run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(QuotaFilter.class).control().plans().tenants().assignments())
                    .containsEntry("Acme", "pro").containsEntry("acme", "free");
        });
    }

    @Test
    void anEnvironmentVariableOverridesAValueAndTheKeyKeepsItsDashes() {
        // QUOTAGATE_LIMITS_TENANTS_DEFAULTPLAN cannot write the dash: the key is the one application.yml wrote
        withYaml(RUNNER_PLANS)
                .withInitializer(c -> c.getEnvironment().getPropertySources().addFirst(environment(Map.of(
                        "QUOTAGATE_LIMITS_TENANTS_DEFAULTPLAN", "pro",
                        "QUOTAGATE_LIMITS_TENANTS_ASSIGNMENTS_GLOBEX", "free"))))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    Plans plans = context.getBean(QuotaFilter.class).control().plans();
                    assertThat(plans.tenants().defaultPlan()).isEqualTo("pro");
                    // a map is merged key by key: the yml's plans and routes stay, the variable adds an assignment
                    assertThat(plans.tenants().assignments()).containsOnly(Map.entry("globex", "free"));
                    assertThat(plans.plans()).containsOnlyKeys("free", "pro");
                });
    }

    /**
     * Issue 58: QUOTAGATE_LIMITS_TENANTS_DEFAULT_PLAN is read as quotagate.limits.tenants.default.plan (an underscore
     * is a dot), a map the plans rules refuse; the refusal said "Invalid value 'null' for
     * quotagate.limits.tenants.default" and named neither the variable nor the property meant.
     */
    @Test
    void aVariableWhoseUnderscoreSplitsADashedKeyIsRefusedNamingTheVariableAndTheProperty() {
        withYaml(RUNNER_PLANS)
                .withInitializer(c -> c.getEnvironment().getPropertySources().addFirst(environment(Map.of(
                        "QUOTAGATE_LIMITS_TENANTS_DEFAULT_PLAN", "free"))))
                .run(context -> {
                    InvalidConfigurationPropertyValueException e = invalidProperty(context);
                    assertThat(e.getMessage()).contains("QUOTAGATE_LIMITS_TENANTS_DEFAULT_PLAN",
                            "quotagate.limits.tenants.default-plan", "QUOTAGATE_LIMITS_TENANTS_DEFAULTPLAN");
                    assertThat(e.getValue()).isEqualTo("free");
                });
    }

    @Test
    void aListIsReplacedWholeByASourceOfHigherPrecedenceAsSpringBootBindsLists() {
        withYaml(RUNNER_PLANS)
                .withInitializer(c -> c.getEnvironment().getPropertySources().addFirst(environment(Map.of(
                        "QUOTAGATE_LIMITS_ROUTES_0_NAME", "ops",
                        "QUOTAGATE_LIMITS_ROUTES_0_PATHS_0", "/health",
                        "QUOTAGATE_LIMITS_ROUTES_0_LIMITED", "false"))))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(QuotaFilter.class).control().plans().routes())
                            .extracting(r -> r.name()).containsExactly("ops");
                });
        // so overriding one value of a list item replaces the list with that item alone
        withYaml(RUNNER_PLANS)
                .withInitializer(c -> c.getEnvironment().getPropertySources().addFirst(environment(Map.of(
                        "QUOTAGATE_LIMITS_PLANS_FREE_LIMITS_0_CAPACITY", "5"))))
                .run(context -> {
                    InvalidConfigurationPropertyValueException e = invalidProperty(context);
                    assertThat(e.getName()).startsWith("quotagate.limits.plans.free.limits[0].");
                    assertThat(e.getMessage()).endsWith(": required");
                });
    }

    @Test
    void listItemsMustBeNumberedFromZero() {
        runner.withPropertyValues("quotagate.limits.plans.free.limits[1].capacity=20").run(context -> {
            InvalidConfigurationPropertyValueException e = invalidProperty(context);
            assertThat(e.getName()).isEqualTo("quotagate.limits.plans.free.limits[0]");
            assertThat(e.getMessage()).contains("0, 1, 2");
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

    /** Environment variables, mapped to property names as Spring Boot maps the process's. */
    private static PropertySource<?> environment(Map<String, Object> variables) {
        return new SystemEnvironmentPropertySource("test-systemEnvironment", variables);
    }

    private static InvalidConfigurationPropertyValueException invalidProperty(AssertableWebApplicationContext context) {
        assertThat(context).hasFailed();
        for (Throwable t = context.getStartupFailure(); t != null; t = t.getCause()) {
            if (t instanceof InvalidConfigurationPropertyValueException e) return e;
        }
        throw new AssertionError("no InvalidConfigurationPropertyValueException in " + context.getStartupFailure());
    }
}

package io.quotagate.plans;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Config types are built, not constructed: defaults as in the file, contradictions refused at build. */
class ConfigBuildersTest {
    private static final Bandwidth TEN = new Bandwidth("b0", 10, 10, Duration.ofSeconds(1));

    @Test
    void plansBuiltInCodeHaveTheFilesDefaults() {
        Plans plans = Plans.builder("<code>")
                .plan(Plan.builder("free").limits(List.of(TEN)).build())
                .route(RouteRule.builder("items").methods(java.util.Set.of(new String("GET"))).paths("/items/*")
                        .cost(2).build())
                .build();
        assertThat(plans.tenants().defaultPlan()).as("the only plan").isEqualTo("free");
        assertThat(plans.tenants().unresolved()).isEqualTo(TenantSettings.Unresolved.REJECT);
        assertThat(plans.tenants().maxTracked()).isEqualTo(TenantSettings.DEFAULT_MAX_TRACKED);
        assertThat(plans.global()).isEmpty();
        assertThat(plans.store()).isEqualTo(StoreSpec.local());
        assertThat(plans.shadow()).isFalse();
        assertThat(plans.routes().get(0).methods()).containsExactlyInAnyOrder("GET", "HEAD");
        // interned, so a container's constant "GET" matches by identity
        assertThat(plans.routes().get(0).methods()).allSatisfy(m -> assertThat(m).isSameAs(m.intern()));
        assertThat(plans).isEqualTo(PlansFile.parse("<code>", """
                plans: { free: { limits: [ { capacity: 10, refill: 10, period: 1s } ] } }
                routes: [ { name: items, methods: [GET], paths: ["/items/*"], cost: 2 } ]
                """));
    }

    @Test
    void aCopyChangesOnlyWhatItSays() {
        Plans plans = PlansFile.parse("p.yml", """
                plans:
                  free: { limits: [ { capacity: 10, refill: 10, period: 1s } ], publish: true }
                  pro: { limits: [ { capacity: 50, refill: 50, period: 1s } ] }
                tenants: { default-plan: free, assignments: { acme: pro } }
                shadow: true
                """);
        Plans copy = Plans.from(plans).shadow(false).build();
        assertThat(copy.shadow()).isFalse();
        assertThat(Plans.from(copy).shadow(true).build()).isEqualTo(plans);
        assertThat(plans.withPlanLimits("free", List.of(TEN)).plan("free").orElseThrow())
                .isEqualTo(Plan.from(plans.plan("free").orElseThrow()).limits(List.of(TEN)).build())
                .extracting(Plan::publish).isEqualTo(true);
        assertThat(TenantSettings.from(plans.tenants()).unknown(TenantSettings.Unknown.REJECT).build().assignments())
                .isEqualTo(Map.of("acme", "pro"));
    }

    @Test
    void contradictionsAreRefusedWhenBuilt() {
        Plan free = Plan.builder("free").limits(List.of(TEN)).build();
        Plan pro = Plan.builder("pro").limits(List.of(TEN)).build();
        assertThatThrownBy(() -> Plans.builder("<code>").plan(free).plan(pro).build())
                .hasMessageContaining("tenants(...) with a default plan is required");
        assertThatThrownBy(() -> Plans.builder("<code>").plan(free)
                .tenants(TenantSettings.builder().defaultPlan("gold").build()).build())
                .hasMessage("default plan gold is not defined");
        assertThatThrownBy(() -> Plan.builder("free").build()).hasMessageContaining("at least one limit");
        assertThatThrownBy(() -> RouteRule.builder("ops").paths("/health").limited(false).group("g").build())
                .hasMessageContaining("takes no cost or group");
        assertThatThrownBy(() -> TenantSettings.builder().build()).hasMessageContaining("default plan is required");
        assertThat(Plans.builder("<code>").plan(free).build().withGlobal(Optional.of(new GlobalQuota(List.of(TEN))))
                .global()).isPresent();
    }
}

package io.quotagate.example.readme;

// README snippet
import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.CalendarQuota;
import io.quotagate.plans.Plan;
import io.quotagate.plans.Plans;
import io.quotagate.plans.RouteRule;
import io.quotagate.plans.StoreSpec;
import io.quotagate.plans.TenantSettings;
import java.time.Duration;
import java.time.ZoneId;
import java.util.List;
import java.util.Map;
import java.util.Set;
// README snippet end

/** docs/installation.md, plans built in code: compiled here, held verbatim by that page. */
class PlansInCodeSnippet {
    Plans plans() {
        // README snippet
        Plans plans = Plans.builder("<code>")
                .plan(Plan.builder("free").limits(List.of(new Bandwidth("b0", 20, 10, Duration.ofSeconds(10)))).build())
                .plan(Plan.builder("pro").limits(List.of(new Bandwidth("b0", 200, 100, Duration.ofSeconds(10))))
                        .quotas(List.of(new CalendarQuota("monthly", 100_000, CalendarQuota.Per.MONTH, ZoneId.of("Europe/Berlin"))))
                        .build())
                .route(RouteRule.builder("reports").methods(Set.of("GET")).paths("/reports/*").cost(5).build())
                .tenants(TenantSettings.builder().defaultPlan("free").assignments(Map.of("acme", "pro")).build())
                .store(StoreSpec.of("redis", Map.of("uri", "redis://cache:6379", "prefix", "shop")))
                .build();
        // README snippet end
        return plans;
    }
}

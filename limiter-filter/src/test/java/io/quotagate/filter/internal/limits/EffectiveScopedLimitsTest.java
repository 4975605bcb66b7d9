package io.quotagate.filter.internal.limits;

import io.quotagate.filter.status.LimitOverrides;
import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.PathPattern;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import io.quotagate.plans.RouteRule;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The published file's per-user and route limits on an instance whose own file says otherwise: the
 * plans' {@code per-user} limits and, by route name, the routes' own limits are the record's; the
 * routes themselves (paths, methods, cost, group) stay this instance's.
 */
class EffectiveScopedLimitsTest {
    /** The published file (format 3): {@link LimitsRecordFormatTest#SCOPED}. */
    private static final LimitsBase PUBLISHED = LimitsBase.of(PlansFile.parse("scoped.yml", LimitsRecordFormatTest.SCOPED));

    /** An older file: no per-user limits, items limited on its own, export dearer and on two paths, no login. */
    private static final String OLDER = """
            plans:
              team:
                limits: [ { capacity: 100, refill: 100, period: 1h } ]
            routes:
              - name: items
                paths: ["/items/**"]
                limits: [ { capacity: 7, refill: 7, period: 1h } ]
              - name: export
                paths: ["/export", "/v1/export"]
                cost: 2
                limits: [ { capacity: 10, refill: 10, period: 1h } ]
              - name: health
                paths: ["/health"]
                limited: false
            tenants:
              users:
                - { type: header, name: X-User-Id }
              assignments: { acme: team }
            """;

    @Test
    void anOlderFileEnforcesThePublishedPerUserAndRouteLimitsOnItsOwnRoutes() {
        Plans older = PlansFile.parse("older.yml", OLDER);
        Plans effective = EffectiveLimits.of(older, PUBLISHED, LimitOverrides.NONE);

        assertThat(effective.plan("team").orElseThrow().perUser())
                .containsExactly(new Bandwidth("seat", 3, 3, Duration.ofHours(1)));
        RouteRule export = route(effective, "export");
        assertThat(export.limits()).isEqualTo(PUBLISHED.routes().get("export"));
        assertThat(export.cost()).as("the route itself stays this file's").isEqualTo(2);
        assertThat(export.paths()).containsExactly(PathPattern.parse("/export"), PathPattern.parse("/v1/export"));
        assertThat(route(effective, "items").limits()).as("the published file gives items none").isEmpty();
        assertThat(route(effective, "health")).isEqualTo(route(older, "health"));
        assertThat(effective.routes()).extracting(RouteRule::name).containsExactly("items", "export", "health");
        assertThat(EffectiveLimits.ignoredRoutes(older, PUBLISHED)).as("login: not a route of this file")
                .containsExactly("login");
        // the limits part of the result is the published one: nothing of this file's own is left
        assertThat(LimitsBase.of(effective).perUser()).isEqualTo(PUBLISHED.perUser());
        assertThat(LimitsBase.of(effective).routes()).isEqualTo(java.util.Map.of("export", PUBLISHED.routes().get("export")));
    }

    @Test
    void aRouteThisFileDoesNotLimitIsIgnored() {
        Plans older = PlansFile.parse("older.yml", OLDER.replace("  - name: health",
                "  - name: login\n    paths: [\"/login\"]\n    limited: false\n  - name: health"));
        Plans effective = EffectiveLimits.of(older, PUBLISHED, LimitOverrides.NONE);
        assertThat(route(effective, "login").limited()).isFalse();
        assertThat(route(effective, "login").limits()).isEmpty();
        assertThat(EffectiveLimits.ignoredRoutes(older, PUBLISHED)).containsExactly("login");
    }

    @Test
    void theSameFileIsLeftAsItIs() {
        Plans same = PlansFile.parse("scoped.yml", LimitsRecordFormatTest.SCOPED);
        assertThat(EffectiveLimits.of(same, PUBLISHED, LimitOverrides.NONE)).isSameAs(same);
        assertThat(EffectiveLimits.ignoredRoutes(same, PUBLISHED)).isEmpty();
    }

    @Test
    void limitsPerUserWhereThisFileFindsNoUserAreRefused() {
        Plans noUsers = PlansFile.parse("no-users.yml", OLDER.replace("""
                  users:
                    - { type: header, name: X-User-Id }
                """, ""));
        assertThatThrownBy(() -> EffectiveLimits.of(noUsers, PUBLISHED, LimitOverrides.NONE))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("plans.team.per-user: per-user limits need tenants.users, the resolvers that name the user "
                        + "inside a tenant, and no-users.yml has none");
    }

    @Test
    void aRouteLimitBelowThisFilesCostOfTheRouteIsRefused() {
        Plans dearer = PlansFile.parse("dearer.yml", OLDER.replace("cost: 2", "cost: 3"));
        assertThatThrownBy(() -> EffectiveLimits.of(dearer, PUBLISHED, LimitOverrides.NONE))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("route export: capacity 2 of limit 'hourly' (per tenant) is below the route's cost 3: "
                        + "such requests could never be admitted");
    }

    @Test
    void aPerUserLimitBelowARoutesCostIsRefused() {
        Plans dearer = PlansFile.parse("dearer.yml", OLDER.replace("""
                    paths: ["/items/**"]
                """, """
                    paths: ["/items/**"]
                    cost: 5
                """));
        assertThatThrownBy(() -> EffectiveLimits.of(dearer, PUBLISHED, LimitOverrides.NONE))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("capacity 3 of plans.team.per-user limit 'seat' is below the cost 5 of route 'items': "
                        + "such requests could never be admitted");
    }

    @Test
    void aRecordWithoutThemClearsThisFilesOwn() {
        // the file published last has none: no instance keeps per-user or route limits of its own
        LimitsBase none = LimitsBase.of(PlansFile.parse("plain.yml", """
                plans:
                  team:
                    limits: [ { capacity: 100, refill: 100, period: 1h } ]
                """));
        Plans effective = EffectiveLimits.of(PlansFile.parse("scoped.yml", LimitsRecordFormatTest.SCOPED), none,
                LimitOverrides.NONE);
        assertThat(effective.plan("team").orElseThrow().perUser()).isEmpty();
        assertThat(effective.routes()).allSatisfy(r -> assertThat(r.limits()).as(r.name()).isEmpty());
        assertThat(Set.copyOf(effective.routes().stream().map(RouteRule::name).toList()))
                .containsExactlyInAnyOrder("export", "login", "items");
    }

    private static RouteRule route(Plans plans, String name) {
        return plans.routes().stream().filter(r -> r.name().equals(name)).findFirst().orElseThrow();
    }
}

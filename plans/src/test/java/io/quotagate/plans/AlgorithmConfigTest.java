package io.quotagate.plans;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code algorithm:} per limit, wherever a plans file writes limits, and what each algorithm refuses at start. */
class AlgorithmConfigTest {

    @Test
    void everyPlaceThatWritesLimitsReadsTheAlgorithmTokenBucketByDefault() {
        Plans plans = PlansFile.parse("plans.yml", """
                global:
                  limits: [ { algorithm: gcra, capacity: 3000, refill: 3000, period: 1m } ]
                plans:
                  free:
                    limits:
                      - { capacity: 20, refill: 10, period: 10s }
                      - { name: minute, algorithm: sliding-window, capacity: 100, period: 1m }
                    per-user:
                      limits: [ { algorithm: gcra, capacity: 5, refill: 1, period: 1s } ]
                routes:
                  - name: search
                    paths: [/search]
                    limits:
                      - { per: user, algorithm: sliding-window, capacity: 30, period: 1m }
                      - { per: client-address, algorithm: token-bucket, capacity: 30, refill: 30, period: 1m }
                tenants:
                  users: [ { type: header, name: X-User } ]
                  guests:
                    limits: [ { algorithm: sliding-window, capacity: 50, period: 1s } ]
                  overrides:
                    acme:
                      limits: [ { algorithm: gcra, capacity: 40, refill: 20, period: 10s } ]
                """);
        Plan free = plans.plan("free").orElseThrow();
        assertThat(free.limits()).containsExactly(
                new Bandwidth("b0", 20, 10, Duration.ofSeconds(10), Algorithm.TOKEN_BUCKET),
                new Bandwidth("minute", 100, 100, Duration.ofMinutes(1), Algorithm.SLIDING_WINDOW));
        assertThat(free.perUser()).containsExactly(Bandwidth.gcra("b0", 5, 1, Duration.ofSeconds(1)));
        assertThat(plans.global().orElseThrow().limits()).containsExactly(
                Bandwidth.gcra("b0", 3000, 3000, Duration.ofMinutes(1)));
        assertThat(plans.routes().get(0).limits()).containsExactly(
                new ScopedLimit(ScopedLimit.Scope.USER, List.of(Bandwidth.slidingWindow("b0", 30, Duration.ofMinutes(1)))),
                new ScopedLimit(ScopedLimit.Scope.CLIENT_ADDRESS,
                        List.of(new Bandwidth("b1", 30, 30, Duration.ofMinutes(1)))));
        assertThat(plans.tenants().guests().limits()).containsExactly(
                Bandwidth.slidingWindow("b0", 50, Duration.ofSeconds(1)));
        assertThat(plans.tenants().overrides().get("acme")).containsExactly(
                Bandwidth.gcra("b0", 40, 20, Duration.ofSeconds(10)));
    }

    @Test
    void theJsonFormOfLimitsCarriesTheAlgorithm() {
        List<Bandwidth> limits = PlansFile.parseLimits("tenants.limits of acme", """
                [{"algorithm": "sliding-window", "capacity": 100, "period": "1m"},
                 {"name": "day", "algorithm": "gcra", "capacity": 1000, "refill": 1000, "period": "1d"},
                 {"capacity": 5, "refill": 1, "period": "1s"}]""");
        assertThat(limits).extracting(Bandwidth::algorithm)
                .containsExactly(Algorithm.SLIDING_WINDOW, Algorithm.GCRA, Algorithm.TOKEN_BUCKET);
        assertThat(limits.get(0).refill()).isEqualTo(100);
    }

    @Test
    void anUnknownAlgorithmFailsNamingTheLineTheFieldAndTheValidNames() {
        assertThatThrownBy(() -> PlansFile.parse("plans.yml", """
                plans:
                  free:
                    limits:
                      - { capacity: 20, refill: 10, period: 10s }
                      - { algorithm: leaky-bucket, capacity: 20, refill: 10, period: 10s }
                """))
                .isInstanceOf(InvalidPlansException.class)
                .hasMessage("plans.yml:5: plans.free.limits[1].algorithm: unknown value 'leaky-bucket', expected one of"
                        + " [token-bucket, gcra, sliding-window]");
    }

    @Test
    void aRefillOnASlidingWindowFailsAtItsLine() {
        assertThatThrownBy(() -> PlansFile.parse("plans.yml", """
                plans:
                  free:
                    limits:
                      - algorithm: sliding-window
                        capacity: 100
                        refill: 50
                        period: 1m
                """))
                .isInstanceOf(InvalidPlansException.class)
                .hasMessageStartingWith("plans.yml:6: plans.free.limits[0].refill: a sliding window takes no refill");
    }

    @Test
    void aRefillOnASlidingWindowFailsInARouteLimitAndInTheJsonFormToo() {
        assertThatThrownBy(() -> PlansFile.parse("plans.yml", """
                plans:
                  free:
                    limits: [ { capacity: 20, refill: 10, period: 10s } ]
                routes:
                  - name: search
                    paths: [/search]
                    limits: [ { algorithm: sliding-window, capacity: 30, refill: 30, period: 1m } ]
                """))
                .hasMessageStartingWith("plans.yml:7: routes[0].limits[0].refill: a sliding window takes no refill");
        assertThatThrownBy(() -> PlansFile.parseLimits("column limits", """
                [{"algorithm": "sliding-window", "capacity": 100, "refill": 100, "period": "1m"}]"""))
                .hasMessageStartingWith("column limits:1: limits[0].refill: a sliding window takes no refill");
    }

    @Test
    void aTokenBucketOrGcraStillNeedsItsRefill() {
        assertThatThrownBy(() -> PlansFile.parse("plans.yml", """
                plans:
                  free:
                    limits: [ { algorithm: gcra, capacity: 20, period: 10s } ]
                """))
                .hasMessage("plans.yml:3: plans.free.limits[0].refill: required");
    }

    @Test
    void aPlanThrottleOverItsOwnSlidingWindowFailsAtTheLimitNamingTheThrottle() {
        assertThatThrownBy(() -> PlansFile.parse("plans.yml", """
                plans:
                  free:
                    limits:
                      - { capacity: 20, refill: 10, period: 10s }
                      - { name: minute, algorithm: sliding-window, capacity: 100, period: 1m }
                    throttle: { max-delay: 500ms, queue: 20 }
                """))
                .isInstanceOf(InvalidPlansException.class)
                .hasMessage("plans.yml:5: plans.free.limits[1].algorithm: a sliding window cannot reserve units ahead,"
                        + " as the throttle plans.free.throttle (line 6) does for the requests it delays: use algorithm"
                        + " token-bucket or gcra here, or no throttle");
    }

    /** Each place a throttled request is charged in; the throttle is a plan's or a route's. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "plan      | per-user  | plans.free.per-user.limits[0].algorithm",
            "plan      | global    | global.limits[0].algorithm",
            "plan      | guests    | tenants.guests.limits[0].algorithm",
            "plan      | override  | tenants.overrides.acme.limits[0].algorithm",
            "plan      | route     | routes[0].limits[0].algorithm",
            "route     | plan      | plans.free.limits[0].algorithm",
            "route     | route     | routes[0].limits[0].algorithm",
            "route     | global    | global.limits[0].algorithm",
    })
    void aSlidingWindowAnyThrottledRequestIsChargedInFails(String throttleOn, String windowIn, String field) {
        String window = "{ algorithm: sliding-window, capacity: 100, period: 1m }";
        String bucket = "{ capacity: 100, refill: 100, period: 1m }";
        String throttle = "{ max-delay: 500ms, queue: 20 }";
        String yaml = ""
                + "global:\n  limits: [ " + (windowIn.equals("global") ? window : bucket) + " ]\n"
                + "plans:\n  free:\n    limits: [ " + (windowIn.equals("plan") ? window : bucket) + " ]\n"
                + (windowIn.equals("per-user") ? "    per-user: { limits: [ " + window + " ] }\n" : "")
                + (throttleOn.equals("plan") ? "    throttle: " + throttle + "\n" : "")
                + "routes:\n  - name: search\n    paths: [/search]\n"
                + (windowIn.equals("route") ? "    limits: [ " + window + " ]\n" : "")
                + (throttleOn.equals("route") ? "    throttle: " + throttle + "\n" : "")
                + "tenants:\n  users: [ { type: header, name: X-User } ]\n"
                + (windowIn.equals("guests") ? "  guests: { limits: [ " + window + " ] }\n" : "")
                + (windowIn.equals("override") ? "  overrides: { acme: { limits: [ " + window + " ] } }\n" : "");
        assertThatThrownBy(() -> PlansFile.parse("plans.yml", yaml))
                .isInstanceOf(InvalidPlansException.class)
                .satisfies(e -> assertThat(((InvalidPlansException) e).field()).isEqualTo(field))
                .hasMessageContaining("a sliding window cannot reserve units ahead, as the throttle "
                        + (throttleOn.equals("plan") ? "plans.free.throttle" : "routes[0].throttle"));
    }

    @Test
    void aSlidingWindowOutsideAnyThrottlesReachIsFine() {
        Plans plans = PlansFile.parse("plans.yml", """
                plans:
                  free:
                    limits: [ { algorithm: sliding-window, capacity: 100, period: 1m } ]
                  pro:
                    limits: [ { algorithm: gcra, capacity: 100, refill: 100, period: 1m } ]
                    throttle: { max-delay: 500ms, queue: 20 }
                tenants:
                  default-plan: free
                  assignments: { acme: pro }
                """);
        assertThat(plans.plan("free").orElseThrow().limits().get(0).algorithm()).isEqualTo(Algorithm.SLIDING_WINDOW);
    }

    @Test
    void theBuilderApiChoosesTheAlgorithmAndRefusesWhatTheFileRefuses() {
        Plan plan = Plan.builder("free")
                .limits(List.of(Bandwidth.slidingWindow("minute", 100, Duration.ofMinutes(1)),
                        Bandwidth.gcra("burst", 20, 10, Duration.ofSeconds(10))))
                .build();
        assertThat(plan.limits()).extracting(Bandwidth::algorithm)
                .containsExactly(Algorithm.SLIDING_WINDOW, Algorithm.GCRA);
        Plans plans = Plans.builder("<code>").plan(plan).build();
        assertThat(plans.plan("free")).contains(plan);

        assertThatThrownBy(() -> new Bandwidth("w", 100, 50, Duration.ofMinutes(1), Algorithm.SLIDING_WINDOW))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("a sliding window takes no refill");
        Plan throttled = Plan.from(plan).throttle(Optional.of(new Throttle(Duration.ofMillis(500), 10))).build();
        assertThatThrownBy(() -> Plans.builder("<code>").plan(throttled).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("plans.free.limits limit 'minute': a sliding window cannot reserve units ahead");
        Plans withPlainThrottle = Plans.builder("<code>").plan(Plan.from(throttled)
                .limits(List.of(Bandwidth.gcra("burst", 20, 10, Duration.ofSeconds(10)))).build()).build();
        assertThatThrownBy(() -> withPlainThrottle.withPlanLimits("free",
                List.of(Bandwidth.slidingWindow("minute", 100, Duration.ofMinutes(1)))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("a sliding window cannot reserve units ahead");
    }

    @Test
    void aTenantsOwnSlidingWindowIsRefusedOnlyWhereAThrottleReachesIt() {
        Plans plans = PlansFile.parse("plans.yml", """
                plans:
                  free:
                    limits: [ { capacity: 100, refill: 100, period: 1m } ]
                  pro:
                    limits: [ { capacity: 100, refill: 100, period: 1m } ]
                    throttle: { max-delay: 500ms, queue: 20 }
                tenants:
                  default-plan: free
                """);
        List<Bandwidth> own = List.of(Bandwidth.slidingWindow("minute", 100, Duration.ofMinutes(1)));
        assertThat(plans.limitsRefusal("tenant acme", "free", own)).isEmpty();
        assertThat(plans.limitsRefusal("tenant acme", "pro", own)).hasValueSatisfying(why -> assertThat(why)
                .startsWith("tenant acme limit 'minute': a sliding window cannot reserve units ahead, as the throttle"
                        + " plans.pro.throttle"));
        assertThatThrownBy(() -> plans.withTenants(Map.of("acme", "pro"), Map.of("acme", own)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("tenants.overrides.acme.limits limit 'minute'");
    }
}

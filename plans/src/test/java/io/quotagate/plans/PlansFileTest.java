package io.quotagate.plans;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

class PlansFileTest {

    private static final String VALID = """
            global:
              limits:
                - { capacity: 3000, refill: 3000, period: 1m }
            plans:
              free:
                limits:
                  - { capacity: 20, refill: 10, period: 10s }
                concurrency: { reports: 1 }
              pro:
                limits:
                  - { name: burst, capacity: 200, refill: 100, period: 10s }
                  - { name: daily, capacity: 100000, refill: 100000, period: PT24H }
                concurrency: { reports: 2 }
            routes:
              - { name: reports, methods: [GET], paths: ["/reports/*"], cost: 5, group: reports }
              - { name: ops, paths: ["/health", "/metrics"], limited: false }
            tenants:
              default-plan: free
              unresolved: reject
              unknown: default
              max-tracked: 5000
              assignments: { acme: pro, globex: free }
            groups:
              reports: { max-inflight: 20, queue: { size: 8, max-wait: 2s } }
            """;

    @Test
    void readsAThrottleOfAPlanAndOfARoute() {
        Plans plans = PlansFile.parse("plans.yml", """
                plans:
                  free:
                    limits: [ { capacity: 10, refill: 10, period: 1s } ]
                    throttle: { max-delay: 500ms, queue: 20 }
                  pro:
                    limits: [ { capacity: 10, refill: 10, period: 1s } ]
                routes:
                  - { name: search, paths: [/search], throttle: { max-delay: 2s, queue: 5 } }
                  - { name: other, paths: ["/**"] }
                tenants: { default-plan: free }
                """);
        assertThat(plans.plans().get("free").throttle()).contains(new Throttle(Duration.ofMillis(500), 20));
        assertThat(plans.plans().get("pro").throttle()).isEmpty();
        assertThat(plans.routes().get(0).throttle()).contains(new Throttle(Duration.ofSeconds(2), 5));
        assertThat(plans.routes().get(1).throttle()).isEmpty();
    }

    @Test
    void readsPerUserLimitsAndARoutesOwnLimitsGroupedByScope() {
        Plans plans = PlansFile.parse("plans.yml", """
                plans:
                  team:
                    limits: [ { capacity: 10, refill: 10, period: 1s } ]
                    per-user:
                      limits: [ { name: seat, capacity: 4, refill: 4, period: 1s } ]
                routes:
                  - name: export
                    paths: [/export]
                    limits:
                      - { name: hourly, capacity: 10, refill: 10, period: 1h }
                      - { name: users, per: user, capacity: 2, refill: 2, period: 1h }
                      - { name: daily, capacity: 50, refill: 50, period: 1d, per: tenant }
                      - { name: addr, per: client-address, capacity: 5, refill: 5, period: 1m }
                tenants:
                  users: [ { type: header, name: X-User-Id } ]
                """);
        Plan team = plans.plan("team").orElseThrow();
        assertThat(team.perUser()).containsExactly(new Bandwidth("seat", 4, 4, Duration.ofSeconds(1)));
        assertThat(Plan.from(team).build()).as("a copy keeps them").isEqualTo(team);
        assertThat(plans.tenants().users()).hasSize(1);
        assertThat(plans.routes().get(0).limits()).containsExactly(
                new ScopedLimit(ScopedLimit.Scope.TENANT, List.of(new Bandwidth("hourly", 10, 10, Duration.ofHours(1)),
                        new Bandwidth("daily", 50, 50, Duration.ofDays(1)))),
                new ScopedLimit(ScopedLimit.Scope.USER, List.of(new Bandwidth("users", 2, 2, Duration.ofHours(1)))),
                new ScopedLimit(ScopedLimit.Scope.CLIENT_ADDRESS, List.of(new Bandwidth("addr", 5, 5, Duration.ofMinutes(1)))));
    }

    @Test
    void readsEveryPartOfAValidFile() {
        Plans plans = PlansFile.parse("plans.yml", VALID);

        assertThat(plans.global()).get().extracting(GlobalQuota::limits).asList()
                .containsExactly(new Bandwidth("b0", 3000, 3000, Duration.ofMinutes(1)));
        Plan pro = plans.plan("pro").orElseThrow();
        assertThat(pro.limits()).containsExactly(
                new Bandwidth("burst", 200, 100, Duration.ofSeconds(10)),
                new Bandwidth("daily", 100000, 100000, Duration.ofDays(1)));
        assertThat(pro.concurrency()).containsEntry("reports", 2);
        assertThat(plans.plan("free").orElseThrow().smallestCapacity()).isEqualTo(20);

        RouteRule reports = plans.routes().get(0);
        assertThat(reports.cost()).isEqualTo(5);
        assertThat(reports.group()).contains("reports");
        assertThat(reports.matches("GET", "/reports/42")).isTrue();
        assertThat(reports.matches("POST", "/reports/42")).isFalse();
        RouteRule ops = plans.routes().get(1);
        assertThat(ops.limited()).isFalse();
        assertThat(ops.methods()).isEmpty();
        assertThat(ops.matches("POST", "/metrics")).isTrue();

        TenantSettings t = plans.tenants();
        assertThat(t.defaultPlan()).isEqualTo("free");
        assertThat(t.unresolved()).isEqualTo(TenantSettings.Unresolved.REJECT);
        assertThat(t.unknown()).isEqualTo(TenantSettings.Unknown.DEFAULT);
        assertThat(t.maxTracked()).isEqualTo(5000);
        assertThat(t.assignments()).containsEntry("acme", "pro").containsEntry("globex", "free");

        GroupSettings g = plans.group("reports");
        assertThat(g.maxInflight()).hasValue(20);
        assertThat(g.queue()).contains(new GroupSettings.Queue(8, Duration.ofSeconds(2)));
        assertThat(plans.group("other")).as("a group without settings fails fast")
                .isEqualTo(new GroupSettings("other", java.util.OptionalInt.empty(), java.util.Optional.empty()));
    }

    @Test
    void groupSettingsAreOptionalPerKey() {
        Plans plans = PlansFile.parse("g.yml", """
                plans:
                  free: { limits: [ { capacity: 10, refill: 10, period: 1s } ], concurrency: { a: 1 } }
                routes:
                  - { name: a, paths: [/a], group: a }
                  - { name: b, paths: [/b], group: b }
                groups:
                  a: { max-inflight: 3 }
                  b: { queue: { size: 1, max-wait: 250ms } }
                """);
        assertThat(plans.group("a").queue()).isEmpty();
        assertThat(plans.group("b").maxInflight()).isEmpty();
        assertThat(plans.group("b").queue()).contains(new GroupSettings.Queue(1, Duration.ofMillis(250)));
        assertThat(plans.group("a").adaptive()).as("a fixed cap is not adaptive").isEmpty();
    }

    @Test
    void readsAnAdaptiveGroupWithDefaults() {
        Plans plans = PlansFile.parse("a.yml", """
                plans:
                  free: { limits: [ { capacity: 10, refill: 10, period: 1s } ], concurrency: { a: 2 } }
                routes:
                  - { name: a, paths: [/a], group: a }
                  - { name: b, paths: [/b], group: b }
                groups:
                  a: { adaptive: { initial: 10, max: 200 } }
                  b:
                    adaptive: { algorithm: vegas, initial: 8, min: 4, max: 64 }
                    queue: { size: 4, max-wait: 1s }
                """);
        assertThat(plans.group("a").adaptive()).contains(
                new GroupSettings.Adaptive(GroupSettings.Adaptive.Algorithm.GRADIENT2, 10, 1, 200));
        assertThat(plans.group("a").maxInflight()).isEmpty();
        assertThat(plans.group("b").adaptive()).contains(
                new GroupSettings.Adaptive(GroupSettings.Adaptive.Algorithm.VEGAS, 8, 4, 64));
        assertThat(plans.group("b").queue()).contains(new GroupSettings.Queue(4, Duration.ofSeconds(1)));
    }

    @Test
    void appliesDefaultsWhenOptionalPartsAreMissing() {
        Plans plans = PlansFile.parse("min.yml", """
                plans:
                  only:
                    limits: [ { capacity: 5, refill: 1, period: 500ms } ]
                """);
        assertThat(plans.global()).isEmpty();
        assertThat(plans.routes()).isEmpty();
        assertThat(plans.tenants().defaultPlan()).isEqualTo("only");
        assertThat(plans.tenants().unresolved()).isEqualTo(TenantSettings.Unresolved.REJECT);
        assertThat(plans.tenants().maxTracked()).isEqualTo(TenantSettings.DEFAULT_MAX_TRACKED);
        assertThat(plans.tenants().directoryTimeout()).isEqualTo(Duration.ofMillis(250));
        assertThat(plans.tenants().directoryLookups()).isEqualTo(8);
        assertThat(plans.tenants().directoryFailure()).isEqualTo(TenantSettings.DirectoryFailure.DEFAULT);
        assertThat(plans.plan("only").orElseThrow().limits().get(0).period()).isEqualTo(Duration.ofMillis(500));
    }

    @Test
    void readsHowTheTenantDirectoryIsAskedAndWhatItsFailureAnswers() {
        Plans plans = PlansFile.parse("p.yml", """
                plans:
                  only: { limits: [ { capacity: 5, refill: 1, period: 1s } ] }
                tenants:
                  directory: { timeout: 100ms, max-lookups: 4, unavailable: refuse }
                """);
        assertThat(plans.tenants().directoryTimeout()).isEqualTo(Duration.ofMillis(100));
        assertThat(plans.tenants().directoryLookups()).isEqualTo(4);
        assertThat(plans.tenants().directoryFailure()).isEqualTo(TenantSettings.DirectoryFailure.REFUSE);
        TenantSettings copy = TenantSettings.from(plans.tenants()).build();
        assertThat(copy).isEqualTo(plans.tenants());
        assertThat(TenantSettings.from(copy).directoryFailure(TenantSettings.DirectoryFailure.DEFAULT).build())
                .isNotEqualTo(plans.tenants());
        assertThatThrownBy(() -> TenantSettings.from(copy).directoryTimeout(Duration.ZERO))
                .hasMessage("directoryTimeout must be > 0 and <= PT10S, was PT0S");
        assertThatThrownBy(() -> TenantSettings.from(copy).directoryLookups(257))
                .hasMessage("directoryLookups must be > 0 and <= 256, was 257");
    }

    @Test
    void keepsAStoresTypeAndOptionsAsWrittenForItsProviderToCheck() { // example-flag: any option a provider may define
        Plans plans = PlansFile.parse("p.yml", """
                plans:
                  only: { limits: [ { capacity: 5, refill: 1, period: 1s } ] }
                store:
                  type: redis
                  uri: redis://127.0.0.1:6379/0
                  timeout: 20ms
                  max-retries: 2
                  example-flag: true
                  local-allowance: { units: 20, max-delay: 250ms }
                """);
        StoreSpec store = plans.store();
        assertThat(store.type()).isEqualTo("redis");
        assertThat(store.optionNames()).containsExactly("uri", "timeout", "max-retries", "example-flag", "local-allowance");
        assertThat(store.string("uri")).contains("redis://127.0.0.1:6379/0");
        assertThat(store.period("timeout")).contains(Duration.ofMillis(20));
        assertThat(store.positive("max-retries", 100)).contains(2L);
        assertThat(store.bool("example-flag")).contains(true);
        StoreSpec allowance = store.section("local-allowance").orElseThrow();
        assertThat(allowance.field()).isEqualTo("store.local-allowance");
        assertThat(allowance.positive("units", 1000)).contains(20L);
        assertThat(store).isEqualTo(StoreSpec.of("redis", Map.of("uri", "redis://127.0.0.1:6379/0",
                "timeout", Duration.ofMillis(20), "max-retries", 2, "example-flag", true,
                "local-allowance", Map.of("units", 20, "max-delay", "250ms"))));
    }

    @Test
    void aStoreOptionOfTheWrongKindNamesFileLineAndField() {
        Plans plans = PlansFile.parse("p.yml", "plans:\n  only: { limits: [ { capacity: 5, refill: 1, period: 1s } ] }\n"
                + "store:\n  type: redis\n  timeout: 50\n  on-failure: retry\n");
        assertThatThrownBy(() -> plans.store().period("timeout")).isInstanceOf(InvalidPlansException.class)
                .hasMessageStartingWith("p.yml:5: store.timeout: ").hasMessageContaining("needs a unit");
        assertThatThrownBy(() -> plans.store().choice("on-failure", Thread.State.class))
                .hasMessageStartingWith("p.yml:6: store.on-failure: unknown value 'retry'");
        assertThat(plans.store().invalid("uri", "required")).hasMessage("p.yml:4: store.uri: required");
        assertThatThrownBy(() -> plans.store().checkOptionNames(Set.of("timeout")))
                .hasMessage("p.yml:6: store.on-failure: unknown key, expected one of [timeout, type]");
    }

    @Test
    void aStoreTypeIsAName() {
        assertThatThrownBy(() -> PlansFile.parse("p.yml", "plans:\n  only: { limits: [ { capacity: 5, refill: 1, period: 1s } ] }\n"
                + "store:\n  type: Redis Cluster\n"))
                .isInstanceOf(InvalidPlansException.class).hasMessageStartingWith("p.yml:4: store.type: must match");
    }

    @Test
    void theStoreIsLocalUnlessConfigured() {
        Plans plans = PlansFile.parse("p.yml", "plans:\n  only: { limits: [ { capacity: 5, refill: 1, period: 1s } ] }\n");
        assertThat(plans.store()).isEqualTo(StoreSpec.local());
        assertThat(plans.store().isLocal()).isTrue();
        Plans typeOnly = PlansFile.parse("p.yml", "plans:\n  only: { limits: [ { capacity: 5, refill: 1, period: 1s } ] }\n"
                + "store: { type: local }\n");
        assertThat(typeOnly.store()).isEqualTo(StoreSpec.local());
    }

    @Test
    void aStoresOptionValuesNeverShowInItsText() {
        Plans plans = PlansFile.parse("p.yml", "plans:\n  only: { limits: [ { capacity: 5, refill: 1, period: 1s } ] }\n"
                + "store: { type: redis, uri: \"redis://user:hunter2@h:6379\" }\n");
        assertThat(plans.toString()).doesNotContain("hunter2").contains("uri");
    }

    @Test
    void refillLargerThanCapacityIsAllowed() {
        Plans plans = PlansFile.parse("p.yml", """
                plans:
                  fast: { limits: [ { capacity: 10, refill: 1000, period: 1s } ] }
                """);
        assertThat(plans.plan("fast").orElseThrow().limits().get(0).refill()).isEqualTo(1000);
    }

    /** Six lines: one plan capping group reports, one route in it. */
    private static final String GROUPED = "plans:\n  free:\n    limits: [ { capacity: 5, refill: 5, period: 1s } ]\n"
            + "    concurrency: { reports: 1 }\nroutes:\n  - { name: r, paths: [/r], group: reports }\n";

    static Stream<Arguments> badFiles() {
        String plan = "plans:\n  free:\n    limits:\n";
        return Stream.of(
                arguments("empty file", "", 0, "", "empty"),
                arguments("not YAML", "plans: [ {\n", 1, "", "not valid YAML"),
                arguments("unknown top-level key", "plan:\n  free: {}\n", 1, "plan", "unknown key"),
                arguments("no plans", "routes: []\n", 1, "plans", "required"),
                arguments("empty plans", "plans: {}\n", 1, "plans", "at least one plan"),
                arguments("unknown key in a limit", plan + "      - { capacity: 5, refill: 5, period: 1s, burst: 9 }\n",
                        4, "plans.free.limits[0].burst", "unknown key"),
                arguments("zero capacity", plan + "      - { capacity: 0, refill: 5, period: 1s }\n",
                        4, "plans.free.limits[0].capacity", "must be > 0"),
                arguments("negative capacity", plan + "      - { capacity: -3, refill: 5, period: 1s }\n",
                        4, "plans.free.limits[0].capacity", "must be > 0"),
                arguments("zero refill", plan + "      - { capacity: 5, refill: 0, period: 1s }\n",
                        4, "plans.free.limits[0].refill", "must be > 0"),
                arguments("non-numeric capacity", plan + "      - { capacity: lots, refill: 5, period: 1s }\n",
                        4, "plans.free.limits[0].capacity", "whole number"),
                arguments("fractional refill", plan + "      - { capacity: 5, refill: 2.5, period: 1s }\n",
                        4, "plans.free.limits[0].refill", "whole number"),
                arguments("unknown period unit", plan + "      - { capacity: 5, refill: 5, period: 10x }\n",
                        4, "plans.free.limits[0].period", "unknown period"),
                arguments("period without unit", plan + "      - { capacity: 5, refill: 5, period: 10 }\n",
                        4, "plans.free.limits[0].period", "needs a unit"),
                arguments("zero period", plan + "      - { capacity: 5, refill: 5, period: 0s }\n",
                        4, "plans.free.limits[0].period", "must be > 0"),
                arguments("missing capacity", plan + "      - { refill: 5, period: 1s }\n",
                        4, "plans.free.limits[0].capacity", "required"),
                arguments("no limits", "plans:\n  free:\n    limits: []\n", 3, "plans.free.limits", "at least one limit"),
                arguments("unknown key in per-user", "plans:\n  free:\n    limits: [ { capacity: 5, refill: 5, period: 1s } ]\n"
                        + "    per-user: { limit: [] }\ntenants:\n  users: [ { type: header } ]\n", 4, "plans.free.per-user.limit",
                        "unknown key"),
                arguments("per-user below a route's cost", "plans:\n  free:\n    limits: [ { capacity: 5, refill: 5, period: 1s } ]\n"
                        + "    per-user: { limits: [ { capacity: 2, refill: 2, period: 1s } ] }\nroutes:\n"
                        + "  - { name: r, paths: [/r], cost: 3 }\n", 6, "routes[0].cost",
                        "exceeds the capacity 2 of plans.free.per-user.limits[0]"),
                arguments("route limits on an unlimited route", "plans:\n  free:\n    limits: [ { capacity: 5, refill: 5, period: 1s } ]\n"
                        + "routes:\n  - name: r\n    paths: [/r]\n    limited: false\n    limits: [ { capacity: 1, refill: 1, period: 1s } ]\n",
                        8, "routes[0].limits", "takes no cost, group, limits or throttle"),
                arguments("two route limits of one name", "plans:\n  free:\n    limits: [ { capacity: 5, refill: 5, period: 1s } ]\n"
                        + "routes:\n  - name: r\n    paths: [/r]\n    limits:\n      - { name: a, capacity: 1, refill: 1, period: 1s }\n"
                        + "      - { name: a, per: client-address, capacity: 1, refill: 1, period: 1s }\n",
                        9, "routes[0].limits[1].name", "duplicate limit name 'a'"),
                arguments("limits not a list", "plans:\n  free:\n    limits: 5\n", 3, "plans.free.limits", "expected a list"),
                arguments("duplicate key", "plans:\n  free:\n    limits: []\n  free:\n    limits: []\n", 4, "free", "duplicate key"),
                arguments("duplicate route names", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "routes:\n  - { name: a, paths: [/x] }\n  - { name: a, paths: [/y] }\n",
                        7, "routes[1].name", "duplicate route name"),
                arguments("route without paths", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "routes:\n  - { name: a }\n", 6, "routes[0].paths", "required"),
                arguments("relative path", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "routes:\n  - { name: a, paths: [items/*] }\n", 6, "routes[0].paths[0]", "must start with '/'"),
                arguments("bad method", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "routes:\n  - { name: a, methods: [get], paths: [/x] }\n", 6, "routes[0].methods[0]", "not an HTTP method"),
                arguments("zero cost", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "routes:\n  - { name: a, paths: [/x], cost: 0 }\n", 6, "routes[0].cost", "must be > 0"),
                arguments("cost above a plan's capacity", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "routes:\n  - { name: a, paths: [/x], cost: 6 }\n", 6, "routes[0].cost", "exceeds the capacity 5"),
                arguments("cost on an unlimited route", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "routes:\n  - { name: a, paths: [/x], limited: false, cost: 2 }\n", 6, "routes[0].cost", "limited: false"),
                arguments("unknown plan in an assignment", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "tenants:\n  assignments:\n    acme: gold\n", 7, "tenants.assignments.acme", "unknown plan 'gold'"),
                arguments("invalid tenant id in an assignment", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "tenants:\n  assignments:\n    \"a b\": free\n", 7, "tenants.assignments.a b", "not a valid tenant id"),
                arguments("unknown default plan", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "tenants:\n  default-plan: gold\n", 6, "tenants.default-plan", "unknown plan 'gold'"),
                arguments("default plan missing with two plans", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "  pro:\n    limits: [ { capacity: 9, refill: 9, period: 1s } ]\n",
                        0, "tenants.default-plan", "required when more than one plan"),
                arguments("bad unresolved policy", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "tenants:\n  unresolved: ignore\n", 6, "tenants.unresolved", "expected one of [reject, anonymous]"),
                arguments("directory timeout without a unit", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "tenants:\n  directory: { timeout: 250 }\n", 6, "tenants.directory.timeout", "a number needs a unit"),
                arguments("directory timeout over 10 s", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "tenants:\n  directory: { timeout: 30s }\n", 6, "tenants.directory.timeout", "must be <= 10s"),
                arguments("zero directory lookups", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "tenants:\n  directory:\n    max-lookups: 0\n", 7, "tenants.directory.max-lookups", "must be > 0"),
                arguments("too many directory lookups", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "tenants:\n  directory:\n    max-lookups: 1000\n", 7, "tenants.directory.max-lookups", "must be <= 256"),
                arguments("bad directory answer", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "tenants:\n  directory:\n    unavailable: fail\n", 7, "tenants.directory.unavailable",
                        "expected one of [default, refuse]"),
                arguments("unknown directory setting", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "tenants:\n  directory:\n    retries: 3\n", 7, "tenants.directory.retries", "retries"),
                arguments("zero max-tracked", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "tenants:\n  max-tracked: 0\n", 6, "tenants.max-tracked", "must be > 0"),
                arguments("resolver without a type", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "tenants:\n  resolvers:\n    - { name: X-Org }\n", 7, "tenants.resolvers[0].type", "required"),
                arguments("resolver not a map", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "tenants:\n  resolvers:\n    - header\n", 7, "tenants.resolvers[0]", "expected a map"),
                arguments("zero concurrency cap", "plans:\n  free:\n    limits: [ { capacity: 5, refill: 5, period: 1s } ]\n"
                        + "    concurrency: { reports: 0 }\n", 4, "plans.free.concurrency.reports", "must be > 0"),
                arguments("a raw API key in the file", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "tenants:\n  api-keys:\n    sk_live_123: acme\n", 7, "tenants.api-keys.sk_live_123", "never the key itself"),
                arguments("an API key for an invalid tenant", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "tenants:\n  api-keys:\n    " + "ab".repeat(32) + ": \"a b\"\n", 7,
                        "tenants.api-keys.abababababababab...", "not a valid tenant id"),
                arguments("bad trusted proxy", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "tenants:\n  trusted-proxies: [10.0.0.0/8, proxy.local]\n", 6, "tenants.trusted-proxies[1]", "not an IPv4 or IPv6"),
                arguments("trusted proxy prefix too long", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "tenants:\n  trusted-proxies: [10.0.0.0/33]\n", 6, "tenants.trusted-proxies[0]", "longer than the address"),
                arguments("override of an unknown plan", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "tenants:\n  overrides:\n    big: { plan: gold, limits: [ { capacity: 9, refill: 9, period: 1s } ] }\n",
                        7, "tenants.overrides.big.plan", "unknown plan 'gold'"),
                arguments("override without limits", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "tenants:\n  overrides:\n    big: { plan: free }\n", 7, "tenants.overrides.big.limits", "required"),
                arguments("override contradicting an assignment", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "  pro:\n    limits: [ { capacity: 9, refill: 9, period: 1s } ]\n"
                        + "tenants:\n  default-plan: free\n  assignments: { big: pro }\n"
                        + "  overrides:\n    big: { plan: free, limits: [ { capacity: 9, refill: 9, period: 1s } ] }\n",
                        11, "tenants.overrides.big.plan", "contradicts tenants.assignments.big"),
                arguments("override below a route's cost", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "routes:\n  - { name: a, paths: [/x], cost: 4 }\n"
                        + "tenants:\n  overrides:\n    big:\n      limits:\n        - { capacity: 3, refill: 3, period: 1s }\n",
                        11, "tenants.overrides.big.limits[0].capacity", "below the cost 4 of route a"),
                arguments("guest pool below a route's cost", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "routes:\n  - { name: a, paths: [/x], cost: 4 }\n"
                        + "tenants:\n  guests:\n    limits:\n      - { capacity: 3, refill: 3, period: 1s }\n",
                        10, "tenants.guests.limits[0].capacity", "below the cost 4 of route a"),
                arguments("guest cap of a group no route has", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "routes:\n  - { name: r, paths: [/r], group: reports }\n"
                        + "tenants:\n  guests: { concurrency: { reprots: 2 } }\n",
                        8, "tenants.guests.concurrency.reprots", "no route has group 'reprots'"),
                arguments("guest pool without limits", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "tenants:\n  guests: { }\n", 6, "tenants.guests", "give limits, concurrency or both"),
                arguments("plan caps a group no route has", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "    concurrency: { reprots: 1 }\nroutes:\n  - { name: r, paths: [/r], group: reports }\n",
                        5, "plans.free.concurrency.reprots", "no route has group 'reprots', groups in use: [reports]"),
                arguments("throttle without max-delay", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "    throttle: { queue: 10 }\n", 5, "plans.free.throttle.max-delay", "required"),
                arguments("throttle without queue", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "    throttle: { max-delay: 1s }\n", 5, "plans.free.throttle.queue", "required"),
                arguments("throttle max-delay without unit", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "    throttle: { max-delay: 500, queue: 10 }\n", 5, "plans.free.throttle.max-delay", "needs a unit"),
                arguments("throttle max-delay too long", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "    throttle: { max-delay: 2m, queue: 10 }\n", 5, "plans.free.throttle.max-delay", "must be <= 60s"),
                arguments("throttle of zero max-delay", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "    throttle: { max-delay: 0s, queue: 10 }\n", 5, "plans.free.throttle.max-delay", "must be > 0"),
                arguments("throttle queue of zero", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "    throttle: { max-delay: 1s, queue: 0 }\n", 5, "plans.free.throttle.queue", "must be > 0"),
                arguments("throttle queue too large", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "    throttle: { max-delay: 1s, queue: 1000000 }\n", 5, "plans.free.throttle.queue", "must be <= 100000"),
                arguments("unknown key in a throttle", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "    throttle: { max-delay: 1s, queue: 5, fifo: true }\n", 5, "plans.free.throttle.fifo", "unknown key"),
                arguments("throttle on an unlimited route", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "routes:\n  - { name: ops, paths: [/health], limited: false, throttle: { max-delay: 1s, queue: 2 } }\n",
                        6, "routes[0].throttle", "takes no cost, group, limits or throttle"),
                arguments("groups not a map", GROUPED + "groups: [reports]\n", 7, "groups", "expected a map"),
                arguments("settings for a group no route has", GROUPED + "groups:\n  exports: { max-inflight: 2 }\n",
                        8, "groups.exports", "no route has group 'exports'"),
                arguments("unknown key in a group", GROUPED + "groups:\n  reports: { max: 2 }\n",
                        8, "groups.reports.max", "unknown key, expected one of [adaptive, max-inflight, queue]"),
                arguments("zero max-inflight", GROUPED + "groups:\n  reports: { max-inflight: 0 }\n",
                        8, "groups.reports.max-inflight", "must be > 0"),
                arguments("fractional max-inflight", GROUPED + "groups:\n  reports: { max-inflight: 1.5 }\n",
                        8, "groups.reports.max-inflight", "whole number"),
                arguments("queue without max-wait", GROUPED + "groups:\n  reports:\n    queue: { size: 4 }\n",
                        9, "groups.reports.queue.max-wait", "required"),
                arguments("queue without size", GROUPED + "groups:\n  reports:\n    queue: { max-wait: 1s }\n",
                        9, "groups.reports.queue.size", "required"),
                arguments("zero queue size", GROUPED + "groups:\n  reports:\n    queue: { size: 0, max-wait: 1s }\n",
                        9, "groups.reports.queue.size", "must be > 0"),
                arguments("unbounded queue size", GROUPED + "groups:\n  reports:\n    queue: { size: 1000000, max-wait: 1s }\n",
                        9, "groups.reports.queue.size", "must be <= 10000"),
                arguments("max-wait without unit", GROUPED + "groups:\n  reports:\n    queue: { size: 2, max-wait: 2 }\n",
                        9, "groups.reports.queue.max-wait", "needs a unit"),
                arguments("max-wait too long", GROUPED + "groups:\n  reports:\n    queue: { size: 2, max-wait: 2h }\n",
                        9, "groups.reports.queue.max-wait", "must be <= 60s"),
                arguments("unknown key in a queue", GROUPED + "groups:\n  reports:\n    queue: { size: 2, max-wait: 1s, lifo: true }\n",
                        9, "groups.reports.queue.lifo", "unknown key"),
                arguments("adaptive without max", GROUPED + "groups:\n  reports:\n    adaptive: { initial: 4 }\n",
                        9, "groups.reports.adaptive.max", "required"),
                arguments("adaptive without initial", GROUPED + "groups:\n  reports:\n    adaptive: { max: 40 }\n",
                        9, "groups.reports.adaptive.initial", "required"),
                arguments("adaptive unknown algorithm", GROUPED + "groups:\n  reports:\n    adaptive: { algorithm: aimd, initial: 4, max: 40 }\n",
                        9, "groups.reports.adaptive.algorithm", "unknown value 'aimd', expected one of [gradient2, vegas]"),
                arguments("adaptive min of zero", GROUPED + "groups:\n  reports:\n    adaptive: { initial: 4, min: 0, max: 40 }\n",
                        9, "groups.reports.adaptive.min", "must be > 0, was 0"),
                arguments("adaptive min above max", GROUPED + "groups:\n  reports:\n    adaptive: { initial: 4, min: 50, max: 40 }\n",
                        9, "groups.reports.adaptive.min", "must be <= max (40), was 50"),
                arguments("adaptive initial below min", GROUPED + "groups:\n  reports:\n    adaptive: { initial: 2, min: 4, max: 40 }\n",
                        9, "groups.reports.adaptive.initial", "must be >= min (4), was 2"),
                arguments("adaptive initial above max", GROUPED + "groups:\n  reports:\n    adaptive: { initial: 50, max: 40 }\n",
                        9, "groups.reports.adaptive.initial", "must be <= max (40), was 50"),
                arguments("adaptive max too large", GROUPED + "groups:\n  reports:\n    adaptive: { initial: 4, max: 100001 }\n",
                        9, "groups.reports.adaptive.max", "must be <= 100000, was 100001"),
                arguments("adaptive max not a number", GROUPED + "groups:\n  reports:\n    adaptive: { initial: 4, max: lots }\n",
                        9, "groups.reports.adaptive.max", "expected a whole number > 0, found a string 'lots'"),
                arguments("adaptive unknown key", GROUPED + "groups:\n  reports:\n    adaptive: { initial: 4, max: 40, window: 10 }\n",
                        9, "groups.reports.adaptive.window", "unknown key, expected one of [algorithm, initial, max, min]"),
                arguments("adaptive with max-inflight", GROUPED + "groups:\n  reports:\n    max-inflight: 10\n"
                        + "    adaptive: { initial: 4, max: 40 }\n",
                        10, "groups.reports.adaptive", "cannot be set with max-inflight"),
                arguments("global without limits", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "global: {}\n", 5, "global.limits", "required"),
                arguments("publish not a boolean", "plans:\n  free:\n    limits: [ { capacity: 5, refill: 5, period: 1s } ]\n"
                        + "    publish: 1\n", 4, "plans.free.publish", "expected true or false"),
                arguments("shadow as a string", "plans:\n  free:\n    limits: [ { capacity: 5, refill: 5, period: 1s } ]\n"
                        + "    shadow: \"true\"\n", 4, "plans.free.shadow", "expected true or false"),
                arguments("top-level shadow not a boolean", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "shadow: sometimes\n", 5, "shadow", "expected true or false"),
                arguments("period out of range", plan + "      - { capacity: 5, refill: 5, period: 999999999999999999d }\n",
                        4, "plans.free.limits[0].period", "out of range"),
                // past 292 years a period's nanoseconds overflow a long: once an ArithmeticException at start
                arguments("period of 292 years", plan + "      - { capacity: 5, refill: 5, period: 106752d }\n",
                        4, "plans.free.limits[0].period", "must be at most 3650d (10 years), was '106752d'"),
                arguments("ISO period of millions of years", plan + "      - { capacity: 5, refill: 5, period: P1000000000D }\n",
                        4, "plans.free.limits[0].period", "must be at most 3650d (10 years), was 'P1000000000D'"),
                arguments("a global period a day past the bound", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "global: { limits: [ { capacity: 5, refill: 5, period: P3651D } ] }\n", 5, "global.limits[0].period",
                        "must be at most 3650d (10 years), was 'P3651D'"));
    }

    @Test
    void publishAndShadowAreOffUnlessSwitchedOn() {
        Plans plans = PlansFile.parse("p.yml", """
                shadow: true
                plans:
                  free: { limits: [ { capacity: 5, refill: 5, period: 1s } ] }
                  open: { limits: [ { capacity: 5, refill: 5, period: 1s } ], publish: true, shadow: true }
                tenants: { default-plan: free }
                """);
        assertThat(plans.shadow()).isTrue();
        assertThat(plans.plan("free").orElseThrow()).extracting(Plan::publish, Plan::shadow).containsExactly(false, false);
        assertThat(plans.plan("open").orElseThrow()).extracting(Plan::publish, Plan::shadow).containsExactly(true, true);
        assertThat(PlansFile.parse("v.yml", VALID).shadow()).isFalse();
    }

    @Test
    void periodsParseTheSameAtRuntimeAsInTheFile() {
        assertThat(PlansFile.parsePeriod("1m")).isEqualTo(Duration.ofMinutes(1));
        assertThat(PlansFile.parsePeriod("PT10S")).isEqualTo(Duration.ofSeconds(10));
        assertThat(PlansFile.parsePeriod("3650d")).as("the longest: 10 years").isEqualTo(Duration.ofDays(3650));
        assertThat(PlansFile.parsePeriod("PT87600H")).isEqualTo(Duration.ofDays(3650));
        for (String bad : List.of("", "0s", "10", "10x", "-1s", "PT-1S", "P1Y", "3651d", "PT87600H0.001S", "106752d",
                "P1000000000D", "9223372036854775807ms")) {
            assertThatThrownBy(() -> PlansFile.parsePeriod(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void limitsKeptElsewhereParseAsTheFileWritesThemInYamlOrJson() {
        List<Bandwidth> expected = List.of(new Bandwidth("b0", 200, 100, Duration.ofSeconds(10)),
                new Bandwidth("day", 100000, 100000, Duration.ofDays(1)));
        assertThat(PlansFile.parseLimits("t", "[{capacity: 200, refill: 100, period: 10s}, "
                + "{name: day, capacity: 100000, refill: 100000, period: 1d}]")).isEqualTo(expected);
        assertThat(PlansFile.parseLimits("t", "[{\"capacity\":200,\"refill\":100,\"period\":\"10s\"},"
                + "{\"name\":\"day\",\"capacity\":100000,\"refill\":100000,\"period\":\"P1D\"}]")).isEqualTo(expected);
    }

    @Test
    void quotasKeptElsewhereParseAsTheFileWritesThemInYamlOrJsonAndAnEmptyListIsNone() {
        List<CalendarQuota> expected = List.of(new CalendarQuota("monthly", 100000, CalendarQuota.Per.MONTH,
                java.time.ZoneId.of("Europe/Berlin")), new CalendarQuota("daily", 5000, CalendarQuota.Per.DAY, java.time.ZoneOffset.UTC));
        assertThat(PlansFile.parseQuotas("t", "[{name: monthly, limit: 100000, per: month, zone: Europe/Berlin}, "
                + "{name: daily, limit: 5000, per: day}]")).isEqualTo(expected);
        assertThat(PlansFile.parseQuotas("t", "[{\"name\":\"monthly\",\"limit\":100000,\"per\":\"month\",\"zone\":\"Europe/Berlin\"},"
                + "{\"name\":\"daily\",\"limit\":5000,\"per\":\"day\"}]")).isEqualTo(expected);
        assertThat(PlansFile.parseQuotas("t", "[]")).isEmpty();
        assertThatThrownBy(() -> PlansFile.parseQuotas("tenant acme", "[{name: m, limit: 0, per: month}]"))
                .isInstanceOfSatisfying(InvalidPlansException.class, e -> {
                    assertThat(e.file()).isEqualTo("tenant acme");
                    assertThat(e.field()).isEqualTo("quotas[0].limit");
                });
        assertThatThrownBy(() -> PlansFile.parseQuotas("tenant acme", " "))
                .isInstanceOfSatisfying(InvalidPlansException.class, e -> assertThat(e.field()).isEqualTo("quotas"));
    }

    @ParameterizedTest(name = "[{index}] {1}: {2}")
    @MethodSource("badLimitTexts")
    void refusesBadLimitTextNamingTheFieldAndTheReason(String text, String field, String reason) {
        assertThatThrownBy(() -> PlansFile.parseLimits("tenant acme", text))
                .isInstanceOfSatisfying(InvalidPlansException.class, e -> {
                    assertThat(e.file()).isEqualTo("tenant acme");
                    assertThat(e.field()).isEqualTo(field);
                    assertThat(e.reason()).contains(reason);
                });
    }

    static Stream<Arguments> badLimitTexts() {
        return Stream.of(
                arguments("  ", "limits", "at least one limit is required"),
                arguments("[]", "limits", "at least one limit is required"),
                arguments("{capacity: 5, refill: 5, period: 1s}", "limits", "expected a list"),
                arguments("[{capacity: 0, refill: 5, period: 1s}]", "limits[0].capacity", "must be > 0, was 0"),
                arguments("[{capacity: 5, refill: 5, period: 10}]", "limits[0].period", "a number needs a unit"),
                arguments("[{capacity: 5, refill: 5, period: 10x}]", "limits[0].period", "unknown period '10x'"),
                arguments("[{capacity: 5, refill: 5, period: 1s, burst: 3}]", "limits[0].burst", "unknown key"),
                arguments("[{capacity: 5, refill: 5, period: 1s}, {capacity: 5, refill: 5, period: 1s, name: b0}]",
                        "limits[1].name", "duplicate limit name 'b0'"),
                arguments("[{capacity: 5", "", "not valid YAML"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badFiles")
    void refusesABadFileNamingFileLineAndField(String description, String yaml, int line, String field, String reason) {
        assertThatThrownBy(() -> PlansFile.parse("bad.yml", yaml))
                .isInstanceOfSatisfying(InvalidPlansException.class, e -> {
                    assertThat(e.file()).isEqualTo("bad.yml");
                    if (line > 0) assertThat(e.line()).as("line").isEqualTo(line);
                    assertThat(e.field()).as("field").isEqualTo(field);
                    assertThat(e.getMessage()).startsWith("bad.yml:").contains(reason);
                    if (!field.isEmpty()) assertThat(e.getMessage()).contains(field);
                });
    }

    @Test
    void loadsFromAFileAndFromTheClassPath(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        Path file = dir.resolve("plans.yml");
        Files.writeString(file, VALID);
        assertThat(PlansFile.load(file.toString()).plans().keySet()).containsExactlyInAnyOrder("free", "pro");
        assertThat(PlansFile.load("classpath:test-plans.yml").plans().keySet()).containsExactly("basic");
    }

    /** {@link #VALID} followed by comment lines up to {@code bytes}: a plans file the parser would accept. */
    private static Path paddedPlans(Path dir, long bytes) throws Exception {
        Path file = dir.resolve("padded.yml");
        String line = "# " + "x".repeat(97) + "\n";
        try (var out = Files.newBufferedWriter(file)) {
            out.write(VALID);
            for (long n = VALID.length(); n < bytes; n += line.length()) out.write(line);
        }
        return file;
    }

    @Test
    void aFileOverTheSizeLimitIsRefusedNamingTheFileItsSizeAndTheLimit(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        Path file = paddedPlans(dir, 10_000_000);
        long size = Files.size(file);
        assertThatThrownBy(() -> PlansFile.load(file)).isInstanceOfSatisfying(InvalidPlansException.class, e -> {
            assertThat(e.file()).isEqualTo(file.toString());
            assertThat(e.line()).isZero();
            assertThat(e.getMessage()).startsWith(file + ": the file is " + size + " bytes, over the limit of "
                    + PlansFile.DEFAULT_MAX_BYTES + " bytes");
        });
        assertThatThrownBy(() -> PlansFile.load(file.toString())).as("the same through a location")
                .isInstanceOf(InvalidPlansException.class).hasMessageContaining(size + " bytes");
        assertThat(PlansFile.load(file, 20_000_000).plans()).as("a larger limit: the same file is valid").containsKey("pro");
    }

    @Test
    void theLimitIsInclusive(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        Path file = dir.resolve("plans.yml");
        Files.writeString(file, VALID);
        long size = Files.size(file);
        assertThat(PlansFile.load(file, size).plans()).containsKey("free");
        assertThatThrownBy(() -> PlansFile.load(file, size - 1)).isInstanceOf(InvalidPlansException.class)
                .hasMessageContaining("the file is " + size + " bytes, over the limit of " + (size - 1) + " bytes");
    }

    @Test
    void theSizeComesFromTheFilesAttributesSoAnOversizedFileIsNeverRead(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        Path file = dir.resolve("huge.yml");
        try (var raf = new java.io.RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(3L << 30); // sparse: 3 GiB that no byte array could even hold
        }
        assertThatThrownBy(() -> PlansFile.load(file)).isInstanceOf(InvalidPlansException.class)
                .hasMessageContaining("the file is " + (3L << 30) + " bytes, over the limit");
    }

    @Test
    void aClassPathResourceIsReadNoFurtherThanTheLimit() {
        assertThatThrownBy(() -> PlansFile.load("classpath:test-plans.yml", 10)).isInstanceOf(InvalidPlansException.class)
                .hasMessage("classpath:test-plans.yml: the file is more than 10 bytes, over the limit of 10 bytes; it was not parsed "
                        + "(raise the limit if it is meant to be this large)");
        assertThat(PlansFile.load("classpath:test-plans.yml", PlansFile.DEFAULT_MAX_BYTES).plans()).containsKey("basic");
    }

    @Test
    void theLimitMustBePositiveAndFitAnArray() {
        for (long bad : new long[]{0, -1, Integer.MAX_VALUE, Long.MAX_VALUE}) {
            assertThatThrownBy(() -> PlansFile.load(Path.of("plans.yml"), bad)).as("" + bad)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("size limit");
        }
    }

    @Test
    void aFileThatIsNotUtf8IsRefused(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        Path file = dir.resolve("latin1.yml");
        Files.write(file, "plans: { caf\u00e9: { limits: [] } }".getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
        assertThatThrownBy(() -> PlansFile.load(file)).isInstanceOf(InvalidPlansException.class)
                .hasMessageContaining("cannot read").hasMessageContaining("MalformedInput");
    }

    @Test
    void aMissingFileNamesTheFile() {
        assertThatThrownBy(() -> PlansFile.load("/no/such/plans.yml"))
                .isInstanceOf(InvalidPlansException.class).hasMessageContaining("/no/such/plans.yml").hasMessageContaining("cannot read");
        assertThatThrownBy(() -> PlansFile.load("classpath:nope.yml"))
                .isInstanceOf(InvalidPlansException.class).hasMessageContaining("classpath:nope.yml");
    }

    @Test
    void tenantIdRule() {
        for (String ok : List.of("acme", "a", "A-Z_0.9:x", "x".repeat(64))) assertThat(TenantId.isValid(ok)).as(ok).isTrue();
        for (String bad : List.of("", "x".repeat(65), "a b", "a\r\nb", "a\u0000", "caf\u00e9", "a/b", "../x".substring(1) + "/", ".", "..", "...")) {
            assertThat(TenantId.isValid(bad)).as(bad).isFalse();
        }
        assertThat(TenantId.isValid(null)).isFalse();
    }

    @Test
    void readsResolversApiKeysTrustedProxiesAndOverrides() {
        String hash = "AB".repeat(32);
        Plans plans = PlansFile.parse("t.yml", """
                plans:
                  free: { limits: [ { capacity: 5, refill: 5, period: 1s } ] }
                  pro: { limits: [ { capacity: 50, refill: 50, period: 1s } ] }
                tenants:
                  default-plan: free
                  resolvers:
                    - { type: api-key }
                    - type: jwt-claim
                      claim: org
                      secret-env: JWT_SECRET
                    - { type: jwt-claim, verify: false }
                    - { type: host, suffix: .API.example.com }
                    - { type: path }
                    - { type: principal }
                    - { type: attribute, name: tenant }
                  api-keys: { %s: acme }
                  trusted-proxies: [ 10.0.0.0/8, "::1", 192.168.1.7 ]
                  overrides:
                    bigcorp: { plan: pro, limits: [ { capacity: 5000, refill: 5000, period: 1m } ] }
                    solo: { limits: [ { capacity: 7, refill: 7, period: 1s } ] }
                  guests: { limits: [ { name: pool, capacity: 200, refill: 600, period: 1m } ] }
                """.formatted(hash));
        assertThat(PlansFile.parse("g.yml", """
                plans: { free: { limits: [ { capacity: 5, refill: 5, period: 1s } ] } }
                routes: [ { name: r, paths: [/r], group: reports } ]
                tenants: { guests: { concurrency: { reports: 3 } } }
                """).tenants().guests()).isEqualTo(new GuestPool(List.of(), Map.of("reports", 3)));
        TenantSettings t = plans.tenants();
        assertThat(t.resolvers()).extracting(TenantSettings.ResolverSpec::type)
                .containsExactly("api-key", "jwt-claim", "jwt-claim", "host", "path", "principal", "attribute");
        TenantSettings.ResolverSpec jwt = t.resolvers().get(1);
        assertThat(jwt.optionNames()).containsExactly("claim", "secret-env");
        assertThat(jwt.string("claim")).contains("org");
        assertThat(jwt.string("secret-env")).contains("JWT_SECRET");
        assertThat(jwt.invalid("secret-env", "not set").getMessage())
                .isEqualTo("t.yml:10: tenants.resolvers[1].secret-env: not set");
        assertThat(t.resolvers().get(2).bool("verify")).contains(false);
        assertThat(t.resolvers().get(3).string("suffix")).as("kept as written: the host type reads it")
                .contains(".API.example.com");
        assertThat(t.apiKeys()).containsEntry(hash.toLowerCase(), "acme");
        assertThat(t.trustedProxies()).hasSize(3);
        assertThat(t.trustedProxies().get(0).contains(AddressRange.parseAddress("10.200.3.4"))).isTrue();
        assertThat(t.trustedProxies().get(0).contains(AddressRange.parseAddress("11.0.0.1"))).isFalse();
        assertThat(t.overrides().get("bigcorp")).containsExactly(new Bandwidth("b0", 5000, 5000, Duration.ofMinutes(1)));
        assertThat(t.guests().limits()).containsExactly(new Bandwidth("pool", 200, 600, Duration.ofMinutes(1)));
        assertThat(t.assignments()).containsEntry("bigcorp", "pro").as("an override makes a tenant known").containsEntry("solo", "free");
    }

    @Test
    void addressRangesParseIpv4Ipv6AndCidrsWithoutDns() {
        assertThat(AddressRange.parse("192.168.0.0/16").contains(AddressRange.parseAddress("192.168.44.1"))).isTrue();
        assertThat(AddressRange.parse("192.168.0.0/16").contains(AddressRange.parseAddress("192.169.0.1"))).isFalse();
        assertThat(AddressRange.parse("10.1.2.3").contains(AddressRange.parseAddress("::ffff:10.1.2.3"))).as("v4-mapped").isTrue();
        assertThat(AddressRange.parse("2001:db8::/32").contains(AddressRange.parseAddress("2001:db8:1::5"))).isTrue();
        assertThat(AddressRange.parse("2001:db8::/32").contains(AddressRange.parseAddress("2001:db9::5"))).isFalse();
        assertThat(AddressRange.parse("::1").contains(AddressRange.parseAddress("[0:0:0:0:0:0:0:1]"))).isTrue();
        assertThat(AddressRange.parse("fe80::/10").contains(AddressRange.parseAddress("fe80::1%eth0"))).isTrue();
        assertThat(AddressRange.parse("10.0.0.0/9").contains(AddressRange.parseAddress("10.127.255.255"))).isTrue();
        assertThat(AddressRange.parse("10.0.0.0/9").contains(AddressRange.parseAddress("10.128.0.0"))).isFalse();
        for (String bad : List.of("", "localhost", "1.2.3", "1.2.3.256", "1.2.3.4.5", "01234.1.1.1", "1::2::3", "1:2:3:4:5:6:7:8:9",
                "12345::", "g::1", "1.2.3.4/", "1.2.3.4/x", "::1/129", "a".repeat(100))) {
            assertThatThrownBy(() -> AddressRange.parse(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void pathPatterns() {
        PathPattern one = PathPattern.parse("/items/*");
        assertThat(one.matches("/items/1")).isTrue();
        assertThat(one.matches("/items/1/")).isTrue();
        assertThat(one.matches("/items")).isFalse();
        assertThat(one.matches("/items/")).isFalse();
        assertThat(one.matches("/items/1/2")).isFalse();
        assertThat(one.matches("/itemsx/1")).isFalse();
        PathPattern rest = PathPattern.parse("/v1/**");
        assertThat(rest.matches("/v1")).isTrue();
        assertThat(rest.matches("/v1/a/b/c")).isTrue();
        assertThat(rest.matches("/v2/a")).isFalse();
        assertThat(PathPattern.parse("/").matches("/")).isTrue();
        assertThat(PathPattern.parse("/health").matches("/health")).isTrue();
        assertThat(PathPattern.parse("/health").matches("/healthz")).isFalse();
        for (String bad : Set.of("x", "/a//b", "/**/a", "/a*")) {
            assertThatThrownBy(() -> PathPattern.parse(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
    }
}

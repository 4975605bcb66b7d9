package io.quotagate.filter.internal.limits;

import io.quotagate.filter.status.LimitOverrides;
import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.CalendarQuota;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import io.quotagate.plans.ScopedLimit;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The shared record's formats: 1 while no plan has calendar quotas, 2 once one has, 3 once the file has
 * per-user or route limits, 4 once a bandwidth is not a token bucket, a quota has an anchor or a tenant a zone.
 */
class LimitsRecordFormatTest {
    private static final String WITHOUT = """
            plans:
              pro:
                limits: [ { capacity: 100, refill: 100, period: 1s } ]
            """;
    private static final String WITH = WITHOUT + """
                quotas: [ { name: monthly, limit: 1000, per: month, zone: Europe/Berlin } ]
            """;

    private static LimitsRecord record(Plans plans, LimitOverrides overrides) {
        return new LimitsRecord(LimitsBase.of(plans), plans.source(), "i1", Instant.parse("2027-01-01T00:00:00Z"),
                overrides, new LimitsRecord.Change("i1", Instant.parse("2027-01-01T00:00:00Z"), "test"));
    }

    @Test
    void aRecordWithoutQuotasStaysFormatOneSoThePreviousVersionReadsIt() throws Exception {
        String json = record(PlansFile.parse("p.yml", WITHOUT), LimitOverrides.NONE).toJson();
        assertThat(json).startsWith("{\"format\":1,").doesNotContain("quotas");
        assertThat(LimitsRecord.parse(json).base()).isEqualTo(LimitsBase.of(PlansFile.parse("p.yml", WITHOUT)));
    }

    @Test
    void quotasMakeItFormatTwoAndComeBackWhole() throws Exception {
        Plans plans = PlansFile.parse("p.yml", WITH);
        List<CalendarQuota> daily = List.of(new CalendarQuota("daily", 50, CalendarQuota.Per.DAY, ZoneId.of("UTC")));
        LimitsRecord r = record(plans, LimitOverrides.NONE.withPlanQuotas("pro", daily));
        String json = r.toJson();
        assertThat(json).startsWith("{\"format\":2,")
                .contains("\"quotas\":{\"pro\":[{\"name\":\"monthly\",\"limit\":1000,\"per\":\"month\",\"zone\":\"Europe/Berlin\"}]}");
        LimitsRecord back = LimitsRecord.parse(json);
        assertThat(back.base()).isEqualTo(r.base());
        assertThat(back.overrides().quotas()).containsEntry("pro", daily);
        assertThat(EffectiveLimits.of(PlansFile.parse("p.yml", WITHOUT), back.base(), back.overrides())
                .plan("pro").orElseThrow().quotas()).as("another instance's file, this record's quotas").isEqualTo(daily);
    }

    @Test
    void aTenantsOwnQuotasMakeItFormatTwoAndComeBackWhole() throws Exception {
        Plans plans = PlansFile.parse("p.yml", WITHOUT + """
                tenants:
                  overrides:
                    bigcorp: { plan: pro, quotas: [ { name: monthly, limit: 500, per: month } ] }
                """);
        LimitsRecord r = record(plans, LimitOverrides.NONE.withTenant("acme", new io.quotagate.tenant.TenantContract(
                "pro", List.of(), List.of())));
        String json = r.toJson();
        assertThat(json).startsWith("{\"format\":2,").contains("\"bigcorp\":{\"plan\":\"pro\",\"quotas\":[{")
                .contains("\"acme\":{\"plan\":\"pro\",\"quotas\":[]}");
        LimitsRecord back = LimitsRecord.parse(json);
        assertThat(back.base()).isEqualTo(r.base());
        assertThat(back.overrides()).isEqualTo(r.overrides());
        Plans effective = EffectiveLimits.of(PlansFile.parse("p.yml", WITHOUT), back.base(), back.overrides());
        assertThat(effective.tenants().overrideQuotas()).containsEntry("acme", List.of())
                .containsKey("bigcorp");
    }

    @Test
    void theFingerprintOfABaseWithoutQuotasIsUnchangedByTheNewField() {
        Plans plans = PlansFile.parse("p.yml", WITHOUT);
        LimitsBase base = LimitsBase.of(plans);
        // what format 1 hashed: the limits alone, no quotas member at all
        assertThat(LimitsRecord.fingerprint(base))
                .isEqualTo(LimitsRecord.fingerprint(new LimitsBase(base.global(), base.guests(), base.plans(),
                        base.tenants(), java.util.Map.of("pro", List.of()))));
        assertThat(LimitsRecord.fingerprint(LimitsBase.of(PlansFile.parse("p.yml", WITH))))
                .isNotEqualTo(LimitsRecord.fingerprint(base));
    }

    @Test
    void aFormatOneRecordWithQuotasIsRefusedAndANewerFormatAsksForAnUpgrade() throws Exception {
        String two = record(PlansFile.parse("p.yml", WITH), LimitOverrides.NONE).toJson();
        assertThatThrownBy(() -> LimitsRecord.parse(two.replace("\"format\":2", "\"format\":1")))
                .isInstanceOf(LimitsRecord.Unusable.class).hasMessage("base.quotas: unknown field");
        assertThatThrownBy(() -> LimitsRecord.parse(two.replace("\"format\":2", "\"format\":5")))
                .isInstanceOf(LimitsRecord.Unusable.class).hasMessageContaining("upgrade this instance");
        assertThatThrownBy(() -> LimitsRecord.parse(two.replace("\"per\":\"month\"", "\"per\":\"year\"")))
                .isInstanceOf(LimitsRecord.Unusable.class).hasMessage("base.quotas.pro[0].per: not day, week or month");
    }

    /** Per-user and route limits, a monthly quota beside them: every field format 3 adds, and format 2's. */
    static final String SCOPED = """
            plans:
              team:
                limits: [ { capacity: 100, refill: 100, period: 1h } ]
                quotas: [ { name: monthly, limit: 1000, per: month } ]
                per-user:
                  limits: [ { name: seat, capacity: 3, refill: 3, period: 1h } ]
            routes:
              - name: export
                paths: ["/export"]
                limits:
                  - { name: hourly, capacity: 2, refill: 2, period: 1h }
                  - { name: addr, per: client-address, capacity: 50, refill: 50, period: 1h }
                  - { name: daily, capacity: 5, refill: 5, period: 1d }
              - name: login
                paths: ["/login"]
                limits: [ { per: user, capacity: 4, refill: 4, period: 1m } ]
              - name: items
                paths: ["/items/**"]
            tenants:
              users:
                - { type: header, name: X-User-Id }
              assignments: { acme: team }
            """;

    @Test
    void perUserAndRouteLimitsMakeItFormatThreeAndComeBackWhole() throws Exception {
        Plans plans = PlansFile.parse("scoped.yml", SCOPED);
        LimitsRecord r = record(plans, LimitOverrides.NONE);
        String json = r.toJson();
        assertThat(json).startsWith("{\"format\":3,")
                .contains("\"perUser\":{\"team\":[{\"name\":\"seat\",\"capacity\":3,\"refill\":3,\"period\":\"PT1H\"}]}")
                .contains("\"login\":[{\"name\":\"b0\",\"capacity\":4,\"refill\":4,\"period\":\"PT1M\",\"per\":\"user\"}]")
                .contains("\"name\":\"addr\",\"capacity\":50,\"refill\":50,\"period\":\"PT1H\",\"per\":\"client-address\"")
                .doesNotContain("\"items\"");
        LimitsRecord back = LimitsRecord.parse(json);
        assertThat(back.base()).isEqualTo(r.base()).isEqualTo(LimitsBase.of(plans));
        assertThat(back.base().perUser()).containsOnlyKeys("team");
        // the bandwidths of one per are one bucket, as the file grouped them
        assertThat(back.base().routes().get("export")).containsExactly(
                new ScopedLimit(ScopedLimit.Scope.TENANT, List.of(new Bandwidth("hourly", 2, 2, Duration.ofHours(1)),
                        new Bandwidth("daily", 5, 5, Duration.ofDays(1)))),
                new ScopedLimit(ScopedLimit.Scope.CLIENT_ADDRESS, List.of(new Bandwidth("addr", 50, 50, Duration.ofHours(1)))));
        assertThat(back.fingerprint()).isEqualTo(r.fingerprint());
        assertThat(back.toJson()).isEqualTo(json);
    }

    @Test
    void theFingerprintOfABaseWithoutPerUserOrRouteLimitsIsUnchangedByTheNewFields() {
        Plans plans = PlansFile.parse("p.yml", WITH);
        LimitsBase base = LimitsBase.of(plans);
        assertThat(base.perUser()).isEmpty();
        assertThat(base.routes()).isEmpty();
        // what format 2 hashed: no perUser or routes member at all
        assertThat(LimitsRecord.fingerprint(base)).isEqualTo(LimitsRecord.fingerprint(new LimitsBase(base.global(),
                base.guests(), base.plans(), base.tenants(), base.quotas(), java.util.Map.of("pro", List.of()),
                java.util.Map.of("export", List.of()))));
        assertThat(record(plans, LimitOverrides.NONE).toJson()).startsWith("{\"format\":2,")
                .doesNotContain("perUser").doesNotContain("routes");
        // routes without limits of their own (and user resolvers) change neither the format nor the fingerprint
        Plans withRoutes = PlansFile.parse("p.yml", WITHOUT + """
                routes:
                  - { name: items, paths: ["/items/**"], cost: 2 }
                tenants:
                  users:
                    - { type: header, name: X-User-Id }
                """);
        assertThat(record(withRoutes, LimitOverrides.NONE).toJson()).startsWith("{\"format\":1,");
        assertThat(LimitsRecord.fingerprint(LimitsBase.of(withRoutes)))
                .isEqualTo(LimitsRecord.fingerprint(LimitsBase.of(PlansFile.parse("p.yml", WITHOUT))));
        assertThat(LimitsRecord.fingerprint(LimitsBase.of(PlansFile.parse("p.yml", SCOPED))))
                .isNotEqualTo(LimitsRecord.fingerprint(LimitsBase.of(PlansFile.parse("p.yml",
                        SCOPED.replace("capacity: 4,", "capacity: 5,")))));
    }

    @Test
    void formatThreeFieldsInAnOlderFormatAreRefusedAndANewerFormatAsksForAnUpgrade() throws Exception {
        String three = record(PlansFile.parse("scoped.yml", SCOPED), LimitOverrides.NONE).toJson();
        assertThatThrownBy(() -> LimitsRecord.parse(three.replace("\"format\":3", "\"format\":2")))
                .isInstanceOf(LimitsRecord.Unusable.class).hasMessage("base.perUser: unknown field");
        assertThatThrownBy(() -> LimitsRecord.parse(three.replace("\"format\":3", "\"format\":5")))
                .isInstanceOf(LimitsRecord.Unusable.class)
                .hasMessage("format 5 is newer than this version of quotagate reads (4): upgrade this instance");
        // per-user and route limits are the file's only: no runtime change carries them
        assertThatThrownBy(() -> LimitsRecord.parse(three.replace("\"overrides\":{", "\"overrides\":{\"routes\":{},")))
                .isInstanceOf(LimitsRecord.Unusable.class).hasMessage("overrides.routes: unknown field");
    }

    /** Each way a format-3 field can be wrong, and the error naming it (the fingerprint is checked after). */
    @org.junit.jupiter.params.ParameterizedTest(name = "{2}")
    @org.junit.jupiter.params.provider.CsvSource(delimiter = '|', value = {
            "\"per\":\"user\"|\"per\":\"everyone\"|base.routes.login[0].per: not tenant, user or client-address",
            ",\"per\":\"user\"|''|base.routes.login[0].per: missing or not text",
            "\"per\":\"user\"|\"per\":\"user\",\"burst\":1|base.routes.login[0].burst: unknown field",
            "\"login\":[{\"name\":\"b0\",\"capacity\":4,\"refill\":4,\"period\":\"PT1M\",\"per\":\"user\"}]|\"login\":[]|base.routes.login: missing or not a list of at least one limit",
            "\"login\":[|\"login\":[\"x\",|base.routes.login[0]: not an object",
            "\"name\":\"daily\"|\"name\":\"hourly\"|base.routes.export[1].name: duplicate name 'hourly'",
            "\"capacity\":4,|\"capacity\":-4,|base.routes.login[0]: capacity must be > 0, was -4",
            "\"period\":\"PT1M\",\"per\"|\"period\":\"1m\",\"per\"|base.routes.login[0].period: not an ISO-8601 duration",
            "\"routes\":{\"export\":|\"routes\":{\"export\":7,\"unused\":|base.routes.export: missing or not a list of at least one limit",
            "\"perUser\":{\"team\"|\"perUser\":{\"gold\"|base.perUser.gold: not a plan of base.plans",
            "\"name\":\"seat\",\"capacity\":3|\"name\":\"seat\",\"capacity\":\"3\"|base.perUser.team[0].capacity: missing or not a whole number",
    })
    void aWrongFormatThreeFieldIsRefusedNamingIt(String from, String to, String error) {
        String three = record(PlansFile.parse("scoped.yml", SCOPED), LimitOverrides.NONE).toJson();
        assertThat(three).contains(from);
        assertThatThrownBy(() -> LimitsRecord.parse(three.replaceFirst(java.util.regex.Pattern.quote(from),
                java.util.regex.Matcher.quoteReplacement(to))))
                .isInstanceOf(LimitsRecord.Unusable.class).hasMessage(error);
    }

    /**
     * A stored record is hostile input: an unknown field at the top (it was an IllegalArgumentException that
     * escaped, answered as the client's 400), or anything else malformed, is refused as unusable, never
     * thrown as another exception; a field that merely says "newer" is no newer format.
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "{1}")
    @org.junit.jupiter.params.provider.CsvSource(delimiter = '|', value = {
            "{\"format\":1,|{\"format\":1,\"pad\":\"xxxx\",|pad: unknown field",
            "{\"format\":1,|{\"format\":1,\"newer\":1,|newer: unknown field",
            "{\"format\":1,|{\"format\":1,\"base\":7,|not JSON: Duplicate field 'base'",
            "\"overrides\":{|\"overrides\":null,\"x\":{|x: unknown field",
            "\"lastChange\":{|\"lastChange\":[],\"y\":{|y: unknown field",
            "\"base\":{|\"base\":[],\"z\":{|z: unknown field",
    })
    void anUnknownOrMalformedTopLevelFieldIsRefusedAsUnusable(String from, String to, String error) {
        String one = record(PlansFile.parse("p.yml", WITHOUT), LimitOverrides.NONE).toJson();
        assertThat(one).contains(from);
        assertThatThrownBy(() -> LimitsRecord.parse(one.replaceFirst(java.util.regex.Pattern.quote(from),
                java.util.regex.Matcher.quoteReplacement(to))))
                .isInstanceOfSatisfying(LimitsRecord.Unusable.class, u -> assertThat(u.newerFormat()).isFalse())
                .hasMessageStartingWith(error);
    }

    @Test
    void onlyAFormatNumberAboveThisCodesIsANewerFormat() {
        String one = record(PlansFile.parse("p.yml", WITHOUT), LimitOverrides.NONE).toJson();
        assertThatThrownBy(() -> LimitsRecord.parse(one.replace("\"format\":1", "\"format\":" + (LimitsRecord.FORMAT + 1))))
                .isInstanceOfSatisfying(LimitsRecord.Unusable.class, u -> assertThat(u.newerFormat()).isTrue());
        for (String old : List.of("0", "-1", "1.5", "\"1\"")) {
            assertThatThrownBy(() -> LimitsRecord.parse(one.replace("\"format\":1", "\"format\":" + old))).as(old)
                    .isInstanceOfSatisfying(LimitsRecord.Unusable.class, u -> assertThat(u.newerFormat()).isFalse());
        }
    }

    /** Every kind of place a bandwidth is kept, each with an algorithm other than the token bucket somewhere. */
    static final String ALGORITHMS = """
            global:
              limits: [ { algorithm: gcra, capacity: 3000, refill: 3000, period: 1m } ]
            plans:
              team:
                limits:
                  - { capacity: 100, refill: 100, period: 1h }
                  - { name: minute, algorithm: sliding-window, capacity: 10, period: 1m }
                per-user:
                  limits: [ { name: seat, algorithm: gcra, capacity: 3, refill: 1, period: 1m } ]
            routes:
              - name: export
                paths: ["/export"]
                limits:
                  - { name: hourly, algorithm: sliding-window, capacity: 2, period: 1h }
                  - { name: addr, per: client-address, capacity: 50, refill: 50, period: 1h }
            tenants:
              users:
                - { type: header, name: X-User-Id }
              guests:
                limits: [ { algorithm: sliding-window, capacity: 20, period: 1s } ]
              overrides:
                acme: { plan: team, limits: [ { algorithm: gcra, capacity: 40, refill: 20, period: 10s } ] }
            """;

    @Test
    void algorithmsMakeItFormatFourAndComeBackWhole() throws Exception {
        Plans plans = PlansFile.parse("algorithms.yml", ALGORITHMS);
        LimitOverrides overrides = LimitOverrides.NONE
                .withPlan("team", List.of(Bandwidth.slidingWindow("minute", 12, Duration.ofMinutes(1))))
                .withTenant("globex", new io.quotagate.tenant.TenantContract("team",
                        List.of(Bandwidth.gcra("b0", 5, 5, Duration.ofSeconds(1)))));
        LimitsRecord r = record(plans, overrides);
        String json = r.toJson();
        assertThat(json).startsWith("{\"format\":4,")
                .contains("\"global\":[{\"name\":\"b0\",\"algorithm\":\"gcra\",\"capacity\":3000,\"refill\":3000,")
                .contains("{\"name\":\"minute\",\"algorithm\":\"sliding-window\",\"capacity\":10,\"refill\":10,")
                .contains("{\"name\":\"hourly\",\"algorithm\":\"sliding-window\",\"capacity\":2,\"refill\":2,\"period\":\"PT1H\",\"per\":\"tenant\"}")
                // a token bucket is written as before: no field
                .contains("{\"name\":\"addr\",\"capacity\":50,");
        LimitsRecord back = LimitsRecord.parse(json);
        assertThat(back.base()).isEqualTo(r.base()).isEqualTo(LimitsBase.of(plans));
        assertThat(back.overrides()).isEqualTo(overrides);
        assertThat(back.fingerprint()).isEqualTo(r.fingerprint());
        assertThat(back.toJson()).isEqualTo(json);
        Plans effective = EffectiveLimits.of(plans, back.base(), back.overrides());
        assertThat(effective.plan("team").orElseThrow().limits())
                .containsExactly(Bandwidth.slidingWindow("minute", 12, Duration.ofMinutes(1)));
        assertThat(effective.tenants().overrides().get("globex"))
                .containsExactly(Bandwidth.gcra("b0", 5, 5, Duration.ofSeconds(1)));
    }

    @Test
    void aRecordOfTokenBucketsOnlyKeepsItsFormatAndFingerprintAndOldRecordsReadAsTokenBuckets() throws Exception {
        // written before the algorithm existed: no field, format 3; read as token buckets
        String old = record(PlansFile.parse("scoped.yml", SCOPED), LimitOverrides.NONE).toJson();
        assertThat(old).startsWith("{\"format\":3,").doesNotContain("algorithm");
        LimitsRecord back = LimitsRecord.parse(old);
        assertThat(back.base().plans().get("team")).extracting(Bandwidth::algorithm)
                .containsOnly(io.quotagate.plans.Algorithm.TOKEN_BUCKET);
        // an explicit token-bucket in the file is the default: same base, same fingerprint
        String explicit = SCOPED.replace("limits: [ { capacity: 100,", "limits: [ { algorithm: token-bucket, capacity: 100,");
        assertThat(explicit).isNotEqualTo(SCOPED);
        assertThat(LimitsRecord.fingerprint(LimitsBase.of(PlansFile.parse("scoped.yml", explicit))))
                .isEqualTo(back.fingerprint());
        // the algorithm is part of the limits: changing it changes the fingerprint
        String gcra = SCOPED.replace("limits: [ { capacity: 100,", "limits: [ { algorithm: gcra, capacity: 100,");
        assertThat(LimitsRecord.fingerprint(LimitsBase.of(PlansFile.parse("scoped.yml", gcra))))
                .isNotEqualTo(back.fingerprint());
    }

    @Test
    void anUnknownAlgorithmInARecordIsRefusedNamingTheField() throws Exception {
        String four = record(PlansFile.parse("algorithms.yml", ALGORITHMS), LimitOverrides.NONE).toJson();
        assertThatThrownBy(() -> LimitsRecord.parse(four.replace("\"algorithm\":\"gcra\"", "\"algorithm\":\"leaky\"")))
                .isInstanceOf(LimitsRecord.Unusable.class)
                .hasMessageMatching("base\\.[a-zA-Z.]+\\[0\\]\\.algorithm: not token-bucket, gcra or sliding-window");
        assertThatThrownBy(() -> LimitsRecord.parse(four.replace("\"capacity\":10,\"refill\":10,", "\"capacity\":10,\"refill\":5,")))
                .isInstanceOf(LimitsRecord.Unusable.class)
                .hasMessageStartingWith("base.plans.team[1]: a sliding window takes no refill");
    }

    @Test
    void anchorsAndTenantZonesMakeItFormatFourAndComeBackWholeWhileUnanchoredQuotasStayFormatTwo() throws Exception {
        Plans plans = PlansFile.parse("p.yml", WITHOUT + """
                    quotas: [ { name: monthly, limit: 1000, per: month, zone: Europe/Berlin, anchor: { day: 31, time: "09:00" } } ]
                """);
        java.time.ZoneId ny = java.time.ZoneId.of("America/New_York");
        List<CalendarQuota> weekly = List.of(new CalendarQuota("weekly", 50, CalendarQuota.Per.WEEK, ZoneId.of("UTC"),
                CalendarQuota.Anchor.weekly(java.time.DayOfWeek.WEDNESDAY, java.time.LocalTime.of(6, 30))));
        LimitsRecord r = record(plans, LimitOverrides.NONE.withPlanQuotas("pro", weekly)
                .withTenant("acme", io.quotagate.tenant.TenantContract.onPlan("pro").withZone(ny)));
        String json = r.toJson();
        assertThat(json).startsWith("{\"format\":4,")
                .contains("\"anchor\":{\"day\":31,\"time\":\"09:00\"}")
                .contains("\"anchor\":{\"weekday\":\"wednesday\",\"time\":\"06:30\"}")
                .contains("\"acme\":{\"plan\":\"pro\",\"zone\":\"America/New_York\"}");
        LimitsRecord back = LimitsRecord.parse(json);
        assertThat(back.base()).isEqualTo(r.base());
        assertThat(back.overrides()).isEqualTo(r.overrides());
        // another instance's file: this record's quotas, acme's counted in New York
        Plans effective = EffectiveLimits.of(PlansFile.parse("p.yml", WITHOUT), back.base(), back.overrides());
        assertThat(effective.tenants().overrideQuotas().get("acme")).containsExactly(weekly.get(0).inZone(ny));
        // format 4's fields in an older format are refused
        assertThatThrownBy(() -> LimitsRecord.parse(json.replace("\"format\":4", "\"format\":2")))
                .isInstanceOf(LimitsRecord.Unusable.class).hasMessageContaining("anchor: unknown field");
        assertThatThrownBy(() -> LimitsRecord.parse(json.replace("\"day\":31", "\"day\":32")))
                .isInstanceOf(LimitsRecord.Unusable.class).hasMessageContaining("base.quotas.pro[0].anchor: day must be 1 to 31");
        // an unanchored quota writes no anchor: format 2 and its fingerprint as before
        assertThat(record(PlansFile.parse("p.yml", WITH), LimitOverrides.NONE).toJson()).startsWith("{\"format\":2,")
                .doesNotContain("anchor");
    }
}

package io.quotagate.plans;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

class CalendarQuotaTest {
    private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");

    private static CalendarQuota quota(CalendarQuota.Per per, ZoneId zone) {
        return new CalendarQuota("q", 100, per, zone);
    }

    @ParameterizedTest(name = "[{index}] {0} {1} at {2}: resets at {3}")
    @MethodSource("periods")
    void periodEndsAtTheNextCalendarBoundaryOfItsZone(CalendarQuota.Per per, ZoneId zone, String now, String reset,
                                                     Duration left) {
        Instant at = Instant.parse(now);
        assertThat(quota(per, zone).resetAfter(at)).isEqualTo(Instant.parse(reset));
        assertThat(Duration.between(at, quota(per, zone).resetAfter(at))).isEqualTo(left);
    }

    static Stream<Arguments> periods() {
        ZoneId utc = ZoneOffset.UTC;
        return Stream.of(
                // month lengths: 31, 28, 29 (leap year), 30 days
                arguments(CalendarQuota.Per.MONTH, utc, "2027-01-31T23:59:59Z", "2027-02-01T00:00:00Z", Duration.ofSeconds(1)),
                arguments(CalendarQuota.Per.MONTH, utc, "2027-02-01T00:00:00Z", "2027-03-01T00:00:00Z", Duration.ofDays(28)),
                arguments(CalendarQuota.Per.MONTH, utc, "2028-02-01T00:00:00Z", "2028-03-01T00:00:00Z", Duration.ofDays(29)),
                arguments(CalendarQuota.Per.MONTH, utc, "2027-04-15T12:00:00Z", "2027-05-01T00:00:00Z",
                        Duration.ofDays(15).plusHours(12)),
                // a leap day is a day of its own
                arguments(CalendarQuota.Per.DAY, utc, "2028-02-28T23:00:00Z", "2028-02-29T00:00:00Z", Duration.ofHours(1)),
                arguments(CalendarQuota.Per.DAY, utc, "2028-02-29T00:00:00Z", "2028-03-01T00:00:00Z", Duration.ofDays(1)),
                // ISO weeks start on Monday: Sunday 2027-01-03 ends week 53 of 2026
                arguments(CalendarQuota.Per.WEEK, utc, "2027-01-03T10:00:00Z", "2027-01-04T00:00:00Z", Duration.ofHours(14)),
                arguments(CalendarQuota.Per.WEEK, utc, "2027-01-04T00:00:00Z", "2027-01-11T00:00:00Z", Duration.ofDays(7)),
                // Berlin: the month ends at local midnight, an hour before UTC's (CET, +01:00)
                arguments(CalendarQuota.Per.MONTH, BERLIN, "2027-01-31T22:59:59Z", "2027-01-31T23:00:00Z", Duration.ofSeconds(1)),
                arguments(CalendarQuota.Per.MONTH, BERLIN, "2027-01-31T23:00:00Z", "2027-02-28T23:00:00Z", Duration.ofDays(28)),
                // daylight saving: 2026-03-29 in Berlin has 23 hours, 2026-10-25 has 25
                arguments(CalendarQuota.Per.DAY, BERLIN, "2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z", Duration.ofHours(23)),
                arguments(CalendarQuota.Per.DAY, BERLIN, "2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z", Duration.ofHours(25)),
                // March 2026 in Berlin is an hour short, its week of the change too
                arguments(CalendarQuota.Per.MONTH, BERLIN, "2026-02-28T23:00:00Z", "2026-03-31T22:00:00Z",
                        Duration.ofDays(31).minusHours(1)),
                arguments(CalendarQuota.Per.WEEK, BERLIN, "2026-03-22T23:00:00Z", "2026-03-29T22:00:00Z",
                        Duration.ofDays(7).minusHours(1)),
                // where local midnight does not exist (America/Santiago springs forward at 24:00), the day
                // starts at the first valid time, 01:00
                arguments(CalendarQuota.Per.DAY, ZoneId.of("America/Santiago"), "2026-09-05T12:00:00Z",
                        "2026-09-06T04:00:00Z", Duration.ofHours(16)));
    }

    @Test
    void utcByAnyNameIsOneCalendarSoTwoFilesThatSayItDifferentlyHoldEqualQuotas() {
        Plans implicit = PlansFile.parse("a.yml", """
                plans: { p: { limits: [ { capacity: 1, refill: 1, period: 1s } ], quotas: [ { name: m, limit: 5, per: month } ] } }
                """);
        Plans named = PlansFile.parse("b.yml", """
                plans: { p: { limits: [ { capacity: 1, refill: 1, period: 1s } ], quotas: [ { name: m, limit: 5, per: month, zone: UTC } ] } }
                """);
        assertThat(named.plans().get("p").quotas()).isEqualTo(implicit.plans().get("p").quotas());
        assertThat(new CalendarQuota("m", 5, CalendarQuota.Per.DAY, ZoneId.of("Etc/UTC")))
                .isEqualTo(new CalendarQuota("m", 5, CalendarQuota.Per.DAY, ZoneOffset.UTC));
    }

    @Test
    void weekStartsOnMondayAndMonthOnTheFirst() {
        Instant sunday = Instant.parse("2027-03-07T12:00:00Z");
        assertThat(quota(CalendarQuota.Per.WEEK, ZoneOffset.UTC).periodStartDate(sunday)).isEqualTo(LocalDate.of(2027, 3, 1));
        assertThat(quota(CalendarQuota.Per.MONTH, ZoneOffset.UTC).periodStartDate(sunday)).isEqualTo(LocalDate.of(2027, 3, 1));
        assertThat(quota(CalendarQuota.Per.DAY, ZoneOffset.UTC).periodStartDate(sunday)).isEqualTo(LocalDate.of(2027, 3, 7));
    }

    @Test
    void readsQuotasOfAPlanWithUtcAsTheDefaultZone() {
        Plans plans = PlansFile.parse("plans.yml", """
                plans:
                  pro:
                    limits: [{ capacity: 200, refill: 100, period: 10s }]
                    quotas:
                      - { name: monthly, limit: 100000, per: month, zone: Europe/Berlin }
                      - { name: daily, limit: 5000, per: day }
                """);
        assertThat(plans.plan("pro").orElseThrow().quotas()).containsExactly(
                new CalendarQuota("monthly", 100000, CalendarQuota.Per.MONTH, BERLIN),
                new CalendarQuota("daily", 5000, CalendarQuota.Per.DAY, ZoneOffset.UTC));
    }

    @ParameterizedTest(name = "[{index}] {1}: {2}")
    @MethodSource("badQuotas")
    void refusesABadQuotaNamingFileLineFieldAndReason(String quota, String field, String reason) {
        String text = """
                plans:
                  pro:
                    limits: [{ capacity: 200, refill: 100, period: 10s }]
                    quotas:
                      - { name: monthly, limit: 100000, per: month }
                """ + "      " + quota + "\n" + """
                routes:
                  - { name: export, paths: ["/export"], cost: 50 }
                """;
        assertThatThrownBy(() -> PlansFile.parse("plans.yml", text))
                .isInstanceOfSatisfying(InvalidPlansException.class, e -> {
                    assertThat(e.getMessage()).startsWith("plans.yml:6: " + field + ": ");
                    assertThat(e.reason()).contains(reason);
                });
    }

    static Stream<Arguments> badQuotas() {
        return Stream.of(
                arguments("- { name: daily, limit: 10, per: fortnight }", "plans.pro.quotas[1].per",
                        "unknown value 'fortnight', expected one of [day, week, month]"),
                arguments("- { name: daily, limit: 10, per: day, zone: Europe/Berlinn }", "plans.pro.quotas[1].zone",
                        "unknown time zone 'Europe/Berlinn', expected an IANA name such as Europe/Berlin, or UTC"),
                arguments("- { name: monthly, limit: 10, per: day }", "plans.pro.quotas[1].name",
                        "duplicate quota name 'monthly'"),
                arguments("- { name: daily, limit: 0, per: day }", "plans.pro.quotas[1].limit", "must be > 0, was 0"),
                arguments("- { name: daily, per: day }", "plans.pro.quotas[1].limit", "required"),
                arguments("- { name: daily, limit: 10 }", "plans.pro.quotas[1].per", "required"),
                arguments("- { name: daily, limit: 10, per: day, every: 2 }", "plans.pro.quotas[1].every",
                        "unknown key"));
    }

    @Test
    void refusesARouteThatCostsMoreThanAQuotaAllows() {
        assertThatThrownBy(() -> PlansFile.parse("plans.yml", """
                plans:
                  pro:
                    limits: [{ capacity: 200, refill: 100, period: 10s }]
                    quotas: [{ name: daily, limit: 20, per: day }]
                routes:
                  - { name: export, paths: ["/export"], cost: 50 }
                """)).isInstanceOfSatisfying(InvalidPlansException.class, e -> assertThat(e.getMessage())
                .isEqualTo("plans.yml:6: routes[0].cost: cost 50 exceeds the limit 20 of plans.pro.quotas[0]: "
                        + "such a request could never be admitted"));
    }

    @Test
    void aTenantMayHaveQuotasOfItsOwnWithOrWithoutLimitsOfItsOwn() {
        Plans plans = PlansFile.parse("plans.yml", """
                plans:
                  pro:
                    limits: [{ capacity: 200, refill: 100, period: 10s }]
                    quotas: [{ name: monthly, limit: 1000, per: month }]
                routes:
                  - { name: export, paths: ["/export"], cost: 50 }
                tenants:
                  overrides:
                    bigcorp: { plan: pro, quotas: [{ name: monthly, limit: 5000, per: month, zone: Europe/Berlin }] }
                    nolimit: { plan: pro, quotas: [] }
                """);
        assertThat(plans.tenants().overrideQuotas()).containsEntry("bigcorp",
                List.of(new CalendarQuota("monthly", 5000, CalendarQuota.Per.MONTH, BERLIN))).containsEntry("nolimit", List.of());
        assertThat(plans.tenants().overrides()).as("no limits of their own").isEmpty();
        assertThat(plans.tenants().assignments()).containsEntry("bigcorp", "pro");
        assertThatThrownBy(() -> PlansFile.parse("plans.yml", """
                plans:
                  pro:
                    limits: [{ capacity: 200, refill: 100, period: 10s }]
                routes:
                  - { name: export, paths: ["/export"], cost: 50 }
                tenants:
                  overrides:
                    bigcorp:
                      plan: pro
                      quotas:
                        - { name: daily, limit: 10, per: day }
                """)).isInstanceOfSatisfying(InvalidPlansException.class, e -> assertThat(e.getMessage()).isEqualTo(
                "plans.yml:11: tenants.overrides.bigcorp.quotas[0].limit: limit 10 is below the cost 50 of route export: "
                        + "such a request could never be admitted"));
    }

    @Test
    void aRuntimeChangeOfQuotasKeepsThePlansOtherSettings() {
        Plans plans = PlansFile.parse("plans.yml", """
                plans:
                  pro:
                    limits: [{ capacity: 200, refill: 100, period: 10s }]
                    concurrency: { reports: 2 }
                routes:
                  - { name: reports, paths: ["/reports/*"], cost: 5, group: reports }
                """);
        List<CalendarQuota> q = List.of(new CalendarQuota("monthly", 1000, CalendarQuota.Per.MONTH, BERLIN));
        Plan pro = plans.withPlanQuotas("pro", q).plan("pro").orElseThrow();
        assertThat(pro.quotas()).isEqualTo(q);
        assertThat(pro.concurrency()).containsEntry("reports", 2);
        assertThatThrownBy(() -> plans.withPlanQuotas("pro",
                List.of(new CalendarQuota("tiny", 4, CalendarQuota.Per.DAY, BERLIN))))
                .hasMessageContaining("is below the cost 5 of route 'reports'");
    }
}

package io.quotagate.plans;

import io.quotagate.plans.CalendarQuota.Anchor;
import io.quotagate.plans.CalendarQuota.Per;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.DayOfWeek;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/** {@code anchor:} on quotas, and a tenant's {@code zone:}, wherever quotas are written. */
class QuotaAnchorParsingTest {
    private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");
    private static final ZoneId NEW_YORK = ZoneId.of("America/New_York");

    @Test
    void readsAnchorsOfAMonthAWeekAndADay() {
        Plans plans = PlansFile.parse("plans.yml", """
                plans:
                  pro:
                    limits: [{ capacity: 200, refill: 100, period: 10s }]
                    quotas:
                      - { name: monthly, limit: 100000, per: month, zone: Europe/Berlin, anchor: { day: 15, time: "09:00" } }
                      - { name: weekly, limit: 30000, per: week, anchor: { weekday: wednesday, time: "18:30" } }
                      - { name: daily, limit: 5000, per: day, anchor: { time: "06:00" } }
                      - { name: eom, limit: 100000, per: month, anchor: { day: 31 } }
                      - name: unquoted
                        limit: 1
                        per: day
                        anchor:
                          time: 23:59
                """);
        assertThat(plans.plan("pro").orElseThrow().quotas()).containsExactly(
                new CalendarQuota("monthly", 100000, Per.MONTH, BERLIN, Anchor.monthly(15, LocalTime.of(9, 0))),
                new CalendarQuota("weekly", 30000, Per.WEEK, ZoneOffset.UTC, Anchor.weekly(DayOfWeek.WEDNESDAY, LocalTime.of(18, 30))),
                new CalendarQuota("daily", 5000, Per.DAY, ZoneOffset.UTC, Anchor.daily(LocalTime.of(6, 0))),
                new CalendarQuota("eom", 100000, Per.MONTH, ZoneOffset.UTC, Anchor.monthly(31, LocalTime.MIDNIGHT)),
                new CalendarQuota("unquoted", 1, Per.DAY, ZoneOffset.UTC, Anchor.daily(LocalTime.of(23, 59))));
    }

    @ParameterizedTest(name = "[{index}] {1}: {2}")
    @MethodSource("badAnchors")
    void refusesABadAnchorNamingFileLineFieldAndReason(String quota, String field, String reason) {
        String text = """
                plans:
                  pro:
                    limits: [{ capacity: 200, refill: 100, period: 10s }]
                    quotas:
                """ + "      " + quota + "\n";
        assertThatThrownBy(() -> PlansFile.parse("plans.yml", text))
                .isInstanceOfSatisfying(InvalidPlansException.class, e -> {
                    assertThat(e.getMessage()).startsWith("plans.yml:5: " + field + ": ");
                    assertThat(e.reason()).contains(reason);
                });
    }

    static Stream<Arguments> badAnchors() {
        String f = "plans.pro.quotas[0].anchor";
        return Stream.of(
                arguments("- { name: m, limit: 10, per: month, anchor: { day: 0 } }", f + ".day", "must be > 0, was 0"),
                arguments("- { name: m, limit: 10, per: month, anchor: { day: 32 } }", f + ".day", "must be <= 31, was 32"),
                arguments("- { name: m, limit: 10, per: month, anchor: { day: fifteen } }", f + ".day", "expected a whole number > 0"),
                arguments("- { name: m, limit: 10, per: month, anchor: { weekday: monday } }", f + ".weekday",
                        "a weekday anchors a weekly quota only; a monthly quota takes day"),
                arguments("- { name: w, limit: 10, per: week, anchor: { day: 3 } }", f + ".day",
                        "a day of the month anchors a monthly quota only; a weekly quota takes weekday"),
                arguments("- { name: d, limit: 10, per: day, anchor: { weekday: friday } }", f + ".weekday",
                        "a weekday anchors a weekly quota only; a daily quota takes time only"),
                arguments("- { name: w, limit: 10, per: week, anchor: { weekday: wednesdy } }", f + ".weekday",
                        "unknown value 'wednesdy', expected one of [monday, tuesday, wednesday, thursday, friday, saturday, sunday]"),
                arguments("- { name: d, limit: 10, per: day, anchor: { time: \"24:00\" } }", f + ".time",
                        "expected a local time HH:MM from 00:00 to 23:59"),
                arguments("- { name: d, limit: 10, per: day, anchor: { time: \"9am\" } }", f + ".time", "was '9am'"),
                arguments("- { name: d, limit: 10, per: day, anchor: { time: \"09:00:30\" } }", f + ".time", "HH:MM"),
                arguments("- { name: d, limit: 10, per: day, anchor: { hour: 9 } }", f + ".hour", "unknown key"),
                arguments("- { name: d, limit: 10, per: day, anchor: 9 }", f, "expected a map"));
    }

    @Test
    void jsonAndYamlColumnsReadAnchorsAndATenantsZoneIsTheDefaultOfItsOwnQuotas() {
        List<CalendarQuota> expected = List.of(
                new CalendarQuota("monthly", 100000, Per.MONTH, NEW_YORK, Anchor.monthly(15, LocalTime.of(9, 0))),
                new CalendarQuota("weekly", 500, Per.WEEK, BERLIN, Anchor.weekly(DayOfWeek.WEDNESDAY, LocalTime.MIDNIGHT)));
        assertThat(PlansFile.parseQuotas("t", "[{\"name\":\"monthly\",\"limit\":100000,\"per\":\"month\","
                + "\"anchor\":{\"day\":15,\"time\":\"09:00\"}},"
                + "{\"name\":\"weekly\",\"limit\":500,\"per\":\"week\",\"zone\":\"Europe/Berlin\",\"anchor\":{\"weekday\":\"wednesday\"}}]",
                NEW_YORK)).isEqualTo(expected);
        assertThat(PlansFile.parseQuotas("t", "[{name: monthly, limit: 100000, per: month, anchor: {day: 15, time: \"09:00\"}},"
                + " {name: weekly, limit: 500, per: week, zone: Europe/Berlin, anchor: {weekday: wednesday}}]", NEW_YORK))
                .isEqualTo(expected);
        assertThatThrownBy(() -> PlansFile.parseQuotas("tenant acme", "[{\"name\":\"m\",\"limit\":1,\"per\":\"month\","
                + "\"anchor\":{\"day\":32}}]")).isInstanceOfSatisfying(InvalidPlansException.class, e -> {
                    assertThat(e.file()).isEqualTo("tenant acme");
                    assertThat(e.field()).isEqualTo("quotas[0].anchor.day");
                    assertThat(e.reason()).isEqualTo("must be <= 31, was 32");
                });
    }

    @Test
    void aTenantsZoneRunsItsPlansQuotasOrItsOwnThatNameNoZone() {
        Plans plans = PlansFile.parse("plans.yml", """
                plans:
                  pro:
                    limits: [{ capacity: 200, refill: 100, period: 10s }]
                    quotas: [{ name: monthly, limit: 1000, per: month, anchor: { day: 15 } }]
                tenants:
                  overrides:
                    berlin: { plan: pro, zone: Europe/Berlin }
                    ny:
                      plan: pro
                      zone: America/New_York
                      quotas:
                        - { name: monthly, limit: 5000, per: month }
                        - { name: daily, limit: 500, per: day, zone: UTC }
                    plain: { plan: pro, limits: [{ capacity: 10, refill: 10, period: 1s }] }
                """);
        assertThat(plans.tenants().overrideQuotas()).containsEntry("berlin",
                List.of(new CalendarQuota("monthly", 1000, Per.MONTH, BERLIN, Anchor.monthly(15, LocalTime.MIDNIGHT))));
        assertThat(plans.tenants().overrideQuotas()).containsEntry("ny", List.of(
                new CalendarQuota("monthly", 5000, Per.MONTH, NEW_YORK),
                new CalendarQuota("daily", 500, Per.DAY, ZoneOffset.UTC)));
        assertThat(plans.tenants().overrideQuotas()).doesNotContainKey("plain");
        assertThat(plans.tenants().overrides()).as("a zone alone needs no limits").containsOnlyKeys("plain");
        assertThatThrownBy(() -> PlansFile.parse("plans.yml", """
                plans:
                  pro:
                    limits: [{ capacity: 200, refill: 100, period: 10s }]
                tenants:
                  overrides:
                    acme: { plan: pro, zone: Mars/Olympus }
                """)).isInstanceOfSatisfying(InvalidPlansException.class, e -> assertThat(e.getMessage()).isEqualTo(
                "plans.yml:6: tenants.overrides.acme.zone: unknown time zone 'Mars/Olympus', expected an IANA name "
                        + "such as Europe/Berlin, or UTC"));
    }
}

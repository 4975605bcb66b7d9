package io.quotagate.plans;

import io.quotagate.plans.CalendarQuota.Anchor;
import io.quotagate.plans.CalendarQuota.Per;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/** Periods that start at a billing anchor: a day of the month, a weekday, a time of day. */
class AnchoredCalendarQuotaTest {
    private static final ZoneId UTC = ZoneOffset.UTC;
    private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");
    private static final ZoneId NEW_YORK = ZoneId.of("America/New_York");

    private static CalendarQuota monthly(int day, String time, ZoneId zone) {
        return new CalendarQuota("q", 100, Per.MONTH, zone, Anchor.monthly(day, LocalTime.parse(time)));
    }

    @ParameterizedTest(name = "[{index}] {0} at {1}: period of {2}, resets at {3}")
    @MethodSource("anchored")
    void periodRunsFromAnchorToAnchor(CalendarQuota quota, String now, String label, String reset) {
        Instant at = Instant.parse(now);
        assertThat(quota.periodStartDate(at)).isEqualTo(LocalDate.parse(label));
        assertThat(quota.resetAfter(at)).isEqualTo(Instant.parse(reset));
        // the period holds now: it started at or before it
        assertThat(quota.startOf(quota.periodStartDate(at))).isBeforeOrEqualTo(at);
    }

    static Stream<Arguments> anchored() {
        CalendarQuota on15 = monthly(15, "09:00", UTC);
        CalendarQuota on31 = monthly(31, "00:00", UTC);
        CalendarQuota on30 = monthly(30, "12:00", UTC);
        CalendarQuota wednesday = new CalendarQuota("q", 100, Per.WEEK, UTC, Anchor.weekly(DayOfWeek.WEDNESDAY, LocalTime.of(8, 0)));
        CalendarQuota sixAm = new CalendarQuota("q", 100, Per.DAY, UTC, Anchor.daily(LocalTime.of(6, 0)));
        return Stream.of(
                // the 15th at 09:00: before it, still the period that began on the 15th before
                arguments(on15, "2027-03-15T08:59:59Z", "2027-02-15", "2027-03-15T09:00:00Z"),
                arguments(on15, "2027-03-15T09:00:00Z", "2027-03-15", "2027-04-15T09:00:00Z"),
                arguments(on15, "2027-01-01T00:00:00Z", "2026-12-15", "2027-01-15T09:00:00Z"),
                // the 31st: Jan 31 -> Feb 28 -> Mar 31, the anchor day kept, not drifted
                arguments(on31, "2027-01-31T00:00:00Z", "2027-01-31", "2027-02-28T00:00:00Z"),
                arguments(on31, "2027-02-28T00:00:00Z", "2027-02-28", "2027-03-31T00:00:00Z"),
                arguments(on31, "2027-03-30T23:59:59Z", "2027-02-28", "2027-03-31T00:00:00Z"),
                arguments(on31, "2027-04-30T00:00:00Z", "2027-04-30", "2027-05-31T00:00:00Z"),
                // February of a leap year: the 29th is its last day
                arguments(on31, "2028-02-29T00:00:00Z", "2028-02-29", "2028-03-31T00:00:00Z"),
                arguments(on31, "2028-02-28T23:59:59Z", "2028-01-31", "2028-02-29T00:00:00Z"),
                arguments(on30, "2028-02-29T11:59:59Z", "2028-01-30", "2028-02-29T12:00:00Z"),
                arguments(on30, "2028-02-29T12:00:00Z", "2028-02-29", "2028-03-30T12:00:00Z"),
                arguments(on30, "2027-02-28T12:00:00Z", "2027-02-28", "2027-03-30T12:00:00Z"),
                // weeks from Wednesday 08:00 (2027-01-06 is a Wednesday)
                arguments(wednesday, "2027-01-06T07:59:59Z", "2026-12-30", "2027-01-06T08:00:00Z"),
                arguments(wednesday, "2027-01-06T08:00:00Z", "2027-01-06", "2027-01-13T08:00:00Z"),
                arguments(wednesday, "2027-01-10T23:00:00Z", "2027-01-06", "2027-01-13T08:00:00Z"),
                // days from 06:00
                arguments(sixAm, "2027-01-01T05:59:59Z", "2026-12-31", "2027-01-01T06:00:00Z"),
                arguments(sixAm, "2027-01-01T06:00:00Z", "2027-01-01", "2027-01-02T06:00:00Z"),
                // a year's end inside a period
                arguments(on15, "2026-12-31T23:59:59Z", "2026-12-15", "2027-01-15T09:00:00Z"));
    }

    @ParameterizedTest(name = "[{index}] {0} at {1}: period of {2}, {3} long")
    @MethodSource("daylightSaving")
    void daylightSavingDaysAre23Or25HoursAndAGapStartsAtTheFirstValidTime(CalendarQuota quota, String now,
                                                                          String label, String start, Duration length) {
        Instant at = Instant.parse(now);
        LocalDate l = quota.periodStartDate(at);
        assertThat(l).isEqualTo(LocalDate.parse(label));
        assertThat(quota.startOf(l)).isEqualTo(Instant.parse(start));
        assertThat(Duration.between(quota.startOf(l), quota.resetAfter(at))).isEqualTo(length);
    }

    static Stream<Arguments> daylightSaving() {
        // Berlin: 2026-03-29 02:00 -> 03:00 (23 h), 2026-10-25 03:00 -> 02:00 (25 h)
        CalendarQuota berlinDay = new CalendarQuota("q", 100, Per.DAY, BERLIN, Anchor.daily(LocalTime.of(6, 0)));
        CalendarQuota berlinGap = new CalendarQuota("q", 100, Per.DAY, BERLIN, Anchor.daily(LocalTime.of(2, 30)));
        CalendarQuota berlinTwice = new CalendarQuota("q", 100, Per.DAY, BERLIN, Anchor.daily(LocalTime.of(2, 30)));
        // New York: 2026-03-08 02:00 -> 03:00, 2026-11-01 02:00 -> 01:00
        CalendarQuota nyMonth = monthly(8, "02:30", NEW_YORK);
        CalendarQuota nyMonthNov = monthly(1, "01:30", NEW_YORK);
        CalendarQuota nyWeek = new CalendarQuota("q", 100, Per.WEEK, NEW_YORK, Anchor.weekly(DayOfWeek.SUNDAY, LocalTime.of(2, 0)));
        return Stream.of(
                // 06:00 to 06:00 across the spring change: 23 hours (06:00 CET = 05:00Z, 06:00 CEST = 04:00Z)
                arguments(berlinDay, "2026-03-28T12:00:00Z", "2026-03-28", "2026-03-28T05:00:00Z", Duration.ofHours(23)),
                arguments(berlinDay, "2026-10-24T12:00:00Z", "2026-10-24", "2026-10-24T04:00:00Z", Duration.ofHours(25)),
                // 02:30 does not exist on 2026-03-29 in Berlin: the period starts at 03:00 CEST (01:00Z)
                arguments(berlinGap, "2026-03-29T01:00:00Z", "2026-03-29", "2026-03-29T01:00:00Z", Duration.ofMinutes(23 * 60 + 30)),
                arguments(berlinGap, "2026-03-29T00:59:59Z", "2026-03-28", "2026-03-28T01:30:00Z", Duration.ofMinutes(23 * 60 + 30)),
                // 02:30 exists twice on 2026-10-25: the first one (CEST, 00:30Z)
                arguments(berlinTwice, "2026-10-25T00:30:00Z", "2026-10-25", "2026-10-25T00:30:00Z", Duration.ofHours(25)),
                // New York, the 8th at 02:30: on 2026-03-08 it does not exist, the period starts at 03:00 EDT (07:00Z)
                arguments(nyMonth, "2026-03-08T07:00:00Z", "2026-03-08", "2026-03-08T07:00:00Z",
                        Duration.between(Instant.parse("2026-03-08T07:00:00Z"), Instant.parse("2026-04-08T06:30:00Z"))),
                arguments(nyMonth, "2026-03-08T06:59:59Z", "2026-02-08", "2026-02-08T07:30:00Z",
                        Duration.between(Instant.parse("2026-02-08T07:30:00Z"), Instant.parse("2026-03-08T07:00:00Z"))),
                // the 1st at 01:30 on 2026-11-01 (01:30 twice): the first, EDT (05:30Z)
                arguments(nyMonthNov, "2026-11-01T05:30:00Z", "2026-11-01", "2026-11-01T05:30:00Z",
                        Duration.between(Instant.parse("2026-11-01T05:30:00Z"), Instant.parse("2026-12-01T06:30:00Z"))),
                arguments(nyMonthNov, "2026-11-01T05:29:59Z", "2026-10-01", "2026-10-01T05:30:00Z",
                        Duration.between(Instant.parse("2026-10-01T05:30:00Z"), Instant.parse("2026-11-01T05:30:00Z"))),
                // Sundays 02:00: the week of 2026-03-08 starts at 03:00 EDT, and is an hour short
                arguments(nyWeek, "2026-03-10T00:00:00Z", "2026-03-08", "2026-03-08T07:00:00Z", Duration.ofHours(7 * 24 - 1)));
    }

    @Test
    void consecutivePeriodsOfAYearTileTimeWithoutGapOrOverlap() {
        for (ZoneId zone : List.of(UTC, BERLIN, NEW_YORK)) {
            for (CalendarQuota q : List.of(monthly(31, "09:00", zone), monthly(29, "02:30", zone), monthly(1, "00:00", zone),
                    new CalendarQuota("q", 1, Per.WEEK, zone, Anchor.weekly(DayOfWeek.SUNDAY, LocalTime.of(2, 30))),
                    new CalendarQuota("q", 1, Per.DAY, zone, Anchor.daily(LocalTime.of(2, 30))))) {
                Instant t = Instant.parse("2027-12-20T00:00:00Z");
                List<LocalDate> labels = new ArrayList<>();
                while (t.isBefore(Instant.parse("2029-01-10T00:00:00Z"))) {
                    LocalDate label = q.periodStartDate(t);
                    Instant start = q.startOf(label);
                    Instant end = q.resetAfter(t);
                    assertThat(start).as("%s %s at %s", q, zone, t).isBeforeOrEqualTo(t);
                    assertThat(end).as("%s %s at %s", q, zone, t).isAfter(t);
                    // the instant before the end is in the same period, the end in the next
                    assertThat(q.periodStartDate(end.minusNanos(1))).isEqualTo(label);
                    assertThat(q.periodStartDate(end)).isEqualTo(q.nextPeriodStartDate(label));
                    labels.add(label);
                    t = end;
                }
                assertThat(labels).doesNotHaveDuplicates().isSorted();
            }
        }
    }

    @Test
    void theCalendarsOwnStartIsNoAnchor() {
        CalendarQuota plain = new CalendarQuota("q", 100, Per.MONTH, UTC);
        assertThat(plain.anchored()).isFalse();
        assertThat(plain).isEqualTo(monthly(1, "00:00", UTC));
        assertThat(monthly(15, "00:00", UTC).anchored()).isTrue();
        // a time alone keeps the calendar's day
        assertThat(new CalendarQuota("q", 100, Per.MONTH, UTC, Anchor.daily(LocalTime.of(9, 0))))
                .isEqualTo(monthly(1, "09:00", UTC));
        assertThat(new CalendarQuota("q", 1, Per.WEEK, UTC, Anchor.daily(LocalTime.NOON)).anchor())
                .isEqualTo(Anchor.weekly(DayOfWeek.MONDAY, LocalTime.NOON));
    }

    @Test
    void anAnchorThatDoesNotFitThePeriodIsRefused() {
        assertThatThrownBy(() -> new CalendarQuota("q", 1, Per.MONTH, UTC, Anchor.weekly(DayOfWeek.MONDAY, LocalTime.MIDNIGHT)))
                .hasMessageContaining("weekday");
        assertThatThrownBy(() -> new CalendarQuota("q", 1, Per.WEEK, UTC, Anchor.monthly(3, LocalTime.MIDNIGHT)))
                .hasMessageContaining("day");
        assertThatThrownBy(() -> new CalendarQuota("q", 1, Per.DAY, UTC, Anchor.monthly(3, LocalTime.MIDNIGHT)))
                .hasMessageContaining("time only");
        assertThatThrownBy(() -> Anchor.monthly(32, LocalTime.MIDNIGHT)).hasMessageContaining("1 to 31");
        assertThatThrownBy(() -> Anchor.monthly(0, LocalTime.MIDNIGHT)).hasMessageContaining("1 to 31");
        assertThatThrownBy(() -> Anchor.daily(LocalTime.of(9, 0, 30))).hasMessageContaining("whole minutes");
    }
}

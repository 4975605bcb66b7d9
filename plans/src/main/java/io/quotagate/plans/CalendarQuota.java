package io.quotagate.plans;

import java.time.DayOfWeek;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.temporal.TemporalAdjusters;
import java.util.Objects;

/**
 * A budget that resets at calendar boundaries, as SaaS plans are sold ("100,000 calls per month"):
 * at most {@code limit} units per day, ISO week (Monday to Sunday) or month, in a time zone. Unlike a
 * {@link Bandwidth}, nothing refills before the boundary, and the whole budget is back right after it.
 * A request must fit both its plan's bandwidths and its quotas.
 *
 * <p>Periods follow the zone's civil calendar: a day is the time between two local midnights (23 or
 * 25 hours on a daylight-saving change; where midnight does not exist, the first valid time after it),
 * a month runs from the 1st to the 1st (28 to 31 days).
 *
 * @param name  a short label, unique among the plan's quotas, used in refusals, metrics and counter keys
 * @param limit the most units per period, &gt; 0
 * @param per   the period
 * @param zone  the time zone of the calendar (an IANA name such as {@code Europe/Berlin}, or UTC)
 */
public record CalendarQuota(String name, long limit, Per per, ZoneId zone) {

    /** The calendar period of a quota. */
    public enum Per {
        /** From local midnight to the next. */
        DAY,
        /** An ISO week, from Monday's local midnight to the next Monday's. */
        WEEK,
        /** From the 1st's local midnight to the next month's. */
        MONTH
    }

    public CalendarQuota {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(per, "per");
        // one zone, one value: "UTC", "Etc/UTC" and the default (ZoneOffset.UTC) are the same calendar
        zone = Objects.requireNonNull(zone, "zone").normalized();
        if (limit <= 0) throw new IllegalArgumentException("limit must be > 0, was " + limit);
    }

    /** The first day (local date) of the period that holds {@code now}. */
    public LocalDate periodStartDate(Instant now) {
        LocalDate today = LocalDate.ofInstant(now, zone);
        return switch (per) {
            case DAY -> today;
            case WEEK -> today.with(TemporalAdjusters.previousOrSame(DayOfWeek.MONDAY));
            case MONTH -> today.withDayOfMonth(1);
        };
    }

    /** The first day of the period after the one that starts on {@code start}. */
    public LocalDate nextPeriodStartDate(LocalDate start) {
        return switch (per) {
            case DAY -> start.plusDays(1);
            case WEEK -> start.plusWeeks(1);
            case MONTH -> start.plusMonths(1);
        };
    }

    /** The instant a period starting on {@code date} begins: the date's first valid local time. */
    public Instant startOf(LocalDate date) {
        return date.atStartOfDay(zone).toInstant();
    }

    /** When the period holding {@code now} ends and the budget is whole again. */
    public Instant resetAfter(Instant now) {
        return startOf(nextPeriodStartDate(periodStartDate(now)));
    }
}

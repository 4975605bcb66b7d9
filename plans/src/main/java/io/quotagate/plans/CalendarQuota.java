package io.quotagate.plans;

import java.time.DayOfWeek;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.YearMonth;
import java.time.ZoneId;
import java.time.temporal.TemporalAdjusters;
import java.time.zone.ZoneOffsetTransition;
import java.util.Objects;

/**
 * A budget that resets at calendar boundaries, as SaaS plans are sold ("100,000 calls per month"):
 * at most {@code limit} units per day, week or month, in a time zone. Unlike a {@link Bandwidth},
 * nothing refills before the boundary, and the whole budget is back right after it. A request must
 * fit both its plan's bandwidths and its quotas.
 *
 * <p>Periods follow the zone's civil calendar: a day is the time between two local midnights (23 or
 * 25 hours on a daylight-saving change; where midnight does not exist, the first valid time after it),
 * a week runs from Monday to Monday (ISO), a month from the 1st to the 1st (28 to 31 days). An
 * {@link Anchor} moves the boundary, as a billing cycle does: a month from the 15th at 09:00 to the next
 * 15th at 09:00, a week from Wednesday to Wednesday, a day from 06:00 to 06:00. A monthly anchor on the
 * 29th to 31st falls on the last day of a shorter month and comes back to its day in the next (Jan 31,
 * Feb 28, Mar 31); an anchor time that does not exist on a day (a daylight-saving gap) starts the
 * period at the first valid time after it, and one that exists twice (the hour repeated in autumn) at
 * its first occurrence.
 *
 * <p>A period is labelled by the local date it starts on ({@link #periodStartDate}); counters are kept
 * under that label.
 *
 * @param name   a short label, unique among the plan's quotas, used in refusals, metrics and counter keys
 * @param limit  the most units per period, &gt; 0
 * @param per    the period
 * @param zone   the time zone of the calendar (an IANA name such as {@code Europe/Berlin}, or UTC)
 * @param anchor where each period starts; null for the calendar's own start ({@link Anchor#calendar})
 */
public record CalendarQuota(String name, long limit, Per per, ZoneId zone, Anchor anchor) {

    /** The calendar period of a quota. */
    public enum Per {
        /** From local midnight (or the anchor's time) to the next. */
        DAY,
        /** A week, from Monday's local midnight (or the anchor's weekday and time) to the next. */
        WEEK,
        /** From the 1st's local midnight (or the anchor's day and time) to the next month's. */
        MONTH
    }

    /**
     * Where the periods of a quota start: for a month, a day of the month ({@code day}, 1 to 31); for a
     * week, a weekday ({@code weekday}); for every period, a local time ({@code time}). The calendar's own
     * start is the 1st, Monday and 00:00.
     *
     * @param day     the day of the month a monthly period starts on (1 to 31), or 0 for a week or a day
     * @param weekday the weekday a weekly period starts on, or null for a month or a day
     * @param time    the local time a period starts at (whole minutes)
     */
    public record Anchor(int day, DayOfWeek weekday, LocalTime time) {
        public Anchor {
            Objects.requireNonNull(time, "time");
            if (day < 0 || day > 31) throw new IllegalArgumentException("day must be 1 to 31, was " + day);
            if (day != 0 && weekday != null) {
                throw new IllegalArgumentException("an anchor has a day of the month or a weekday, not both");
            }
            if (time.getSecond() != 0 || time.getNano() != 0) {
                throw new IllegalArgumentException("time must be whole minutes, was " + time);
            }
        }

        /** A monthly anchor: each period starts on {@code day} (1 to 31; the month's last if shorter) at {@code time}. */
        public static Anchor monthly(int day, LocalTime time) {
            if (day < 1) throw new IllegalArgumentException("day must be 1 to 31, was " + day);
            return new Anchor(day, null, time);
        }

        /** A weekly anchor: each period starts on {@code weekday} at {@code time}. */
        public static Anchor weekly(DayOfWeek weekday, LocalTime time) {
            return new Anchor(0, Objects.requireNonNull(weekday, "weekday"), time);
        }

        /** A daily anchor: each period starts at {@code time}. */
        public static Anchor daily(LocalTime time) {
            return new Anchor(0, null, time);
        }

        /** The calendar's own start for {@code per}: the 1st, Monday or the day, at 00:00. */
        public static Anchor calendar(Per per) {
            return switch (per) {
                case DAY -> daily(LocalTime.MIDNIGHT);
                case WEEK -> weekly(DayOfWeek.MONDAY, LocalTime.MIDNIGHT);
                case MONTH -> monthly(1, LocalTime.MIDNIGHT);
            };
        }
    }

    /**
     * @throws IllegalArgumentException if {@code limit} is not &gt; 0, or the anchor does not fit the
     *                                  period (a day of the month on a week or a day, a weekday on a month
     *                                  or a day)
     */
    public CalendarQuota {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(per, "per");
        // one zone, one value: "UTC", "Etc/UTC" and the default (ZoneOffset.UTC) are the same calendar
        zone = Objects.requireNonNull(zone, "zone").normalized();
        if (limit <= 0) throw new IllegalArgumentException("limit must be > 0, was " + limit);
        if (anchor == null) {
            anchor = Anchor.calendar(per);
        } else {
            // a partial anchor (a time alone) keeps the calendar's day: equal quotas are equal records
            anchor = switch (per) {
                case DAY -> {
                    if (anchor.day() != 0 || anchor.weekday() != null) {
                        throw new IllegalArgumentException("a daily quota's anchor takes a time only");
                    }
                    yield anchor;
                }
                case WEEK -> {
                    if (anchor.day() != 0) throw new IllegalArgumentException("a weekly quota's anchor takes a weekday, not a day");
                    yield anchor.weekday() == null ? Anchor.weekly(DayOfWeek.MONDAY, anchor.time()) : anchor;
                }
                case MONTH -> {
                    if (anchor.weekday() != null) throw new IllegalArgumentException("a monthly quota's anchor takes a day, not a weekday");
                    yield anchor.day() == 0 ? Anchor.monthly(1, anchor.time()) : anchor;
                }
            };
        }
    }

    /** A quota whose periods start at the calendar's own boundaries (the 1st, Monday, midnight). */
    public CalendarQuota(String name, long limit, Per per, ZoneId zone) {
        this(name, limit, per, zone, null);
    }

    /** True if the periods start elsewhere than the calendar's own boundaries. */
    public boolean anchored() {
        return !anchor.equals(Anchor.calendar(per));
    }

    /** This quota in {@code other} zone, anchored the same. */
    public CalendarQuota inZone(ZoneId other) {
        return other.normalized().equals(zone) ? this : new CalendarQuota(name, limit, per, other, anchor);
    }

    /** This quota with its periods starting at {@code other} (null: the calendar's own start). */
    public CalendarQuota withAnchor(Anchor other) {
        return new CalendarQuota(name, limit, per, zone, other);
    }

    /**
     * The first day (local date) of the period that holds {@code now}: the date its start falls on in
     * the zone, the label of its counters.
     */
    public LocalDate periodStartDate(Instant now) {
        LocalDate today = LocalDate.ofInstant(now, zone);
        LocalDate candidate = switch (per) {
            case DAY -> today;
            case WEEK -> today.with(TemporalAdjusters.previousOrSame(anchor.weekday()));
            case MONTH -> {
                LocalDate inMonth = anchorDay(YearMonth.from(today));
                yield inMonth.isAfter(today) ? anchorDay(YearMonth.from(today).minusMonths(1)) : inMonth;
            }
        };
        // the anchor's time may be later today than now: then now is still in the period before
        for (int i = 0; i < 3 && startOf(candidate).isAfter(now); i++) candidate = previousPeriodStartDate(candidate);
        return candidate;
    }

    /** The first day of the period after the one that starts on {@code start}. */
    public LocalDate nextPeriodStartDate(LocalDate start) {
        return switch (per) {
            case DAY -> start.plusDays(1);
            case WEEK -> start.with(TemporalAdjusters.next(anchor.weekday()));
            case MONTH -> {
                LocalDate inMonth = anchorDay(YearMonth.from(start));
                yield inMonth.isAfter(start) ? inMonth : anchorDay(YearMonth.from(start).plusMonths(1));
            }
        };
    }

    private LocalDate previousPeriodStartDate(LocalDate start) {
        return switch (per) {
            case DAY -> start.minusDays(1);
            case WEEK -> start.with(TemporalAdjusters.previous(anchor.weekday()));
            case MONTH -> {
                LocalDate inMonth = anchorDay(YearMonth.from(start));
                yield inMonth.isBefore(start) ? inMonth : anchorDay(YearMonth.from(start).minusMonths(1));
            }
        };
    }

    /** The anchor's day in {@code month}: its last day if the month is shorter. */
    private LocalDate anchorDay(YearMonth month) {
        return month.atDay(Math.min(anchor.day(), month.lengthOfMonth()));
    }

    /**
     * The instant a period starting on {@code date} begins: the date's anchor time (midnight unless
     * anchored), or the first valid local time after it where it does not exist.
     */
    public Instant startOf(LocalDate date) {
        LocalDateTime local = date.atTime(anchor.time());
        ZoneOffsetTransition gap = zone.getRules().getTransition(local);
        if (gap != null && gap.isGap()) return gap.getInstant();
        // valid once, or twice in an overlap: the first occurrence (the earlier offset)
        return local.atZone(zone).toInstant();
    }

    /** When the period holding {@code now} ends and the budget is whole again. */
    public Instant resetAfter(Instant now) {
        return startOf(nextPeriodStartDate(periodStartDate(now)));
    }
}

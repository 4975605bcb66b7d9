package io.quotagate.plans;

import io.quotagate.plans.YamlNode.Mapping;
import io.quotagate.plans.YamlNode.Sequence;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.DayOfWeek;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.quotagate.plans.FieldCursor.NAME;

/** {@code plans:} and {@code global:}, and the {@code limits:} and {@code concurrency:} lists other sections share. */
final class PlanBinder {
    private final FieldCursor in;
    /** The line of each plan's {@code per-user:} key, for the error of a file that names no user resolver. */
    final Map<String, Integer> perUserLines = new LinkedHashMap<>();
    /**
     * Where each sliding-window limit is written, by its list's field and its name ({@code plans.free.limits#b0}),
     * and the line of each {@code throttle:}, by its field: for the error of a throttle that would reserve in one.
     */
    final Map<String, Where> slidingWindows = new LinkedHashMap<>();
    final Map<String, Integer> throttleLines = new LinkedHashMap<>();

    /** A field as written: its line and its path. */
    record Where(int line, String field) {
    }

    PlanBinder(FieldCursor in) {
        this.in = in;
    }

    /** {@code plans:}, required, at least one plan. */
    Map<String, Plan> plans(Mapping top) {
        Mapping plansNode = in.mapping(in.required(top, "plans", ""), "plans", null);
        if (plansNode.entries().isEmpty()) throw in.error(plansNode.line(), "plans", "at least one plan is required");
        Map<String, Plan> plans = new LinkedHashMap<>();
        plansNode.entries().forEach((name, node) -> {
            String field = "plans." + name;
            if (!NAME.matcher(name).matches()) {
                throw in.error(plansNode.keyLines().get(name), field, "a plan name must match " + NAME.pattern());
            }
            plans.put(name, plan(name, node, field));
        });
        return plans;
    }

    private Plan plan(String name, YamlNode node, String field) {
        Mapping m = in.mapping(node, field, Set.of("limits", "quotas", "per-user", "concurrency", "publish", "shadow",
                "throttle"));
        if (m.entries().containsKey("per-user")) perUserLines.put(name, m.keyLines().get("per-user"));
        return Plan.builder(name)
                .limits(limits(in.required(m, "limits", field), field + ".limits"))
                .quotas(quotas(m.entries().get("quotas"), field + ".quotas"))
                .perUser(perUser(m.entries().get("per-user"), field + ".per-user"))
                .concurrency(concurrency(m.entries().get("concurrency"), field + ".concurrency"))
                .publish(in.bool(m, "publish", field + ".publish", false))
                .shadow(in.bool(m, "shadow", field + ".shadow", false))
                .throttle(throttle(m.entries().get("throttle"), field + ".throttle"))
                .build();
    }

    /**
     * A {@code throttle:} mapping of a plan or a route ({@code { max-delay: 500ms, queue: 100 }}), both
     * required; empty if {@code node} is null.
     */
    Optional<Throttle> throttle(YamlNode node, String field) {
        if (node == null) return Optional.empty();
        Mapping m = in.mapping(node, field, Set.of("max-delay", "queue"));
        throttleLines.put(field, m.line());
        YamlNode delayNode = in.required(m, "max-delay", field);
        Duration maxDelay = in.period(delayNode, field + ".max-delay");
        if (maxDelay.compareTo(Throttle.MAX_DELAY) > 0) {
            throw in.error(delayNode.line(), field + ".max-delay", "must be <= " + Throttle.MAX_DELAY.toSeconds()
                    + "s (a delayed request keeps its connection open), was " + maxDelay);
        }
        int queue = in.positiveInt(in.required(m, "queue", field), field + ".queue", Throttle.MAX_QUEUE);
        return Optional.of(new Throttle(maxDelay, queue));
    }

    /** A plan's {@code per-user:} mapping ({@code limits:} of each user's bucket); none if {@code node} is null. */
    private List<Bandwidth> perUser(YamlNode node, String field) {
        if (node == null) return List.of();
        Mapping m = in.mapping(node, field, Set.of("limits"));
        return limits(in.required(m, "limits", field), field + ".limits");
    }

    /** {@code global:}, if written. */
    Optional<GlobalQuota> global(YamlNode node) {
        if (node == null) return Optional.empty();
        Mapping m = in.mapping(node, "global", Set.of("limits"));
        return Optional.of(new GlobalQuota(limits(in.required(m, "limits", "global"), "global.limits")));
    }

    /** A {@code limits:} list, at least one bandwidth, each name unique ({@code b0}, {@code b1}... if not written). */
    List<Bandwidth> limits(YamlNode node, String field) {
        Sequence seq = in.sequence(node, field);
        if (seq.items().isEmpty()) throw in.error(seq.line(), field, "at least one limit is required");
        List<Bandwidth> out = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (int i = 0; i < seq.items().size(); i++) {
            String f = field + "[" + i + "]";
            Mapping m = in.mapping(seq.items().get(i), f, LIMIT_KEYS);
            out.add(bandwidth(m, f, "b" + i, names));
        }
        return out;
    }

    /** The keys of one limit. */
    static final Set<String> LIMIT_KEYS = Set.of("name", "algorithm", "capacity", "refill", "period");

    /**
     * One bandwidth's {@code name} ({@code defaultName} if not written, unique among {@code names}), {@code algorithm}
     * ({@code token-bucket} if not written), {@code capacity}, {@code refill} (none for a sliding window: it is its
     * capacity), {@code period}. {@code f} is the limit's field in its list ({@code plans.free.limits[0]}).
     */
    Bandwidth bandwidth(Mapping m, String f, String defaultName, Set<String> names) {
        YamlNode nameNode = m.entries().get("name");
        String name = nameNode == null ? defaultName : in.matching(nameNode, f + ".name", NAME);
        if (!names.add(name)) throw in.error(m.line(), f + ".name", "duplicate limit name '" + name + "'");
        Algorithm algorithm = in.choice(m, "algorithm", f + ".algorithm", Algorithm.TOKEN_BUCKET, Algorithm.class);
        long capacity = in.positive(in.required(m, "capacity", f), f + ".capacity", Long.MAX_VALUE);
        long refill;
        if (algorithm == Algorithm.SLIDING_WINDOW) {
            YamlNode refillNode = m.entries().get("refill");
            if (refillNode != null) {
                throw in.error(refillNode.line(), f + ".refill", "a sliding window takes no refill: it admits at most"
                        + " capacity in any period (remove refill, or use algorithm token-bucket or gcra)");
            }
            refill = capacity;
            YamlNode algorithmNode = m.entries().get("algorithm");
            int at = f.lastIndexOf('[');
            slidingWindows.putIfAbsent((at < 0 ? f : f.substring(0, at)) + "#" + name,
                    new Where(algorithmNode.line(), f + ".algorithm"));
        } else {
            refill = in.positive(in.required(m, "refill", f), f + ".refill", Long.MAX_VALUE);
        }
        Duration period = in.period(in.required(m, "period", f), f + ".period");
        return new Bandwidth(name, capacity, refill, period, algorithm);
    }

    /**
     * A {@code quotas:} list ({@code - { name: monthly, limit: 100000, per: month, zone: Europe/Berlin }}),
     * each name unique; none if {@code node} is null. {@code zone} defaults to UTC.
     */
    List<CalendarQuota> quotas(YamlNode node, String field) {
        return quotas(node, field, ZoneOffset.UTC);
    }

    /**
     * A {@code quotas:} list, each name unique; none if {@code node} is null. A quota without {@code zone}
     * runs in {@code defaultZone} (a tenant's own zone for its own quotas, else UTC). A quota may carry an
     * {@code anchor} ({@code { day: 15, time: "09:00" }} on a month, {@code { weekday: wednesday }} on a
     * week, {@code { time: "06:00" }} on any).
     */
    List<CalendarQuota> quotas(YamlNode node, String field, ZoneId defaultZone) {
        List<CalendarQuota> out = new ArrayList<>();
        if (node == null) return out;
        Sequence seq = in.sequence(node, field);
        Set<String> names = new HashSet<>();
        for (int i = 0; i < seq.items().size(); i++) {
            String f = field + "[" + i + "]";
            Mapping m = in.mapping(seq.items().get(i), f, Set.of("name", "limit", "per", "zone", "anchor"));
            String name = in.matching(in.required(m, "name", f), f + ".name", NAME);
            if (!names.add(name)) throw in.error(m.line(), f + ".name", "duplicate quota name '" + name + "'");
            long limit = in.positive(in.required(m, "limit", f), f + ".limit", Long.MAX_VALUE);
            in.required(m, "per", f);
            CalendarQuota.Per per = in.choice(m, "per", f + ".per", null, CalendarQuota.Per.class);
            YamlNode zoneNode = m.entries().get("zone");
            ZoneId zone = zoneNode == null ? defaultZone : zone(zoneNode, f + ".zone");
            YamlNode anchorNode = m.entries().get("anchor");
            CalendarQuota.Anchor anchor = anchorNode == null ? null : anchor(anchorNode, f + ".anchor", per);
            out.add(new CalendarQuota(name, limit, per, zone, anchor));
        }
        return out;
    }

    /** A time zone: an IANA name such as {@code Europe/Berlin}, or UTC. */
    ZoneId zone(YamlNode node, String field) {
        String text = in.string(node, field);
        try {
            return ZoneId.of(text);
        } catch (DateTimeException e) {
            throw in.error(node.line(), field, "unknown time zone '" + text
                    + "', expected an IANA name such as Europe/Berlin, or UTC");
        }
    }

    /** A local time of day as anchors write it: {@code HH:MM}, 00:00 to 23:59. */
    private static final Pattern TIME = Pattern.compile("([01][0-9]|2[0-3]):([0-5][0-9])");

    /** A quota's {@code anchor}: {@code day} (month only), {@code weekday} (week only), {@code time} (any). */
    private CalendarQuota.Anchor anchor(YamlNode node, String f, CalendarQuota.Per per) {
        Mapping a = in.mapping(node, f, Set.of("day", "weekday", "time"));
        YamlNode dayNode = a.entries().get("day");
        YamlNode weekdayNode = a.entries().get("weekday");
        if (dayNode != null && per != CalendarQuota.Per.MONTH) {
            throw in.error(dayNode.line(), f + ".day", "a day of the month anchors a monthly quota only"
                    + (per == CalendarQuota.Per.WEEK ? "; a weekly quota takes weekday" : "; a daily quota takes time only"));
        }
        if (weekdayNode != null && per != CalendarQuota.Per.WEEK) {
            throw in.error(weekdayNode.line(), f + ".weekday", "a weekday anchors a weekly quota only"
                    + (per == CalendarQuota.Per.MONTH ? "; a monthly quota takes day" : "; a daily quota takes time only"));
        }
        LocalTime time = LocalTime.MIDNIGHT;
        YamlNode timeNode = a.entries().get("time");
        if (timeNode != null) {
            String text = in.string(timeNode, f + ".time");
            Matcher t = TIME.matcher(text);
            if (!t.matches()) {
                boolean number = timeNode instanceof YamlNode.Scalar s && s.type() != YamlNode.Scalar.Type.STRING;
                throw in.error(timeNode.line(), f + ".time", "expected a local time HH:MM from 00:00 to 23:59 "
                        + "(quoted, \"09:00\"), was " + (number ? "the number " + text
                        + " (YAML 1.1 reads an unquoted time such as 18:30 as a number: quote it)" : "'" + text + "'"));
            }
            time = LocalTime.of(Integer.parseInt(t.group(1)), Integer.parseInt(t.group(2)));
        }
        return switch (per) {
            case MONTH -> CalendarQuota.Anchor.monthly(
                    dayNode == null ? 1 : (int) in.positive(dayNode, f + ".day", 31), time);
            case WEEK -> CalendarQuota.Anchor.weekly(
                    in.choice(a, "weekday", f + ".weekday", DayOfWeek.MONDAY, DayOfWeek.class), time);
            case DAY -> CalendarQuota.Anchor.daily(time);
        };
    }

    /**
     * The {@code limits} under {@code field}; refused if a limited route's cost exceeds a capacity (it
     * could never run).
     */
    List<Bandwidth> limitsFittingRoutes(YamlNode limitsNode, String field, List<RouteRule> routes) {
        List<Bandwidth> limits = limits(limitsNode, field + ".limits");
        for (RouteRule r : routes) {
            if (!r.limited()) continue;
            int i = Plans.firstLimitBelow(r.cost(), limits);
            if (i >= 0) {
                int line = in.sequence(limitsNode, field).items().get(i).line();
                throw in.error(line, field + ".limits[" + i + "].capacity",
                        "capacity " + limits.get(i).capacity() + " is below the cost " + r.cost() + " of route "
                                + r.name() + ": such a request could never be admitted");
            }
        }
        return limits;
    }

    /** A {@code concurrency:} mapping, group → cap; empty if {@code node} is null. */
    Map<String, Integer> concurrency(YamlNode node, String field) {
        Map<String, Integer> concurrency = new LinkedHashMap<>();
        if (node == null) return concurrency;
        Mapping cm = in.mapping(node, field, null);
        cm.entries().forEach((group, v) -> {
            String f = field + "." + group;
            if (!NAME.matcher(group).matches()) {
                throw in.error(cm.keyLines().get(group), f, "a group name must match " + NAME.pattern());
            }
            concurrency.put(group, in.positiveInt(v, f, Integer.MAX_VALUE));
        });
        return concurrency;
    }
}

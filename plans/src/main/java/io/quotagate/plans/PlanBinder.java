package io.quotagate.plans;

import io.quotagate.plans.YamlNode.Mapping;
import io.quotagate.plans.YamlNode.Sequence;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

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
        List<CalendarQuota> out = new ArrayList<>();
        if (node == null) return out;
        Sequence seq = in.sequence(node, field);
        Set<String> names = new HashSet<>();
        for (int i = 0; i < seq.items().size(); i++) {
            String f = field + "[" + i + "]";
            Mapping m = in.mapping(seq.items().get(i), f, Set.of("name", "limit", "per", "zone"));
            String name = in.matching(in.required(m, "name", f), f + ".name", NAME);
            if (!names.add(name)) throw in.error(m.line(), f + ".name", "duplicate quota name '" + name + "'");
            long limit = in.positive(in.required(m, "limit", f), f + ".limit", Long.MAX_VALUE);
            in.required(m, "per", f);
            CalendarQuota.Per per = in.choice(m, "per", f + ".per", null, CalendarQuota.Per.class);
            ZoneId zone = ZoneOffset.UTC;
            YamlNode zoneNode = m.entries().get("zone");
            if (zoneNode != null) {
                String text = in.string(zoneNode, f + ".zone");
                try {
                    zone = ZoneId.of(text);
                } catch (DateTimeException e) {
                    throw in.error(zoneNode.line(), f + ".zone", "unknown time zone '" + text
                            + "', expected an IANA name such as Europe/Berlin, or UTC");
                }
            }
            out.add(new CalendarQuota(name, limit, per, zone));
        }
        return out;
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

package io.quotagate.spring;

import io.quotagate.plans.Algorithm;
import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.Plan;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import io.quotagate.plans.RouteRule;
import io.quotagate.tenant.TenantContract;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The fields of the endpoint's writes, checked as the plans file checks them. Actuator hands a write its body as
 * flat text fields (Spring MVC reads it as a {@code Map<String, String>}: a nested object or list is refused
 * before the endpoint), so a write sets one bandwidth, named by {@code bandwidth}, as the plan and global writes
 * always did. Every refusal is an {@link IllegalArgumentException} whose message starts with the field it names
 * ({@code period: ...}), so the endpoint answers 400 with it as it is.
 */
final class WriteBody {
    /** A bandwidth's name, as in the plans file: it is published in {@code RateLimit-Policy} and used in metrics. */
    static final Pattern NAME = Pattern.compile("[a-z][a-z0-9_-]{0,31}");

    private WriteBody() {
    }

    /**
     * The contract a tenant write asks for under the plans in force: {@code plan} alone places the tenant on the
     * plan with its limits; with {@code capacity}, {@code refill} and {@code period} the tenant gets limits of its
     * own, one bandwidth changed (or added) in its current own limits on that plan, else in the plan's; its
     * {@code algorithm} as {@link #withBandwidth} chooses it.
     *
     * @param current the tenant's contract in force, if any
     * @throws IllegalArgumentException naming the field: a missing or unknown plan, a bandwidth field without the
     *                                  others, a bad number, period or name, a capacity below a route's cost
     */
    static TenantContract contract(Plans plans, Optional<TenantContract> current, String plan, String capacity,
                                   String refill, String period, String bandwidth, String algorithm) {
        if (plan == null || plan.isBlank()) {
            throw new IllegalArgumentException("plan: required, one of " + plans.plans().keySet());
        }
        Plan onPlan = plans.plan(plan).orElseThrow(() -> new IllegalArgumentException("plan: unknown plan "
                + describe(plan) + ", defined: " + plans.plans().keySet()));
        if (capacity == null && refill == null && period == null && bandwidth == null && algorithm == null) {
            return TenantContract.onPlan(plan);
        }
        List<Bandwidth> base = current.filter(c -> c.plan().equals(plan) && c.hasOwnLimits())
                .map(TenantContract::limits).orElse(onPlan.limits());
        List<Bandwidth> own = withBandwidth(base, bandwidth, algorithm, whole(capacity, "capacity"),
                refill == null ? null : whole(refill, "refill"), period);
        for (RouteRule route : plans.routes()) {
            for (Bandwidth b : own) {
                if (route.limited() && route.cost() > b.capacity()) {
                    throw new IllegalArgumentException("capacity: capacity " + b.capacity() + " of limit '" + b.name()
                            + "' is below the cost " + route.cost() + " of route " + route.name()
                            + ": such a request could never be admitted");
                }
            }
        }
        return new TenantContract(plan, own);
    }

    /**
     * The list with the named bandwidth replaced (or added); unnamed, the list's only one, or {@code b0} (the
     * plans file's default name) when the list is empty. Its algorithm is {@code algorithm} if given, else the
     * replaced bandwidth's, else a token bucket; a sliding window takes no {@code refill} (it is its capacity),
     * the others require one.
     */
    static List<Bandwidth> withBandwidth(List<Bandwidth> current, String name, String algorithm, long capacity,
                                         Long refill, String period) {
        Duration duration = period(period);
        if (name == null) {
            if (current.size() > 1) {
                throw new IllegalArgumentException("bandwidth: name the bandwidth to change, one of "
                        + current.stream().map(Bandwidth::name).toList());
            }
            name = current.isEmpty() ? "b0" : current.get(0).name();
        } else if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("bandwidth: must match " + NAME + ", was " + describe(name));
        }
        String n = name;
        Algorithm a = algorithm != null ? algorithm(algorithm) : current.stream().filter(b -> b.name().equals(n))
                .map(Bandwidth::algorithm).findFirst().orElse(Algorithm.TOKEN_BUCKET);
        if (a == Algorithm.SLIDING_WINDOW && refill != null) {
            throw new IllegalArgumentException("refill: a sliding window takes no refill: it admits at most capacity in"
                    + " any period (leave refill out, or send algorithm token-bucket or gcra)");
        }
        if (a != Algorithm.SLIDING_WINDOW && refill == null) {
            throw new IllegalArgumentException("refill: required, a whole number > 0");
        }
        Bandwidth changed = new Bandwidth(name, capacity, a == Algorithm.SLIDING_WINDOW ? capacity : refill, duration, a);
        List<Bandwidth> limits = new ArrayList<>();
        boolean replaced = false;
        for (Bandwidth b : current) {
            if (b.name().equals(name)) {
                limits.add(changed);
                replaced = true;
            } else {
                limits.add(b);
            }
        }
        if (!replaced) limits.add(changed);
        return List.copyOf(limits);
    }

    /** An algorithm as the plans file writes it: {@code token-bucket}, {@code gcra}, {@code sliding-window}. */
    private static Algorithm algorithm(String text) {
        for (Algorithm a : Algorithm.values()) {
            if (a.fileName().equals(text)) return a;
        }
        throw new IllegalArgumentException("algorithm: unknown value " + describe(text) + ", expected one of "
                + java.util.Arrays.stream(Algorithm.values()).map(Algorithm::fileName).toList());
    }

    /** A period as the plans file writes it ({@code 10s}, {@code 1m}, {@code PT10S}). */
    private static Duration period(String text) {
        if (text == null) throw new IllegalArgumentException("period: required, e.g. \"10s\", \"1m\" or \"PT10S\"");
        try {
            return PlansFile.parsePeriod(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("period: " + e.getMessage(), e);
        }
    }

    private static long whole(String text, String field) {
        if (text == null) throw new IllegalArgumentException(field + ": required, a whole number > 0");
        long value;
        try {
            value = Long.parseLong(text.trim());
        } catch (NumberFormatException e) {
            value = 0;
        }
        if (value <= 0) {
            throw new IllegalArgumentException(field + ": must be a whole number > 0, was " + describe(text));
        }
        return value;
    }

    /** The value as sent, shortened: a refusal never echoes a long input whole. */
    static String describe(String value) {
        String text = "'" + value + "'";
        return text.length() <= 80 ? text : text.substring(0, 77) + "...";
    }
}

package io.quotagate.filter.internal.admission;

import io.quotagate.plans.Plan;
import io.quotagate.plans.Plans;

import java.util.HashMap;
import java.util.Map;

/**
 * The concurrency caps of a plans file: what {@link ConcurrencyLimits} reads to cap a request. Built
 * only here, from the plans; a {@link Policy} holds the caps in force.
 *
 * @param byPlan plan → group → cap; a missing entry means the plan does not cap the group
 * @param guests group → the cap all guests together have on it
 */
record ConcurrencyCaps(Map<String, Map<String, Integer>> byPlan, Map<String, Integer> guests) {
    static ConcurrencyCaps of(Plans plans) {
        Map<String, Map<String, Integer>> c = new HashMap<>();
        for (Plan p : plans.plans().values()) c.put(p.name(), Map.copyOf(p.concurrency()));
        return new ConcurrencyCaps(Map.copyOf(c), Map.copyOf(plans.tenants().guests().concurrency()));
    }

    /** The cap of {@code plan} on {@code group}, or null if the plan does not cap it. */
    Integer cap(String plan, String group) {
        Map<String, Integer> planCaps = byPlan.get(plan);
        return planCaps == null ? null : planCaps.get(group);
    }

    /** The cap all guests together have on {@code group}, or null for none. */
    Integer guestCap(String group) {
        return guests.get(group);
    }
}

package io.quotagate.filter.status;

import io.quotagate.plans.CalendarQuota;

import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * One tenant's use of its calendar quotas, as a usage export lists it ({@link UsagePage}): for each quota of its
 * plan, the current period and the closed periods before it that the store still keeps, newest first.
 *
 * @param tenant  the tenant id
 * @param plan    the plan it is on now
 * @param periods one entry per quota and period: its quotas in plan order, each newest period first
 */
public record TenantUsage(String tenant, String plan, List<Period> periods) {

    /** Copies the periods. */
    public TenantUsage {
        Objects.requireNonNull(tenant, "tenant");
        Objects.requireNonNull(plan, "plan");
        periods = List.copyOf(periods);
    }

    /**
     * The units a tenant used in one period of one quota.
     *
     * @param quota  the quota's name
     * @param per    its period
     * @param limit  the most units per period (its limit in force now)
     * @param start  when the period started
     * @param end    when it ends (or ended)
     * @param closed true for a period that has ended (its figure is final, but for a request still settling
     *               within the hour after the end)
     * @param used   the units counted in it (0 if the store holds no counter for it)
     */
    public record Period(String quota, CalendarQuota.Per per, long limit, Instant start, Instant end, boolean closed,
                         long used) {
    }
}

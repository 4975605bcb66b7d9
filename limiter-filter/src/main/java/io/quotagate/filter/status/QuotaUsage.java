package io.quotagate.filter.status;

import io.quotagate.plans.CalendarQuota;

import java.time.Instant;

/**
 * How much of one calendar quota a tenant has used in the current period: "81,204 of 100,000 this
 * month; it resets on the 1st".
 *
 * @param name      the quota's name
 * @param per       its period
 * @param limit     the most units per period
 * @param used      units counted in the current period (above {@code limit} only after requests that
 *                  settled at more than they reserved)
 * @param remaining units left in the period, {@code max(0, limit - used)}
 * @param resetsAt  when the current period ends and the whole limit is available again
 */
public record QuotaUsage(String name, CalendarQuota.Per per, long limit, long used, long remaining, Instant resetsAt) {
}

package io.quotagate.filter.internal.admission;

import java.time.Instant;

/**
 * One calendar quota of a tenant in its current period, as the quota events read it off the request path.
 *
 * @param quota           the quota's name
 * @param limit           its units per period
 * @param used            the units used as this instance last saw them
 * @param start           when the period began
 * @param end             when it ends (the quota is whole again)
 * @param counterKey      the period's counter, {@code <quota>:<tenant>:<period label>}: names the period
 * @param expiresAtMillis when its events' claims may be dropped: the period's end plus a grace (the counter itself is kept
 *                        longer, for the usage export)
 */
public record QuotaPeriod(String quota, long limit, long used, Instant start, Instant end, String counterKey,
                          long expiresAtMillis) {
}

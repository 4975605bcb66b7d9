/**
 * The API of quotagate's servlet filter: {@link io.quotagate.filter.QuotaFilter} (built with its
 * {@code Builder} or from a {@code web.xml}), {@link io.quotagate.filter.QuotaControl} (runtime changes and
 * status), {@link io.quotagate.filter.ActualCost} and {@link io.quotagate.filter.CostEstimator} (a request's
 * cost in units). With {@code status} (read-only views), {@code metrics} and {@code signals} (listeners and
 * events) it is what an application uses; {@code store} is the SPI a store plugs into. The packages under
 * {@code internal} are not API.
 */
package io.quotagate.filter;

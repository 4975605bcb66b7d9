/**
 * API: quota events ({@link io.quotagate.filter.signals.QuotaEvent}: near limit, exhausted, throttled for long,
 * recovered, global near limit, store fallback; a calendar quota's near limit and exhausted once per period), the listeners that receive them, the signed webhook, and
 * the counts of events raised and not delivered.
 */
package io.quotagate.filter.signals;

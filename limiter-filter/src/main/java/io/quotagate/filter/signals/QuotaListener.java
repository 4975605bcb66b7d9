package io.quotagate.filter.signals;

/**
 * Told of every {@link QuotaEvent} a filter raises: a tenant near a limit, exhausted, throttled for
 * long or recovered, the global quota near its limit, the store falling back to local buckets.
 *
 * <p>Listeners run on the filter's one signals thread, never on a request's: a listener that is slow,
 * blocks or throws delays only the events after it (a full queue drops new events, counted), never a
 * request. A listener that sends events elsewhere (a webhook) should still hand them to its own
 * thread, so one slow receiver does not hold back the other listeners. Register listeners with
 * {@code QuotaFilter.builder().listener(...)}; the Spring Boot starter registers every bean of this type.
 */
@FunctionalInterface
public interface QuotaListener {
    /** One event; called from the signals thread, one event at a time, in the order they were raised. */
    void onEvent(QuotaEvent event);
}

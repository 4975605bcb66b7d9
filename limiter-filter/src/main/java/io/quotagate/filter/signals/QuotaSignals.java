package io.quotagate.filter.signals;

import io.quotagate.filter.core.QuotaClock;
import io.quotagate.plans.SignalSettings;

import java.util.List;
import java.util.function.Supplier;

/**
 * A filter's quota events: the request path reports what it decided through two cheap calls
 * ({@link #admitted}, {@link #refused}: a set insertion each, nothing read, nothing allocated for a
 * tenant already reported since the last check); a daemon thread checks once a second
 * ({@link #check}) what they mean (reading the tenants' buckets, the global quota and the store
 * off the request path) and hands the events to a second daemon thread that calls the listeners
 * through a bounded queue.
 */
public interface QuotaSignals extends AutoCloseable {

    /** Check interval of the signals thread. */
    java.time.Duration CHECK_INTERVAL = java.time.Duration.ofSeconds(1);

    /** An admitted request of a known tenant on {@code plan}. Request path: cheap, never blocks. */
    void admitted(String tenant, String plan);

    /** A refused request of a known tenant ({@code reason}: {@code tenant_rate}...). Request path: cheap, never blocks. */
    void refused(String tenant, String plan, String reason);

    /** Evaluates what was reported since the last check, now (the signals thread calls it every second; tests too). */
    void check();

    /** Events raised since start, of this {@link QuotaEvent#type()} (delivered or dropped). */
    long raised(String type);

    /** Events dropped because the listeners' queue was full: {@code dropped(Drop.QUEUE_FULL)}. */
    long dropped();

    /**
     * Events that did not reach a listener or its receiver, for one {@link Drop}: the filter's queue, or a
     * listener the filter knows ({@link WebhookListener}s among the listeners, and the application's
     * listeners that threw).
     */
    long dropped(Drop where);

    /**
     * Where and why an event was not delivered: the tags {@code listener} and {@code reason} of
     * {@code quotagate.events.dropped}. For a webhook, an event raised is delivered, or counted in exactly
     * one of {@link #QUEUE_FULL}, {@link #WEBHOOK_QUEUE_FULL}, {@link #WEBHOOK_GAVE_UP}, {@link #WEBHOOK_REFUSED}
     * (events still queued when the filter stops are neither).
     */
    enum Drop {
        /** The filter's event queue ({@code signals.queue}) was full: no listener got it. */
        QUEUE_FULL("all", "queue_full"),
        /** A webhook's own queue ({@code webhook.queue}) was full: the receiver is slower than events come. */
        WEBHOOK_QUEUE_FULL("webhook", "queue_full"),
        /** No attempt of a webhook got a 2xx (connection failures, timeouts, 429, 5xx): the receiver is away. */
        WEBHOOK_GAVE_UP("webhook", "gave_up"),
        /** A webhook's receiver answered a 4xx other than 429 (not retried): its URL or secret is wrong. */
        WEBHOOK_REFUSED("webhook", "refused"),
        /** A listener of the application threw (logged at most once per 10 s). */
        LISTENER_FAILED("application", "failed");

        private final String listener;
        private final String reason;

        Drop(String listener, String reason) {
            this.listener = listener;
            this.reason = reason;
        }

        /** The {@code listener} tag: {@code all} (before any listener), {@code webhook}, {@code application}. */
        public String listener() {
            return listener;
        }

        /** The {@code reason} tag: {@code queue_full}, {@code gave_up}, {@code refused}, {@code failed}. */
        public String reason() {
            return reason;
        }
    }

    /** Stops both threads; events still queued are not delivered. */
    @Override
    void close();

    /**
     * Starts the signals of a filter.
     *
     * @param settings  the thresholds (read again at each check, so a reload takes effect)
     * @param listeners told of every event, in order
     * @param probe     what the checks read
     * @param clock     times throttling and recovery
     * @param background whether to start the checking thread (false: only {@link #check()} checks)
     */
    static QuotaSignals start(Supplier<SignalSettings> settings, List<QuotaListener> listeners, SignalProbe probe,
                              QuotaClock clock, boolean background) {
        return new SignalEngine(settings, listeners, probe, clock, background);
    }
}

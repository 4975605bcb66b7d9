package io.quotagate.filter.signals;

/**
 * How many quota events a filter raised and how many did not reach a listener, read-only: what the meter
 * binder reports as {@code quotagate.events.raised} and {@code quotagate.events.dropped}.
 */
public interface SignalCounts {
    /** Events raised since start, of this {@link QuotaEvent#type()} (delivered or dropped). */
    long raised(String type);

    /** Events dropped because the listeners' queue was full: {@code dropped(Drop.QUEUE_FULL)}. */
    long dropped();

    /**
     * Events that did not reach a listener or its receiver, for one {@link Drop}: the filter's queue, or a
     * listener the filter knows (the webhook of {@code signals.webhook}, and the application's listeners
     * that threw).
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

}

package io.quotagate.filter.internal.signals;

import io.quotagate.filter.signals.QuotaEvent;
import io.quotagate.filter.signals.QuotaListener;
import io.quotagate.filter.signals.SignalCounts;
import io.quotagate.filter.signals.WebhookListener;
import io.quotagate.filter.store.QuotaClock;
import io.quotagate.plans.SignalSettings;

import java.util.List;
import java.util.function.Supplier;

/**
 * A filter's quota events: the request path reports what it decided through two cheap calls
 * ({@link #admitted}, {@link #refused}: a set insertion each, nothing read, nothing allocated for a
 * tenant already reported since the last check); a daemon thread checks once a second
 * ({@link #check}) what they mean (reading the tenants' buckets and calendar quotas, the global quota
 * and the store off the request path, and claiming a calendar quota's events in the store) and hands the events to a second daemon thread that calls the listeners
 * through a bounded queue.
 */
public interface QuotaSignals extends SignalCounts, AutoCloseable {

    /** Check interval of the signals thread. */
    java.time.Duration CHECK_INTERVAL = java.time.Duration.ofSeconds(1);

    /** An admitted request of a known tenant on {@code plan}. Request path: cheap, never blocks. */
    void admitted(String tenant, String plan);

    /** A refused request of a known tenant ({@code reason}: {@code tenant_rate}...). Request path: cheap, never blocks. */
    void refused(String tenant, String plan, String reason);

    /** Evaluates what was reported since the last check, now (the signals thread calls it every second; tests too). */
    void check();

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

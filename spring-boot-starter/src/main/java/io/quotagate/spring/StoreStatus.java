package io.quotagate.spring;

import io.quotagate.filter.QuotaControl;
import io.quotagate.filter.status.LimitsStatus;
import io.quotagate.filter.store.StoreHealth;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * What the {@code quotagate} health component reports, apart from any Boot type: Boot 3.5
 * ({@link QuotagateHealthIndicator}) and Boot 4.0 ({@link QuotagateBoot4HealthIndicator}) have their health
 * types in different packages, and both adapters must say the same thing.
 *
 * <p>The limits never make an instance {@code DOWN}: one whose plans file disagrees with the shared limits (a
 * rolling deploy between two files) enforces the shared ones, like every other instance, and says so.
 *
 * @param up      false only while a shared store is unreachable under {@code store.on-failure: closed}
 * @param details {@code store} and, for a shared store, {@code available}, {@code fallback}, {@code instances},
 *                {@code fallbackDecisions}, {@code outages}; when the limits are shared, {@code limitsVersion},
 *                {@code limitsFileAgrees}, {@code limitsReachable}, {@code limitsRefused}, and
 *                {@code limitsLastRefusal} and {@code limitsNote} when there is something to say
 */
record StoreStatus(boolean up, Map<String, Object> details) {

    static StoreStatus of(QuotaControl control) {
        Optional<StoreHealth> shared = control.store().health();
        if (shared.isEmpty()) return new StoreStatus(true, Map.of("store", "local"));
        StoreHealth store = shared.get();
        boolean available = store.available();
        // the plans' store options (their type checked them at start): a store bean of the application is judged
        // by the same on-failure setting
        boolean closed = control.plans().store().string("on-failure").filter("closed"::equals).isPresent();
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("store", "shared");
        details.put("available", available);
        details.put("fallback", !available);
        details.put("instances", store.instanceCount());
        details.put("fallbackDecisions", store.fallbackDecisions());
        details.put("outages", store.outages());
        limits(control.limitsStatus(), details);
        return new StoreStatus(available || !closed, Map.copyOf(details));
    }

    private static void limits(LimitsStatus limits, Map<String, Object> details) {
        if (limits == null || !limits.shared()) return;
        details.put("limitsVersion", limits.version());
        details.put("limitsFileAgrees", limits.fileAgrees());
        details.put("limitsReachable", limits.reachable());
        details.put("limitsRefused", limits.refused());
        limits.lastRefusal().ifPresent(r -> details.put("limitsLastRefusal", r));
        if (!limits.fileAgrees()) {
            details.put("limitsNote", "this instance's plans file has other limits than the shared ones; enforcing "
                    + "the shared limits of " + limits.source() + " published by " + limits.publishedBy()
                    + " (the plans file published last wins)");
        } else if (!limits.reachable()) {
            details.put("limitsNote", "the shared limits cannot be read; the limits in force stay until the store "
                    + "answers");
        }
    }
}

package io.quotagate.spring;

import io.quotagate.filter.servlet.QuotaControl;
import io.quotagate.filter.store.StoreHealth;
import io.quotagate.plans.StoreSettings;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * What the {@code quotagate} health component reports, apart from any Boot type: Boot 3.5
 * ({@link QuotagateHealthIndicator}) and Boot 4.0 ({@link QuotagateBoot4HealthIndicator}) have their health
 * types in different packages, and both adapters must say the same thing.
 *
 * @param up      false only while a shared store is unreachable under {@code store.on-failure: closed}
 * @param details {@code store} and, for a shared store, {@code available}, {@code fallback}, {@code instances},
 *                {@code fallbackDecisions}, {@code outages}
 */
record StoreStatus(boolean up, Map<String, Object> details) {

    static StoreStatus of(QuotaControl control) {
        Optional<StoreHealth> shared = control.store().health();
        if (shared.isEmpty()) return new StoreStatus(true, Map.of("store", "local"));
        StoreHealth store = shared.get();
        boolean available = store.available();
        // the plans' store settings: a store bean of the application is judged by the same on-failure setting
        boolean closed = control.plans().store().onFailure() == StoreSettings.OnFailure.CLOSED;
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("store", "shared");
        details.put("available", available);
        details.put("fallback", !available);
        details.put("instances", store.instanceCount());
        details.put("fallbackDecisions", store.fallbackDecisions());
        details.put("outages", store.outages());
        return new StoreStatus(available || !closed, Map.copyOf(details));
    }
}

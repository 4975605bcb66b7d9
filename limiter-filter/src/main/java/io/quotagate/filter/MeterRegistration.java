package io.quotagate.filter;

import io.micrometer.core.instrument.MeterRegistry;
import io.quotagate.filter.metrics.QuotaMeterBinder;

/**
 * Binds a container-created filter's meters to a registry found in the servlet context. Kept apart
 * from {@link QuotaFilter} so that Micrometer, an optional dependency, is loaded only when used.
 */
final class MeterRegistration {
    private MeterRegistration() {
    }

    static void bind(Object registry, QuotaControl control) {
        if (!(registry instanceof MeterRegistry r)) {
            throw new IllegalArgumentException("servlet-context attribute " + QuotaFilter.METER_REGISTRY_ATTRIBUTE
                    + " must be a io.micrometer.core.instrument.MeterRegistry, was " + registry.getClass().getName());
        }
        new QuotaMeterBinder(control).bindTo(r);
    }
}

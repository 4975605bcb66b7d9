package io.quotagate.client;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;

import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * The meters of an {@link AdaptiveLimiter} (needs micrometer-core), each tagged {@code limiter} with
 * its name. They read the limiter's own counters; nothing is counted twice.
 *
 * <table>
 *   <caption>Meters</caption>
 *   <tr><td>{@value #RATE}</td><td>gauge</td><td>this instance's rate, units per minute ({@link AdaptiveLimiter#unitsPerMinute()})</td></tr>
 *   <tr><td>{@value #APP_RATE}</td><td>gauge</td><td>the whole app's rate as this instance's controller learned it, units per minute ({@link AdaptiveLimiter#appUnitsPerMinute()})</td></tr>
 *   <tr><td>{@value #INSTANCES}</td><td>gauge</td><td>the instance count the rate is divided by</td></tr>
 *   <tr><td>{@value #QUEUED}</td><td>gauge</td><td>requests waiting for units now</td></tr>
 *   <tr><td>{@value #WAIT}</td><td>function timer</td><td>requests granted, and their total wait for units</td></tr>
 *   <tr><td>{@value #THROTTLED}</td><td>counter</td><td>429s, and 503s with Retry-After</td></tr>
 *   <tr><td>{@value #REJECTED}</td><td>counter</td><td>requests rejected unsent by the limiter</td></tr>
 * </table>
 */
public final class AdaptiveLimiterMeterBinder implements MeterBinder {
    /** Meter names, as in the table above. */
    public static final String RATE = "quotagate.client.rate";
    public static final String APP_RATE = "quotagate.client.app.rate";
    public static final String INSTANCES = "quotagate.client.instances";
    public static final String QUEUED = "quotagate.client.queued";
    public static final String WAIT = "quotagate.client.wait";
    public static final String THROTTLED = "quotagate.client.throttled";
    public static final String REJECTED = "quotagate.client.rejected";

    private final AdaptiveLimiter limiter;
    private final Tags tags;

    /** Meters tagged {@code limiter=<name>}, plus {@code extraTags}. */
    public AdaptiveLimiterMeterBinder(AdaptiveLimiter limiter, Tag... extraTags) {
        this.limiter = Objects.requireNonNull(limiter, "limiter");
        this.tags = Tags.of(extraTags).and("limiter", limiter.name());
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        Gauge.builder(RATE, limiter, AdaptiveLimiter::unitsPerMinute).tags(tags).baseUnit("units.per.minute")
                .description("This instance's share of the adaptive rate").register(registry);
        Gauge.builder(APP_RATE, limiter, AdaptiveLimiter::appUnitsPerMinute).tags(tags).baseUnit("units.per.minute")
                .description("The whole app's adaptive rate, as this instance learned it").register(registry);
        Gauge.builder(INSTANCES, limiter, AdaptiveLimiter::instanceCount).tags(tags)
                .description("Instances the rate is divided by").register(registry);
        Gauge.builder(QUEUED, limiter, AdaptiveLimiter::queued).tags(tags)
                .description("Requests waiting for units").register(registry);
        FunctionTimer.builder(WAIT, limiter, l -> l.granted.sum(), l -> l.waitNanos.sum(), TimeUnit.NANOSECONDS).tags(tags)
                .description("Requests granted units, and how long they waited for them").register(registry);
        FunctionCounter.builder(THROTTLED, limiter, l -> l.throttled.sum()).tags(tags)
                .description("Responses that throttled: 429, or 503 with Retry-After").register(registry);
        FunctionCounter.builder(REJECTED, limiter, l -> l.rejected.sum()).tags(tags)
                .description("Requests the limiter rejected without sending them").register(registry);
    }
}

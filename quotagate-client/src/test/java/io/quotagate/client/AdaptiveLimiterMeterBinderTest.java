package io.quotagate.client;

import io.quotagate.filter.testing.ManualClock;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class AdaptiveLimiterMeterBinderTest {
    @Test
    void readsRateInstancesQueueWaitsThrottlesAndRejectionsFromTheLimiter() {
        ManualClock clock = new ManualClock();
        AdaptiveLimiter limiter = AdaptiveLimiter.builder().name("billing").clock(clock::nanoTime)
                .controller(RateController.aimd(0.7, 360, Duration.ofSeconds(5)))   // the old default: a 0.7 cut
                .initialRate(1200).instanceCount(InstanceCountSource.fixed(2)).maxQueue(1).build();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new AdaptiveLimiterMeterBinder(limiter, Tag.of("app", "demo")).bindTo(registry);

        clock.advance(Duration.ofSeconds(1));                       // 10 units saved at 600/min
        for (int i = 0; i < 10; i++) limiter.acquireAsync(1);
        var queued = limiter.acquireAsync(1);                       // waits 0.1 s
        limiter.acquireAsync(1);                                    // queue full: rejected
        clock.advance(Duration.ofMillis(100));
        limiter.poll();
        queued.join().complete(429, name -> name.equals("Retry-After") ? List.of("1") : List.of());

        assertThat(registry.get(AdaptiveLimiterMeterBinder.RATE).tags("limiter", "billing", "app", "demo").gauge().value())
                .isEqualTo(420);                                    // 1200 × 0.7 / 2
        assertThat(registry.get(AdaptiveLimiterMeterBinder.INSTANCES).gauge().value()).isEqualTo(2);
        assertThat(registry.get(AdaptiveLimiterMeterBinder.QUEUED).gauge().value()).isZero();
        FunctionTimer wait = registry.get(AdaptiveLimiterMeterBinder.WAIT).functionTimer();
        assertThat(wait.count()).isEqualTo(11);
        assertThat(wait.totalTime(TimeUnit.MILLISECONDS)).isEqualTo(100);
        assertThat(registry.get(AdaptiveLimiterMeterBinder.THROTTLED).functionCounter().count()).isEqualTo(1);
        assertThat(registry.get(AdaptiveLimiterMeterBinder.REJECTED).functionCounter().count()).isEqualTo(1);
    }

    /**
     * The getters and the gauges say the same rate at every step: learning (slow start after waits),
     * a cut, a pause, the instance count changing, the recovery.
     */
    @Test
    void theRateGaugesSayWhatTheLimitersGettersSay() {
        ManualClock clock = new ManualClock();
        AtomicInteger instances = new AtomicInteger(1);
        AdaptiveLimiter limiter = AdaptiveLimiter.builder().name("learned").clock(clock::nanoTime).scheduler(noTimer())
                .controller(RateController.aimd()).initialRate(600).minRate(60).maxRate(6000)
                .instanceCount(instances::get).build();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new AdaptiveLimiterMeterBinder(limiter).bindTo(registry);
        Gauge instanceRate = registry.get(AdaptiveLimiterMeterBinder.RATE).tags("limiter", "learned").gauge();
        Gauge appRate = registry.get(AdaptiveLimiterMeterBinder.APP_RATE).tags("limiter", "learned").gauge();
        List<Double> seen = new ArrayList<>();
        Runnable same = () -> {
            assertThat(instanceRate.value()).isEqualTo(limiter.unitsPerMinute());
            assertThat(appRate.value()).isEqualTo(limiter.appUnitsPerMinute());
            assertThat(limiter.unitsPerMinute()).isEqualTo(limiter.appUnitsPerMinute() / limiter.instanceCount());
            seen.add(appRate.value());
        };
        same.run();
        List<CompletableFuture<AdaptiveLimiter.Permit>> pending = new ArrayList<>();
        for (int second = 0; second < 20; second++) {
            if (second == 8) instances.set(3);
            for (int i = 0; i < 30; i++) {                          // 1,800 requests a minute: they wait
                pending.add(limiter.acquireAsync(1));
                clock.advance(Duration.ofMillis(33));
                limiter.poll();
                boolean throttle = second == 5 && i == 0;
                for (var it = pending.iterator(); it.hasNext(); ) {
                    var permit = it.next();
                    if (!permit.isDone()) continue;
                    it.remove();
                    if (permit.isCompletedExceptionally()) continue;
                    permit.join().complete(throttle ? 429 : 200, name -> throttle && name.equals("Retry-After") ? List.of("1") : List.of());
                    same.run();
                }
                same.run();
            }
        }
        assertThat(seen).as("the rate moved: up, down at the 429, up again").contains(600.0, 1200.0).hasSizeGreaterThan(3);
        assertThat(seen.stream().distinct().count()).isGreaterThan(3);
    }

    private static ScheduledExecutorService noTimer() {
        ScheduledExecutorService s = Executors.newSingleThreadScheduledExecutor();
        s.shutdown();
        return s;
    }
}

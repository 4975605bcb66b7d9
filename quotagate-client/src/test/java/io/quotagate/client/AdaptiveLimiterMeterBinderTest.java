package io.quotagate.client;

import io.quotagate.filter.testing.ManualClock;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
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
}

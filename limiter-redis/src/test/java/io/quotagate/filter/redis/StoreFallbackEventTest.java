package io.quotagate.filter.redis;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.signals.QuotaEvent;
import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.RedisServer;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** A Redis outage raises one store_fallback event when it starts and one when Redis is back. */
class StoreFallbackEventTest {

    @Test
    void anOutageRaisesFallbackOnThenOff() throws Exception {
        BlockingQueue<QuotaEvent> events = new LinkedBlockingQueue<>();
        try (RedisServer redis = RedisServer.startOwn();
             RedisStore store = RedisStore.connect(RedisSettings.of(redis.uri()).withPrefix(RedisServer.randomPrefix())
                     .withTimeout(Duration.ofMillis(200)).withHeartbeat(Duration.ofMillis(200), Duration.ofSeconds(2)), 1_000)) {
            QuotaFilter filter = QuotaFilter.builder().plans(PlansFile.parse("p.yml", """
                    plans: { big: { limits: [ { capacity: 1000, refill: 1000, period: 1s } ] } }
                    tenants: { assignments: { acme: big } }
                    """)).store(store).listener(events::add).build();
            try (JettyServer server = JettyServer.start(filter)) {
                var signals = (io.quotagate.filter.internal.signals.QuotaSignals) filter.control().signals(); // check() now, not in a second
                assertThat(Http.get(server.uri("/x"), "acme").statusCode()).isEqualTo(200);
                signals.check();
                assertThat(events.poll(300, TimeUnit.MILLISECONDS)).as("nothing while Redis answers").isNull();

                redis.kill();
                assertThat(Http.get(server.uri("/x"), "acme").statusCode()).isEqualTo(200);
                Await.within(5, "the store noticed the outage", () -> !store.available());
                signals.check();
                signals.check();
                QuotaEvent on = events.poll(5, TimeUnit.SECONDS);
                assertThat(on).isInstanceOfSatisfying(QuotaEvent.StoreFallback.class, e -> assertThat(e.active()).isTrue());
                assertThat(events.poll(300, TimeUnit.MILLISECONDS)).as("once per change").isNull();

                redis.start();
                Await.within(5, "back on Redis", store::available);
                signals.check();
                QuotaEvent off = events.poll(5, TimeUnit.SECONDS);
                assertThat(off).isInstanceOfSatisfying(QuotaEvent.StoreFallback.class, e -> assertThat(e.active()).isFalse());
                assertThat(signals.raised("store_fallback")).isEqualTo(2);
            } finally {
                filter.destroy();
            }
        }
    }
}

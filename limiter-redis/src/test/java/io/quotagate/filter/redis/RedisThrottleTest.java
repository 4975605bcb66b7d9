package io.quotagate.filter.redis;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.HeldScheduler;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.RedisServer;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.Test;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code throttle:} with Redis: a delayed request's reservation is made in Redis (the script's reserve),
 * so another instance sees the tenant's bucket in debt by it and waits behind it.
 */
class RedisThrottleTest {
    private static final Plans PLANS = PlansFile.parse("throttle.yml", """
            plans:
              paced:
                limits: [ { capacity: 1, refill: 1, period: 50s } ]
                throttle: { max-delay: 60s, queue: 10 }
            tenants: { default-plan: paced }
            """);
    private static final HttpClient CLIENT = HttpClient.newHttpClient();

    record Instance(RedisStore store, QuotaFilter filter, JettyServer server, HeldScheduler scheduler)
            implements AutoCloseable {
        static Instance start(RedisSettings settings) throws Exception {
            RedisStore store = RedisStore.connect(settings, 1_000);
            HeldScheduler scheduler = new HeldScheduler();
            QuotaFilter filter = QuotaFilter.builder().plans(PLANS).store(store).throttleScheduler(scheduler).build();
            return new Instance(store, filter, JettyServer.start(JettyServer.asyncContext(filter)), scheduler);
        }

        CompletableFuture<HttpResponse<String>> send(String tenant) {
            return CLIENT.sendAsync(HttpRequest.newBuilder(server.uri("/items")).timeout(Duration.ofMinutes(2))
                    .header("X-Tenant-Id", tenant).build(), HttpResponse.BodyHandlers.ofString());
        }

        @Override
        public void close() throws Exception {
            scheduler.shutdownNow();
            server.close();
            filter.destroy();
            store.close();
        }
    }

    @Test
    void aReservationMadeOnOneInstanceDelaysOrRefusesTheOthers() throws Exception {
        RedisSettings s = RedisSettings.of(RedisServer.shared().uri()).withPrefix(RedisServer.randomPrefix())
                .withTimeout(Duration.ofMillis(500));
        try (Instance a = Instance.start(s); Instance b = Instance.start(s)) {
            assertThat(a.send("acme").get(1, TimeUnit.MINUTES).statusCode()).isEqualTo(200); // the burst
            CompletableFuture<HttpResponse<String>> delayed = a.send("acme");
            Await.within(60, "a delays the request", () -> !a.scheduler.delays.isEmpty() || delayed.isDone());
            assertThat(a.scheduler.delays).as("delayed on a, its unit 50 s away").hasSize(1)
                    .allSatisfy(d -> assertThat(d).isPositive().isLessThanOrEqualTo(TimeUnit.SECONDS.toNanos(60)));

            // b finds the bucket in debt by a's reservation: its own unit is ~100 s away, past max-delay
            HttpResponse<String> refused = b.send("acme").get(1, TimeUnit.MINUTES);
            assertThat(refused.statusCode()).isEqualTo(429);
            assertThat(Long.parseLong(refused.headers().firstValue("Retry-After").orElseThrow()))
                    .as("behind the reservation a made in Redis").isGreaterThan(60);

            a.scheduler.release();
            HttpResponse<String> resumed = delayed.get(1, TimeUnit.MINUTES);
            assertThat(resumed.statusCode()).isEqualTo(200);
            assertThat(resumed.headers().firstValue("Quota-Delay")).isPresent();
            assertThat(a.store().fallbackDecisions() + b.store().fallbackDecisions()).as("all decided in Redis").isZero();
        }
    }
}

package io.quotagate.filter.redis;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.HoldingServlet;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.filter.testing.RedisServer;
import io.quotagate.plans.PlansFile;
import jakarta.servlet.DispatcherType;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** A concurrency cap is split between the instances sharing a Redis prefix: cap / instanceCount each. */
class RedisConcurrencyShareTest {
    private static final String PLANS = """
            plans:
              free:
                limits: [ { capacity: 1000, refill: 1000, period: 1s } ]
                concurrency: { heavy: 2 }
            routes:
              - { name: heavy, paths: ["/heavy/*"], group: heavy }
            tenants:
              default-plan: free
            """;

    private final ManualClock clock = new ManualClock();
    private final HoldingServlet holding = new HoldingServlet();

    @Test
    void withTwoInstancesACapOfTwoAdmitsOneInFlightRequestPerInstance() throws Exception {
        RedisServer redis = RedisServer.shared();
        RedisSettings settings = RedisSettings.of(redis.uri()).withPrefix(RedisServer.randomPrefix())
                .withHeartbeat(Duration.ofMillis(200), Duration.ofSeconds(2));
        try (RedisStore a = RedisStore.connect(settings, 1_000, clock.wallClock(), clock);
             RedisStore b = RedisStore.connect(settings, 1_000, clock.wallClock(), clock)) {
            Await.within(5, "both count 2", () -> a.instanceCount() == 2 && b.instanceCount() == 2);
            QuotaFilter filter = QuotaFilter.builder().plans(PlansFile.parse("share.yml", PLANS)).store(a).build();
            ServletContextHandler context = new ServletContextHandler();
            FilterHolder holder = new FilterHolder(filter);
            holder.setAsyncSupported(true);
            context.addFilter(holder, "/*", EnumSet.of(DispatcherType.REQUEST));
            context.addServlet(new ServletHolder(holding), "/");
            try (JettyServer server = JettyServer.start(context)) {
                CompletableFuture<HttpResponse<String>> held = CompletableFuture.supplyAsync(() -> {
                    try {
                        return Http.get(server.uri("/heavy/hold"), "acme");
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                });
                try {
                    assertThat(holding.entered.await(30, TimeUnit.SECONDS)).as("the first request runs").isTrue();
                    assertThat(filter.control().concurrency().inflight("heavy", "acme")).isEqualTo(1);

                    HttpResponse<String> refused = Http.get(server.uri("/heavy/ok"), "acme");
                    assertThat(refused.statusCode()).as("cap 2 / 2 instances = 1 in flight here").isEqualTo(429);
                    assertThat(refused.body()).contains("\"reason\":\"concurrency\"", "\"tenant\":\"acme\"");
                } finally {
                    holding.proceed.countDown();
                }
                assertThat(held.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
                assertThat(Http.get(server.uri("/heavy/ok"), "acme").statusCode()).as("the slot is free again").isEqualTo(200);
            }
        }
    }
}

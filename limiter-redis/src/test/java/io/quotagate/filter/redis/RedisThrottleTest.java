package io.quotagate.filter.redis;

import io.quotagate.filter.servlet.QuotaFilter;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.RedisServer;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import jakarta.servlet.DispatcherType;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.junit.jupiter.api.Test;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
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

    /** Holds each resumption until {@link #release()}; records the planned delays. */
    static final class HeldScheduler extends ScheduledThreadPoolExecutor {
        final List<Runnable> held = new CopyOnWriteArrayList<>();
        final List<Long> delays = new CopyOnWriteArrayList<>();

        HeldScheduler() {
            super(1);
        }

        @Override
        public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
            delays.add(unit.toNanos(delay));
            held.add(command);
            return super.schedule(() -> { }, 1, TimeUnit.HOURS);
        }

        void release() {
            new ArrayList<>(held).forEach(Runnable::run);
            held.clear();
        }
    }

    record Instance(RedisStore store, QuotaFilter filter, JettyServer server, HeldScheduler scheduler)
            implements AutoCloseable {
        static Instance start(RedisSettings settings) throws Exception {
            RedisStore store = RedisStore.connect(settings, 1_000);
            HeldScheduler scheduler = new HeldScheduler();
            QuotaFilter filter = QuotaFilter.builder().plans(PLANS).store(store).throttleScheduler(scheduler).build();
            ServletContextHandler context = new ServletContextHandler();
            context.setContextPath("/");
            FilterHolder holder = new FilterHolder(filter);
            holder.setAsyncSupported(true);
            context.addFilter(holder, "/*", EnumSet.of(DispatcherType.REQUEST));
            ServletHolder ok = new ServletHolder(new JettyServer.OkServlet());
            ok.setAsyncSupported(true);
            context.addServlet(ok, "/");
            return new Instance(store, filter, JettyServer.start(context), scheduler);
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
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (a.scheduler.delays.isEmpty() && !delayed.isDone() && System.nanoTime() < deadline) Thread.sleep(5);
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

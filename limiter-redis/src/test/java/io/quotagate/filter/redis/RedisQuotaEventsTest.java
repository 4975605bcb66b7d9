package io.quotagate.filter.redis;

import com.sun.net.httpserver.HttpServer;
import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.internal.signals.QuotaSignals;
import io.quotagate.filter.signals.QuotaEvent;
import io.quotagate.filter.signals.WebhookListener;
import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.filter.testing.RedisServer;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two instances on one Redis raise a calendar quota's near-limit (80 %, 90 %) and used-up events once per
 * tenant, quota and period between them, to their listeners and to the signed webhook, however their
 * checks interleave.
 */
class RedisQuotaEventsTest {
    /** A month to come: the claims expire with its end, which must lie in Redis's future. */
    private static final LocalDate MONTH = LocalDate.now(ZoneOffset.UTC).plusMonths(2).withDayOfMonth(1);
    private static final Instant PERIOD_START = MONTH.atStartOfDay(ZoneOffset.UTC).toInstant();
    private static final Instant PERIOD_END = MONTH.plusMonths(1).atStartOfDay(ZoneOffset.UTC).toInstant();

    private final ManualClock clock = new ManualClock();
    private final Clock wall = clock.wallClock(PERIOD_START.plus(Duration.ofDays(3)));
    private final String tenant = "t" + UUID.randomUUID().toString().substring(0, 8);
    private final Plans plans = PlansFile.parse("quota-events.yml", """
            plans:
              pro:
                limits: [ { capacity: 1000, refill: 1000, period: 1s } ]
                quotas: [ { name: monthly, limit: 20, per: month } ]
            tenants: { assignments: { %s: pro } }
            """.formatted(tenant));

    record Instance(RedisStore store, QuotaFilter filter, JettyServer server, WebhookListener webhook)
            implements AutoCloseable {
        int get(String tenant) throws Exception {
            return Http.get(server.uri("/items/1"), tenant).statusCode();
        }

        void check() {
            ((QuotaSignals) filter.control().signals()).check();
        }

        @Override
        public void close() throws Exception {
            server.close();
            filter.destroy();
            webhook.close();
            store.close();
        }
    }

    private Instance start(RedisSettings settings, List<QuotaEvent> heard, URI hook) throws Exception {
        RedisStore store = RedisStore.connect(settings, 1_000);
        WebhookListener webhook = WebhookListener.builder(hook, "s3cret".getBytes(StandardCharsets.UTF_8))
                .backoff(Duration.ZERO).build();
        QuotaFilter filter = QuotaFilter.builder().plans(plans).store(store).wallClock(wall).clock(clock)
                .listener(heard::add).listener(webhook).build();
        return new Instance(store, filter, JettyServer.start(filter), webhook);
    }

    @Test
    void twoInstancesRaiseEachQuotaEventOnceToListenersAndWebhook() throws Exception {
        Map<String, AtomicInteger> delivered = new ConcurrentHashMap<>();
        List<String> bodies = new CopyOnWriteArrayList<>();
        HttpServer receiver = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        receiver.createContext("/hook", exchange -> {
            String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            bodies.add(body);
            String sig = exchange.getRequestHeaders().getFirst(WebhookListener.SIGNATURE_HEADER);
            if (WebhookListener.sign("s3cret".getBytes(StandardCharsets.UTF_8),
                    body.getBytes(StandardCharsets.UTF_8)).equals(sig) && body.contains(tenant)) {
                delivered.computeIfAbsent(exchange.getRequestHeaders().getFirst("X-Quotagate-Event"),
                        t -> new AtomicInteger()).incrementAndGet();
            }
            exchange.sendResponseHeaders(204, -1);
            exchange.close();
        });
        receiver.start();
        URI hook = URI.create("http://127.0.0.1:" + receiver.getAddress().getPort() + "/hook");
        RedisSettings settings = RedisSettings.of(RedisServer.shared().uri()).withPrefix(RedisServer.randomPrefix())
                .withTimeout(Duration.ofMillis(500));
        List<QuotaEvent> heard = new CopyOnWriteArrayList<>();
        ExecutorService checkers = Executors.newFixedThreadPool(2);
        try (Instance a = start(settings, heard, hook); Instance b = start(settings, heard, hook)) {
            // 25 requests alternating between the instances (20 admitted, 5 refused by the quota), both
            // instances checking at the same moment after each: each sees every crossing in the shared count
            int admitted = 0;
            for (int i = 0; i < 25; i++) {
                if ((i % 2 == 0 ? a : b).get(tenant) == 200) admitted++;
                CyclicBarrier together = new CyclicBarrier(2);
                List<Future<?>> checks = List.of(
                        checkers.submit(() -> { together.await(); a.check(); return null; }),
                        checkers.submit(() -> { together.await(); b.check(); return null; }));
                for (Future<?> f : checks) f.get(10, TimeUnit.SECONDS);
            }
            assertThat(admitted).isEqualTo(20);
            // the instance that did not count a request reads the counter too: more checks, nothing new
            a.check();
            b.check();
            Await.within(10, "three events delivered to the webhook",
                    () -> delivered.values().stream().mapToInt(AtomicInteger::get).sum() >= 3);
            Thread.sleep(300); // anything more would be on its way by now
            List<QuotaEvent> quotaEvents = heard.stream().filter(e -> e instanceof QuotaEvent.NearLimit
                    || e instanceof QuotaEvent.Exhausted).toList();
            assertThat(quotaEvents).extracting(QuotaEvent::type)
                    .containsExactly("near_limit", "near_limit", "exhausted");
            assertThat(quotaEvents.get(0)).isInstanceOfSatisfying(QuotaEvent.NearLimit.class, e -> {
                assertThat(e.thresholdPercent()).isEqualTo(80);
                assertThat(e.periodStart()).isEqualTo(PERIOD_START);
                assertThat(e.periodEnd()).isEqualTo(PERIOD_END);
            });
            assertThat(quotaEvents.get(1)).isInstanceOfSatisfying(QuotaEvent.NearLimit.class,
                    e -> assertThat(e.thresholdPercent()).isEqualTo(90));
            assertThat(quotaEvents.get(2)).isInstanceOfSatisfying(QuotaEvent.Exhausted.class, e -> {
                assertThat(e.quota()).isEqualTo("monthly");
                assertThat(e.periodEnd()).isEqualTo(PERIOD_END);
            });
            assertThat(delivered).containsOnlyKeys("near_limit", "exhausted");
            assertThat(delivered.get("near_limit")).hasValue(2);
            assertThat(delivered.get("exhausted")).hasValue(1);
            assertThat(bodies).anySatisfy(body -> assertThat(body).contains("\"quota\":\"monthly\"",
                    "\"periodStart\":\"" + PERIOD_START + "\"", "\"periodEnd\":\"" + PERIOD_END + "\""));
            assertThat(a.filter().control().signals().raised("near_limit")
                    + b.filter().control().signals().raised("near_limit")).as("raised, whatever was delivered").isEqualTo(2);
            assertThat(a.filter().control().signals().raised("exhausted")
                    + b.filter().control().signals().raised("exhausted")).isEqualTo(1);
        } finally {
            checkers.shutdownNow();
            receiver.stop(0);
        }
    }
}

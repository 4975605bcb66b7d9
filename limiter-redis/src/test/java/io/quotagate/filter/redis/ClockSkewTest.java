package io.quotagate.filter.redis;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.filter.testing.RedisServer;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Instances whose wall clocks (the filter's and the store's, as a builder takes them) are minutes or hours
 * apart share one Redis: shared buckets and calendar periods are told on Redis's clock (each instance's
 * corrected by its measured offset), so a skewed instance grants no extra units, locks no tenant out past
 * the Retry-After it gives, and enforces the same daily quota. Before, an instance 2 minutes behind refused
 * for 126 s while saying {@code Retry-After: 6}, one 2 minutes ahead handed out a second bucket, and one more
 * than an hour behind enforced no daily quota at all (its counters were written already expired).
 *
 * <p>Both instances' clocks are one {@link ManualClock} (each shifted by its skew), so the test moves time by
 * hand; each measures its offset once, when it connects.
 */
class ClockSkewTest {
    private static final int DAILY = 50;
    private static final Plans PLANS = PlansFile.parse("skew.yml", """
            plans:
              free:
                limits: [ { capacity: 100000, refill: 100000, period: 1s } ]
              rated:
                limits: [ { capacity: 10, refill: 10, period: 1m } ]
              metered:
                limits: [ { capacity: 100000, refill: 100000, period: 1s } ]
                quotas: [ { name: daily, limit: %d, per: day } ]
            tenants:
              default-plan: free
              assignments: { acme: rated, globex: metered }
            """.formatted(DAILY));

    private final ManualClock clock = new ManualClock();

    record Instance(RedisStore store, Clock wall, JettyServer server) implements AutoCloseable {
        /**
         * An instance whose wall clock reads {@code skew} off the real time (frozen: it moves with the manual
         * clock). The store measures its offset as it connects, so two stores are connected one right after the
         * other, before their servers start ({@link #serve}): their corrected clocks then differ by the moments
         * between those two connections only.
         */
        static Instance connect(RedisSettings settings, ManualClock clock, Instant base, Duration skew) {
            Clock wall = clock.wallClock(base.plus(skew));
            return new Instance(RedisStore.connect(settings, 1_000, wall, clock), wall, null);
        }

        Instance serve(ManualClock clock) throws Exception {
            QuotaFilter filter = QuotaFilter.builder().plans(PLANS).store(store).clock(clock).wallClock(wall).build();
            return new Instance(store, wall, JettyServer.start(filter));
        }

        HttpResponse<String> get(String tenant) throws Exception {
            return Http.get(server.uri("/items/1"), tenant);
        }

        @Override
        public void close() throws Exception {
            if (server != null) server.close();
            store.close();
        }
    }

    /** Two instances, the first on time, the second {@code skew} off. */
    private Instance[] start(Duration skew) throws Exception {
        RedisSettings s = settings();
        Instant base = Instant.now();
        Instance onTime = Instance.connect(s, clock, base, Duration.ZERO);
        Instance skewed = Instance.connect(s, clock, base, skew);
        return new Instance[]{onTime.serve(clock), skewed.serve(clock)};
    }

    private static RedisSettings settings() {
        return RedisSettings.of(RedisServer.shared().uri()).withPrefix(RedisServer.randomPrefix())
                .withTimeout(Duration.ofMillis(500));
    }

    /**
     * A tenant's bucket (10 a minute) used up on an instance on time: the skewed one refuses too (no extra
     * bucket), says a Retry-After no longer than the other's, and admits one request once that wait has passed
     * (no lock-out), then refuses again.
     */
    @ParameterizedTest(name = "skew {0} s")
    @ValueSource(longs = {-120, 120, -5_400})
    void aSkewedInstanceGrantsNoExtraUnitsAndHonoursItsRetryAfter(long skewSeconds) throws Exception {
        Instance[] both = start(Duration.ofSeconds(skewSeconds));
        try (Instance onTime = both[0]; Instance skewed = both[1]) {
            for (int i = 0; i < 10; i++) assertThat(onTime.get("acme").statusCode()).isEqualTo(200);
            HttpResponse<String> refused = onTime.get("acme");
            assertThat(refused.statusCode()).isEqualTo(429);
            long retryAfter = retryAfter(refused);
            assertThat(retryAfter).isEqualTo(6);

            HttpResponse<String> there = skewed.get("acme");
            assertThat(there.statusCode()).as("no extra bucket on the skewed instance").isEqualTo(429);
            long wait = retryAfter(there);
            assertThat(wait).as("its Retry-After").isBetween(1L, retryAfter);

            clock.advance(Duration.ofSeconds(wait));
            assertThat(skewed.get("acme").statusCode()).as("admitted once its Retry-After has passed").isEqualTo(200);
            assertThat(skewed.get("acme").statusCode()).as("one unit refilled, not more").isEqualTo(429);
            assertThat(onTime.get("acme").statusCode()).isEqualTo(429);
        }
    }

    /**
     * A daily quota of 50, requests alternating between an instance on time and a skewed one: 50 admitted in
     * all, counted in one counter, and both refusals wait for the same midnight (Redis's). The last case is an
     * instance whose clock still reads 23:30 of yesterday: its own day ended over an hour ago, so the counter
     * it wrote by its own clock expired at once.
     */
    @ParameterizedTest(name = "skew {0} s")
    @ValueSource(longs = {-120, 120, Long.MIN_VALUE})
    void everyInstanceEnforcesTheSameDailyQuota(long skewSeconds) throws Exception {
        Instant now = Instant.now();
        Instant midnight = LocalDate.now(ZoneOffset.UTC).plusDays(1).atStartOfDay(ZoneOffset.UTC).toInstant();
        Assumptions.assumeTrue(Duration.between(now, midnight).toMinutes() >= 2, "not across midnight UTC");
        Duration skew = skewSeconds != Long.MIN_VALUE ? Duration.ofSeconds(skewSeconds)
                : Duration.between(now, midnight.minus(Duration.ofDays(1)).minus(Duration.ofMinutes(30)));
        Instance[] both = start(skew);
        try (Instance onTime = both[0]; Instance skewed = both[1]) {
            int admitted = 0;
            for (int i = 0; i < 80; i++) {
                if ((i % 2 == 0 ? onTime : skewed).get("globex").statusCode() == 200) admitted++;
            }
            assertThat(admitted).as("admitted of a daily %d", DAILY).isEqualTo(DAILY);
            HttpResponse<String> here = onTime.get("globex");
            HttpResponse<String> there = skewed.get("globex");
            assertThat(here.statusCode()).isEqualTo(429);
            assertThat(there.statusCode()).isEqualTo(429);
            // both clocks stand still at the moment each connected (a manual clock): the wait is to midnight
            // from some moment of this test, give or take a few seconds between the two connections
            long atMost = Duration.between(now, midnight).toSeconds() + 5;
            long atLeast = Duration.between(Instant.now(), midnight).toSeconds() - 5;
            assertThat(retryAfter(here)).as("the instance on time waits for midnight").isBetween(atLeast, atMost);
            assertThat(retryAfter(there)).as("the skewed instance waits for the same midnight (Redis's)")
                    .isBetween(atLeast, atMost)
                    .isBetween(retryAfter(here) - 5, retryAfter(here) + 5);
        }
    }

    private static long retryAfter(HttpResponse<String> r) {
        return Long.parseLong(r.headers().firstValue("Retry-After").orElseThrow());
    }
}

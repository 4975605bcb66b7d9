package io.quotagate.filter;

import io.quotagate.filter.signals.QuotaEvent;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A calendar quota's events on the local store: near-limit at each threshold and used up, each once per
 * tenant, quota and period, carrying the period; a new period raises them again.
 */
class QuotaPeriodEventsTest {
    private static final Instant START = Instant.parse("2027-03-30T10:00:00Z");
    private static final Instant MARCH = Instant.parse("2027-03-01T00:00:00Z");
    private static final Instant APRIL = Instant.parse("2027-04-01T00:00:00Z");

    private final ManualClock clock = new ManualClock();
    private final BlockingQueue<QuotaEvent> events = new LinkedBlockingQueue<>();
    private final String tenant = "t" + UUID.randomUUID().toString().substring(0, 8);
    private QuotaFilter filter;
    private JettyServer server;

    private void start(String signals) throws Exception {
        filter = QuotaFilter.builder().plans(PlansFile.parse("quota-events.yml", """
                        plans:
                          pro:
                            limits: [ { name: burst, capacity: 100, refill: 100, period: 1s } ]
                            quotas: [ { name: monthly, limit: 10, per: month } ]
                        routes: [ { name: export, paths: ["/export"], cost: 3 } ]
                        tenants: { assignments: { %s: pro } }
                        """.formatted(tenant) + signals)).clock(clock)
                .wallClock(clock.wallClock(START)).listener(events::add).build();
        server = JettyServer.start(filter);
    }

    @AfterEach
    void stop() throws Exception {
        if (server != null) server.close();
        if (filter != null) filter.destroy();
    }

    private void check() {
        ((FilterRuntime) filter.control()).signals.check();
    }

    private void send(int n, int status) throws Exception {
        for (int i = 0; i < n; i++) {
            assertThat(Http.get(server.uri("/items/1"), tenant).statusCode()).isEqualTo(status);
        }
    }

    private List<QuotaEvent> drain() throws InterruptedException {
        List<QuotaEvent> out = new ArrayList<>();
        QuotaEvent e;
        while ((e = events.poll(300, TimeUnit.MILLISECONDS)) != null) out.add(e);
        return out;
    }

    @Test
    void nearLimitAt80And90PercentAndUsedUpEachOncePerPeriodWithThePeriodsBounds() throws Exception {
        start("");
        send(7, 200);
        check();
        assertThat(drain()).as("70%: below 80%").isEmpty();
        send(1, 200);
        check();
        check();
        List<QuotaEvent> at80 = drain();
        assertThat(at80).singleElement().isInstanceOfSatisfying(QuotaEvent.NearLimit.class, e -> {
            assertThat(e.tenant()).isEqualTo(tenant);
            assertThat(e.plan()).isEqualTo("pro");
            assertThat(e.limit()).isEqualTo("monthly");
            assertThat(e.quota()).isTrue();
            assertThat(e.thresholdPercent()).isEqualTo(80);
            assertThat(e.used()).isEqualTo(8);
            assertThat(e.capacity()).isEqualTo(10);
            assertThat(e.periodStart()).isEqualTo(MARCH);
            assertThat(e.periodEnd()).isEqualTo(APRIL);
        });
        assertThat(e80Logfmt(at80.get(0))).contains("periodStart=2027-03-01T00:00:00Z periodEnd=2027-04-01T00:00:00Z");
        send(2, 200);
        send(3, 429); // six refusals between two checks
        check();
        List<QuotaEvent> full = drain();
        assertThat(full).hasSize(2);
        assertThat(full.get(0)).isInstanceOfSatisfying(QuotaEvent.NearLimit.class,
                e -> assertThat(e.thresholdPercent()).isEqualTo(90));
        assertThat(full.get(1)).as("one exhausted: the quota's, not a second one of the refusal spell")
                .isInstanceOfSatisfying(QuotaEvent.Exhausted.class, e -> {
                    assertThat(e.reason()).isEqualTo("quota");
                    assertThat(e.quota()).isEqualTo("monthly");
                    assertThat(e.periodStart()).isEqualTo(MARCH);
                    assertThat(e.periodEnd()).isEqualTo(APRIL);
                });
        send(2, 429);
        check();
        clock.advance(Duration.ofMinutes(5)); // the refusal spell recovers; the quota stays used up
        check();
        assertThat(drain()).noneMatch(e -> e instanceof QuotaEvent.NearLimit || e instanceof QuotaEvent.Exhausted);

        clock.advance(Duration.ofDays(2)); // April: a new period
        send(10, 200);
        send(1, 429);
        check();
        List<QuotaEvent> april = drain();
        assertThat(april).extracting(QuotaEvent::type).containsExactly("near_limit", "near_limit", "exhausted");
        assertThat(april).allSatisfy(e -> assertThat(e instanceof QuotaEvent.NearLimit n ? n.periodStart()
                : ((QuotaEvent.Exhausted) e).periodStart()).isEqualTo(APRIL));
        assertThat(filter.control().signals().raised("near_limit")).isEqualTo(4);
        assertThat(filter.control().signals().raised("exhausted")).isEqualTo(2);
    }

    @Test
    void thresholdsComeFromSignalsQuotaNearLimitAndAnEmptyListRaisesOnlyUsedUp() throws Exception {
        start("signals: { quota-near-limit: { default: [], plans: { pro: { monthly: [50%] } } } }\n");
        send(5, 200);
        check();
        assertThat(drain()).singleElement().isInstanceOfSatisfying(QuotaEvent.NearLimit.class,
                e -> assertThat(e.thresholdPercent()).isEqualTo(50));
        send(5, 200);
        check();
        assertThat(drain()).extracting(QuotaEvent::type).containsExactly("exhausted");
    }

    @Test
    void aRequestRefusedByTheQuotaWithUnitsLeftMakesItUsedUpOnce() throws Exception {
        start("");
        for (int i = 0; i < 3; i++) {
            assertThat(Http.get(server.uri("/export"), tenant).statusCode()).isEqualTo(200);
        }
        assertThat(Http.get(server.uri("/export"), tenant).statusCode()).as("9 used, 3 more do not fit")
                .isEqualTo(429);
        check();
        check();
        List<QuotaEvent> got = drain();
        assertThat(got).extracting(QuotaEvent::type).containsExactly("near_limit", "near_limit", "exhausted");
        assertThat(got.get(2)).isInstanceOfSatisfying(QuotaEvent.Exhausted.class,
                e -> assertThat(e.quota()).isEqualTo("monthly"));
        send(1, 200); // the last unit: used up for good, already said
        check();
        assertThat(drain()).isEmpty();
    }

    private static String e80Logfmt(QuotaEvent e) {
        return e.logfmt();
    }
}

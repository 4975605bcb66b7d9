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

/** A quota's events carry its anchored period, and a new anchored period raises them again. */
class AnchoredQuotaEventsTest {
    // the cycle from the 15th at 09:00 in Berlin: Mar 15 09:00 CET (08:00Z) to Apr 15 09:00 CEST (07:00Z)
    private static final Instant MARCH_15 = Instant.parse("2027-03-15T08:00:00Z");
    private static final Instant APRIL_15 = Instant.parse("2027-04-15T07:00:00Z");

    private final ManualClock clock = new ManualClock();
    private final BlockingQueue<QuotaEvent> events = new LinkedBlockingQueue<>();
    private final String tenant = "t" + UUID.randomUUID().toString().substring(0, 8);
    private QuotaFilter filter;
    private JettyServer server;

    @AfterEach
    void stop() throws Exception {
        if (server != null) server.close();
        if (filter != null) filter.destroy();
    }

    private void send(int n, int status) throws Exception {
        for (int i = 0; i < n; i++) {
            assertThat(Http.get(server.uri("/items/1"), tenant).statusCode()).isEqualTo(status);
        }
    }

    private List<QuotaEvent> checkAndDrain() throws InterruptedException {
        ((FilterRuntime) filter.control()).signals.check();
        List<QuotaEvent> out = new ArrayList<>();
        QuotaEvent e;
        while ((e = events.poll(300, TimeUnit.MILLISECONDS)) != null) out.add(e);
        return out;
    }

    @Test
    void nearLimitAndUsedUpCarryTheAnchoredPeriodAndTheNextCycleRaisesThemAgain() throws Exception {
        filter = QuotaFilter.builder().plans(PlansFile.parse("anchored-events.yml", """
                        plans:
                          pro:
                            limits: [ { name: burst, capacity: 100, refill: 100, period: 1s } ]
                            quotas: [ { name: cycle, limit: 10, per: month, zone: Europe/Berlin, anchor: { day: 15, time: "09:00" } } ]
                        tenants: { assignments: { %s: pro } }
                        """.formatted(tenant))).clock(clock)
                .wallClock(clock.wallClock(Instant.parse("2027-04-15T06:00:00Z"))).listener(events::add).build();
        server = JettyServer.start(filter);
        send(10, 200);
        send(1, 429);
        List<QuotaEvent> march = checkAndDrain();
        assertThat(march).extracting(QuotaEvent::type).containsExactly("near_limit", "near_limit", "exhausted");
        assertThat(march.get(2)).isInstanceOfSatisfying(QuotaEvent.Exhausted.class, e -> {
            assertThat(e.periodStart()).isEqualTo(MARCH_15);
            assertThat(e.periodEnd()).isEqualTo(APRIL_15);
        });
        clock.advance(Duration.ofHours(1)); // Apr 15 09:00 CEST: the next cycle, to May 15 09:00 CEST
        send(8, 200);
        List<QuotaEvent> april = checkAndDrain().stream().filter(e -> !(e instanceof QuotaEvent.Recovered)).toList();
        assertThat(april).as("the refusal spell's recovery aside").singleElement().isInstanceOfSatisfying(QuotaEvent.NearLimit.class, e -> {
            assertThat(e.thresholdPercent()).isEqualTo(80);
            assertThat(e.periodStart()).isEqualTo(APRIL_15);
            assertThat(e.periodEnd()).isEqualTo(Instant.parse("2027-05-15T07:00:00Z"));
        });
    }
}

package io.quotagate.filter;

import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.KeepAliveClient;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A flood of made-up tenant ids cannot drain the global quota that paying tenants share: every
 * unknown id is charged in the guest pool ({@code tenants.guests}) as well as in its own bucket, so
 * together guests get their share and no more, however many ids they rotate through. Real HTTP to
 * Jetty, at full speed.
 */
class GuestFloodTest {
    /** Global quota 1,000/s; guests together 300/s; acme's plan 200/s, which it keeps to. */
    static final String PLANS = """
            global: { limits: [ { capacity: 1000, refill: 1000, period: 1s } ] }
            plans:
              free: { limits: [ { capacity: 20, refill: 10, period: 1s } ] }
              pro:  { limits: [ { capacity: 400, refill: 400, period: 1s } ] }
            tenants:
              default-plan: free
              unknown: default
              assignments: { acme: pro }
              guests:
                limits: [ { capacity: 100, refill: 300, period: 1s } ]
            """;
    static final int FRESH_IDS = 150_000;
    static final int FLOODERS = 6;

    @Test
    void freshIdsAtFullSpeedNeverCostAnAssignedTenantItsGlobalShare() throws Exception {
        QuotaFilter filter = QuotaFilter.builder().plans(PlansFile.parse("guests.yml", PLANS)).build();
        try (JettyServer server = JettyServer.start(filter)) {
            AtomicInteger nextId = new AtomicInteger();
            Map<Integer, LongAdder> guestAnswers = new ConcurrentHashMap<>();
            Thread[] flooders = new Thread[FLOODERS];
            long started = System.nanoTime();
            for (int t = 0; t < FLOODERS; t++) {
                flooders[t] = new Thread(() -> {
                    try (KeepAliveClient client = new KeepAliveClient(server.port())) {
                        for (int id; (id = nextId.getAndIncrement()) < FRESH_IDS; ) {
                            int status = client.get("/items/1", "X-Tenant-Id: made-up-" + id);
                            guestAnswers.computeIfAbsent(status, s -> new LongAdder()).increment();
                        }
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                flooders[t].start();
            }
            // acme: 100 requests/s, half its plan, for as long as the flood lasts
            Map<String, Integer> acmeRefusals = new ConcurrentHashMap<>();
            int acmeOk = 0;
            try (KeepAliveClient acme = new KeepAliveClient(server.port())) {
                while (nextId.get() < FRESH_IDS) {
                    KeepAliveClient.Answer answer = acme.exchange("/items/1", "X-Tenant-Id: acme");
                    if (answer.status() == 200) acmeOk++;
                    else acmeRefusals.merge(answer.reason(), 1, Integer::sum);
                    Thread.sleep(10); // paces acme (about 100/s) while the flood lasts: not a wait for a condition
                }
            }
            for (Thread t : flooders) t.join();
            double seconds = (System.nanoTime() - started) / 1e9;

            long guestsAdmitted = guestAnswers.getOrDefault(200, new LongAdder()).sum();
            long guestsRefused = guestAnswers.getOrDefault(429, new LongAdder()).sum();
            assertThat(guestsAdmitted + guestsRefused).isEqualTo(FRESH_IDS); // nothing else: no 4xx, no 5xx
            assertThat(acmeRefusals).isEmpty();
            assertThat(acmeOk).isPositive();
            // guests get their pool and no more: its burst + 300/s (+ 1 s of slack for timing)
            assertThat(guestsAdmitted).isLessThanOrEqualTo((long) (100 + 300 * (seconds + 1)));
            assertThat(guestsAdmitted).isGreaterThanOrEqualTo((long) Math.min(FRESH_IDS, 300 * seconds * 0.5));
            assertThat(filter.control().statistics().cells()).anySatisfy(c -> assertThat(c.reason()).isEqualTo("guest_rate"))
                    .noneSatisfy(c -> assertThat(c.reason()).isEqualTo("global_rate"));
            // nor the dashboard: the flood's one-request ids never get a tag of their own, acme keeps its own
            assertThat(filter.control().statistics().namedTenants()).containsExactly("acme");
            assertThat(filter.control().statistics().cells()).allSatisfy(c -> assertThat(c.tenant()).isIn("acme", "other"));
        }
    }
}

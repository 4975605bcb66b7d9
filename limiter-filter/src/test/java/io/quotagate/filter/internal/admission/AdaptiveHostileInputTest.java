package io.quotagate.filter.internal.admission;

import io.quotagate.filter.internal.route.Route;
import io.quotagate.filter.status.ConcurrencyListener;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import io.quotagate.tenant.TenantDirectory;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a hostile tenant can do to an adaptive group ({@code groups.<g>.adaptive}), on a manual clock through the
 * gate. The limit reads the group's run times, so whatever makes a tenant's own requests long (a throttle's delay,
 * a client that reads its response slowly) is what it could feed it; and fair shares count ids, which guests make
 * up. Requests end on 10 ms ticks of the manual clock: no thread, no wall clock.
 */
class AdaptiveHostileInputTest {
    private static final long TICK = Duration.ofMillis(10).toNanos();
    private static final long BACKEND = Duration.ofMillis(100).toNanos();

    private final ManualClock clock = new ManualClock();

    /** A request holding a slot until {@code end} of the manual clock. */
    private record Running(Ticket ticket, long end, String tenant) {
    }

    /** The gate of a plans file, and the requests it admitted, ended tick by tick. */
    private final class Sim {
        final ConcurrencyLimits limits;
        final Gate gate;
        final Policy policy;
        final Route reports;
        final List<Running> running = new ArrayList<>();
        long completed;

        Sim(String yaml) {
            Plans plans = PlansFile.parse("adaptive-hostile.yml", yaml);
            limits = new ConcurrencyLimits(plans, clock, ConcurrencyListener.NONE);
            gate = new Gate(BucketStore.local(10_000, clock), limits,
                    new FailureLog(System.getLogger("test"), clock, "directory"));
            policy = gate.policy(plans, TenantDirectory.of(plans.tenants().assignments()), null);
            reports = policy.route("GET", "/reports/1");
        }

        /** A request of {@code tenant} that runs {@code nanos} once it may (after its delay, if delayed). */
        boolean send(String tenant, String address, long nanos) {
            Outcome o = gate.decide(policy, reports, tenant, address);
            if (o instanceof Outcome.Refused) return false;
            Ticket t = o instanceof Outcome.Delayed d ? d.ticket() : (Ticket) o;
            t.run();
            running.add(new Running(t, clock.nanoTime() + t.delayNanos() + nanos, tenant));
            return true;
        }

        boolean send(String tenant, long nanos) {
            return send(tenant, "192.0.2.1", nanos);
        }

        /** Sends for {@code tenant} until it holds {@code slots} or is refused. */
        void keep(String tenant, int slots, long nanos) {
            while (running(tenant) < slots && send(tenant, nanos)) {
                // next
            }
        }

        int running(String tenant) {
            int n = 0;
            for (Running r : running) if (r.tenant.equals(tenant)) n++;
            return n;
        }

        /** Ends the requests that are due (their permits released, as the filter does), then moves one tick. */
        void tick() {
            long now = clock.nanoTime();
            for (var it = running.iterator(); it.hasNext(); ) {
                Running r = it.next();
                if (r.end <= now) {
                    it.remove();
                    if (r.ticket.end()) r.ticket.permit().release();
                    if (r.tenant.equals("globex")) completed++;
                }
            }
            clock.advanceNanos(TICK);
        }

        int limit() {
            return limits.adaptiveLimit("reports").orElseThrow();
        }
    }

    static final String THROTTLED = """
            plans:
              big:
                limits: [ { capacity: 100000, refill: 100000, period: 1s } ]
              free:
                limits: [ { capacity: 10, refill: 10, period: 1s } ]
                throttle: { max-delay: 2s, queue: 1000 }
            routes:
              - { name: reports, paths: ["/reports/*"], group: reports }
            groups:
              reports: { adaptive: { algorithm: %s, initial: 20, min: 2, max: 40 } }
            tenants:
              default-plan: big
              assignments: { acme: free, globex: big }
            """;

    /**
     * acme sends at twice its plan's rate, so its requests wait up to 2 s for their units, each holding its slot
     * meanwhile (as documented). The backend answers every request in 100 ms. Fed acme's waits as run time,
     * Gradient2 took them for a slower backend and cut the limit from 20 to 15 for everyone; from the end of the
     * wait, it sees 100 ms and a busier group, and climbs to its max.
     */
    @Test
    void aThrottlesDelayIsNotReadAsTheBackendsLatency() {
        for (String algorithm : List.of("gradient2", "vegas")) {
            Sim sim = new Sim(THROTTLED.formatted(algorithm));
            int delayed = 0;
            for (int t = 0; t < 6_000; t++) { // 60 s of globex alone: 4 at a time, the limit stays at 20
                sim.keep("globex", 4, BACKEND);
                sim.tick();
            }
            int before = sim.limit();
            int lowest = before;
            for (int t = 0; t < 6_000; t++) { // 60 s more, acme sending 20 a second
                sim.keep("globex", 4, BACKEND);
                if (t % 5 == 0 && sim.send("acme", BACKEND) && sim.running.get(sim.running.size() - 1).ticket.delayNanos() > 0) {
                    delayed++;
                }
                sim.tick();
                lowest = Math.min(lowest, sim.limit());
            }
            assertThat(before).isEqualTo(20);
            assertThat(delayed).as(algorithm + ": acme's requests beyond its rate were delayed").isGreaterThan(500);
            assertThat(lowest).as(algorithm + ": the limit never fell below what it was").isGreaterThanOrEqualTo(before);
            if (algorithm.equals("gradient2")) {
                assertThat(sim.limit()).as("a busier group at 100 ms: Gradient2 climbs to its max").isEqualTo(40);
            }
        }
    }

    static final String SLOW_READER = """
            plans:
              big:
                limits: [ { capacity: 100000, refill: 100000, period: 1s } ]
            routes:
              - { name: reports, paths: ["/reports/*"], group: reports }
            groups:
              reports: { adaptive: { algorithm: %s, initial: 20, min: 2, max: 40 } }
            tenants:
              default-plan: big
              assignments: { globex: big, slow: big }
            """;

    /**
     * A tenant whose requests each hold their slot for 30 s (a client reading its responses slowly: the servlet's
     * writes block, and the run time the limit reads grows with them) while the backend answers in 100 ms, taking
     * every slot its fair share gives it, beside globex asking for 8 slots of 100 ms. Gradient2's windows average
     * the run times, so each slow request weighs as much as the time it held: Gradient2 reads the slow reader as
     * a slower backend and lowers the limit for everyone (measured: from 40 beside a fast neighbour to 19). But
     * the fair shares shrink with the limit, the slow tenant's slots with them, and globex keeps 98 % of the
     * requests it completes beside a neighbour as busy with fast requests (12,805 against 13,088 in 3 min).
     * Vegas counts requests, not their time: it moved from 40 to 32 and globex lost none. This pins that bound:
     * slowing one's own requests lowers an adaptive limit, never below what leaves the others nearly all of
     * theirs. (A window median instead of the mean, Netflix's PercentileSampleWindow, kept Gradient2 at 40 in
     * the same run; not adopted here, as it also hides a slowdown of fewer than half the requests.)
     */
    @Test
    void aTenantReadingItsResponsesSlowlyLowersGradient2OnlyAsFarAsTheFairSharesLet() {
        for (String algorithm : List.of("gradient2", "vegas")) {
            Result fast = busyNeighbour(algorithm, BACKEND);
            Result slow = busyNeighbour(algorithm, Duration.ofSeconds(30).toNanos());
            assertThat(slow.mostHeld).as(algorithm + ": the slow tenant never holds more than half the limit")
                    .isLessThanOrEqualTo(20);
            assertThat(slow.globexCompleted).as(algorithm + ": globex keeps 95 % of what it gets beside a fast neighbour")
                    .isGreaterThanOrEqualTo(fast.globexCompleted * 95 / 100);
            assertThat(slow.lowest).as(algorithm + ": the limit stays where globex's share is most of its 8")
                    .isGreaterThanOrEqualTo(16);
        }
    }

    private record Result(long globexCompleted, int lowest, int mostHeld) {
    }

    /** 3 min of globex asking for 8 slots of 100 ms beside a tenant taking every slot it can for {@code nanos}. */
    private Result busyNeighbour(String algorithm, long nanos) {
        Sim sim = new Sim(SLOW_READER.formatted(algorithm));
        int lowest = Integer.MAX_VALUE;
        int mostHeld = 0;
        for (int t = 0; t < 18_000; t++) {
            sim.keep("globex", 8, BACKEND);
            sim.keep("slow", Integer.MAX_VALUE, nanos);
            mostHeld = Math.max(mostHeld, sim.running("slow"));
            sim.tick();
            if (t >= 3_000) lowest = Math.min(lowest, sim.limit()); // after the first 30 s
        }
        return new Result(sim.completed, lowest, mostHeld);
    }

    static final String GUESTS = """
            plans:
              big:
                limits: [ { capacity: 100000, refill: 100000, period: 1s } ]
            routes:
              - { name: reports, paths: ["/reports/*"], group: reports }
            groups:
              reports: { adaptive: { initial: 8, min: 8, max: 8 } }   # pinned low: a slowdown's limit
            tenants:
              default-plan: big
              unknown: default
              assignments: { acme: big }
            %s
            """;

    /**
     * Made-up tenant ids from many addresses each take a slot of an adaptive group whose limit is low (a
     * slowdown's), under a guests' cap sized for a higher limit. Each id is a newcomer below its fair share, so
     * each found a free slot: the guests took their whole cap of 6 of the 8 and the assigned tenant got 2. Now
     * the guests together hold at most half the limit in force (what one tenant alone may), and the assigned
     * tenant takes the rest but the one slot kept for a newcomer.
     */
    @Test
    void madeUpIdsUnderAGuestsCapHoldAtMostHalfAnAdaptiveGroupsLimit() {
        Sim sim = new Sim(GUESTS.formatted("  guests: { concurrency: { reports: 6 } }"));
        for (int i = 0; i < 64; i++) sim.send("made-up-" + i, "198.51.100." + i, BACKEND);
        assertThat(sim.limits.guestsInflight("reports")).as("half the limit of 8, below the cap of 6").isEqualTo(4);
        sim.keep("acme", Integer.MAX_VALUE, BACKEND);
        assertThat(sim.running("acme")).as("the other half but the newcomer's slot").isEqualTo(3);
    }

    /**
     * Without {@code tenants.guests.concurrency}, guests are tenants like any other for the fair shares, and
     * made-up ids are newcomers each: they take the whole adaptive group, as they take a fixed group's
     * {@code max-inflight}. A pin of the documented need for the guests' cap where ids can be made up.
     */
    @Test
    void withoutAGuestsCapMadeUpIdsCanTakeTheWholeAdaptiveGroup() {
        Sim sim = new Sim(GUESTS.formatted(""));
        for (int i = 0; i < 64; i++) sim.send("made-up-" + i, "198.51.100." + i, BACKEND);
        assertThat(sim.limits.inflight("reports")).isEqualTo(8);
        assertThat(sim.send("acme", BACKEND)).isFalse();
    }

    /** Within the guests' half, one client address sending under many made-up ids gets its fair share of it. */
    @Test
    void oneAddressRotatingIdsGetsOnlyItsShareOfTheGuestsHalf() {
        Sim sim = new Sim(GUESTS.formatted("  guests: { concurrency: { reports: 6 } }"));
        for (int i = 0; i < 64; i++) sim.send("made-up-" + i, "198.51.100.7", BACKEND);
        assertThat(sim.limits.inflight("reports")).as("alone, an address holds half of the guests' 4").isEqualTo(2);
        assertThat(sim.send("a-real-guest", "203.0.113.9", BACKEND)).as("another guest still finds a slot").isTrue();
    }
}

package io.quotagate.filter.internal.metrics;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quotagate.filter.internal.admission.ConcurrencyLimits;
import io.quotagate.filter.internal.admission.Decisions;
import io.quotagate.filter.internal.metrics.RequestStatistics.Tuning;
import io.quotagate.filter.metrics.QuotaMeterBinder;
import io.quotagate.filter.metrics.StatisticsView.Cell;
import io.quotagate.filter.metrics.StatisticsView.Result;
import io.quotagate.filter.metrics.StatisticsView;
import io.quotagate.filter.status.ConcurrencyListener;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.filter.testing.Race;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which tenants keep their own {@code tenant} tag when ids are made up by the hundred thousand, when
 * heavy tenants arrive late, go quiet, or send as much as a holder; and that the cells and meters
 * stay bounded through every change of names. The sampling is seeded, so every run is the same run.
 */
class RequestStatisticsNamingTest {
    private static final int FLOOD = 150_000;
    private static final Plans PLANS = PlansFile.parse("naming.yml", """
            plans: { free: { limits: [ { capacity: 10, refill: 10, period: 1s } ], concurrency: { reports: 2 } } }
            routes: [ { name: reports, paths: ["/reports/*"], group: reports } ]
            groups: { reports: { max-inflight: 10 } }
            """);

    /** Statistics with the default tuning, but sampling from a seeded random source. */
    private static RequestStatistics statistics(int topTenants, String... assigned) {
        SplittableRandom random = new SplittableRandom(20_261_130L);
        Tuning defaults = Tuning.defaults(topTenants);
        return new RequestStatistics(topTenants, List.of(assigned), new Tuning(defaults.sampleEvery(),
                () -> random.nextInt(defaults.sampleEvery()) == 0, defaults.tracked(), defaults.epoch()));
    }

    /** The statistics, bound to a fresh registry as the filter's binder binds them. */
    private record Bound(RequestStatistics statistics, SimpleMeterRegistry registry, List<Cell> removed) {
        static Bound of(RequestStatistics statistics) {
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            ConcurrencyLimits limits = new ConcurrencyLimits(PLANS, new ManualClock(), ConcurrencyListener.NONE);
            new QuotaMeterBinder(RequestStatisticsTest.source(statistics,
                    new Decisions(PLANS, BucketStore.local(10, new ManualClock())), limits)).bindTo(registry);
            List<Cell> removed = new CopyOnWriteArrayList<>();
            statistics.onCell(cell -> { }, removed::add);
            return new Bound(statistics, registry, removed);
        }

        /** One allowed request (a guest unless {@code known}). */
        void allowed(String tenant, boolean known) {
            statistics.record(tenant, known, "free", "reports", Result.ALLOWED, null);
        }

        void rejected(String tenant) {
            statistics.record(tenant, false, "free", "reports", Result.REJECTED, "tenant_rate");
        }

        boolean isNamed(String tenant) {
            return statistics.tagOf(tenant).equals(tenant);
        }

        Set<String> requestTags() {
            return registry.find(QuotaMeterBinder.REQUESTS).functionCounters().stream()
                    .map(c -> c.getId().getTag("tenant")).collect(Collectors.toSet());
        }

        /**
         * The bound, at this moment: named tenants, cells (two per tag here: allowed, and rejected
         * for tenant_rate) and meters (those cells' counters; per tag one in-flight gauge).
         */
        void assertBounded() {
            int top = statistics.topTenants();
            assertThat(statistics.namedTenants()).hasSizeLessThanOrEqualTo(top);
            assertThat(statistics.cells().stream().map(Cell::tenant).distinct().count()).isLessThanOrEqualTo(top + 1);
            assertThat(statistics.size()).isLessThanOrEqualTo(2 * (top + 1));
            assertThat(registry.find(QuotaMeterBinder.REQUESTS).meters()).hasSameSizeAs(statistics.cells());
            assertThat(registry.find(QuotaMeterBinder.INFLIGHT).meters()).hasSizeLessThanOrEqualTo(top + 1);
            assertThat(requestTags()).isSubsetOf(tagsInForce());
        }

        private Set<String> tagsInForce() {
            Set<String> tags = new java.util.HashSet<>(statistics.namedTenants());
            tags.add(RequestStatistics.OTHER);
            return tags;
        }

        long countOf(String tenant) {
            return statistics.cells().stream().filter(c -> c.tenant().equals(tenant)).mapToLong(Cell::count).sum();
        }
    }

    @Test
    void aFloodOfMadeUpIdsTakesNoNameAndAHeavyGuestArrivingDuringItGetsItsOwnWithinAFewHundredRequests() {
        Bound b = Bound.of(statistics(10, "acme", "globex"));
        long heavyRequests = 0;
        long heavyNamedAfter = -1;
        for (int i = 0; i < FLOOD; i++) {
            String spoofed = "spoofed-" + i; // three requests each, as a tenant-id rotating attacker sends
            b.allowed(spoofed, false);
            b.allowed(spoofed, false);
            b.rejected(spoofed);
            if (i % 10 == 0) {
                b.allowed("acme", true);
                b.allowed("globex", true);
            }
            if (i >= FLOOD / 2) { // halfway through the flood a real heavy guest arrives: a quarter of the traffic
                b.allowed("bigco", false);
                heavyRequests++;
                if (heavyNamedAfter < 0 && b.isNamed("bigco")) heavyNamedAfter = heavyRequests;
            }
            if (i % 1_000 == 0) b.assertBounded();
        }

        // 16 sampled requests (128 on average at 1 in 8), plus a halving if an epoch ends meanwhile
        assertThat(heavyNamedAfter).as("bigco's requests until it had its own tag").isBetween(1L, 500L);
        // from then on every one of its requests is counted under its name
        assertThat(b.countOf("bigco")).isEqualTo(heavyRequests - heavyNamedAfter + 1);
        assertThat(b.statistics().namedTenants()).containsExactlyInAnyOrder("acme", "globex", "bigco");
        assertThat(b.removed()).as("no name ever changed hands").isEmpty();
        assertThat(b.countOf("acme")).isEqualTo(FLOOD / 10);
        assertThat(b.countOf(RequestStatistics.OTHER)).isEqualTo(3L * FLOOD + heavyNamedAfter - 1);
        b.assertBounded();
        assertThat(b.requestTags()).containsExactlyInAnyOrder("acme", "globex", "bigco", RequestStatistics.OTHER);
    }

    @Test
    void idsSampledOnceInAnEpochStayOutOfTheHeavyHitterTableAndASecondSampleLetsAnIdIn() {
        // every request sampled, a table large enough for every id: only the doorkeeper keeps them out
        RequestStatistics s = new RequestStatistics(4, List.of(), new Tuning(1, () -> true, 8_192, 65_536));
        for (int i = 0; i < 4_000; i++) guestRequest(s, "spoofed-" + i);
        assertThat(s.candidateCount()).as("ids in the table after 4,000 ids sampled once each (false positives)")
                .isLessThan(40);

        int before = s.candidateCount();
        guestRequest(s, "bigco");
        guestRequest(s, "bigco");
        assertThat(s.candidateCount()).as("bigco's second sample").isEqualTo(before + 1);
        assertThat(s.candidateLowerBound("bigco")).as("its first sample only opened the door").isEqualTo(1);
        assertThat(s.tagOf("bigco")).isEqualTo(RequestStatistics.OTHER);
    }

    @Test
    void anIdInTheHeavyHitterTableKeepsEverySampleWhenANewEpochClearsTheDoor() {
        RequestStatistics s = new RequestStatistics(4, List.of(), new Tuning(1, () -> true, 64, 16));
        for (int i = 0; i < 4; i++) guestRequest(s, "bigco");
        assertThat(s.candidateLowerBound("bigco")).isEqualTo(3);
        for (int i = 0; i < 12; i++) guestRequest(s, "once-" + i);
        // the 16th sample ended the epoch: counts halved, the door cleared but for the table's ids

        guestRequest(s, "bigco");
        assertThat(s.candidateLowerBound("bigco")).as("3 halved to 1, plus this sample").isEqualTo(2);
    }

    /** One allowed request of a guest (an unknown tenant) on the free plan's reports route. */
    private static void guestRequest(RequestStatistics s, String tenant) {
        s.record(tenant, false, "free", "reports", StatisticsView.Result.ALLOWED, null);
    }

    @Test
    void aHeavyGuestNamedBeforeAFloodKeepsItsNameThroughItAndTheFloodNeverTakesTheFreeSlots() {
        Bound b = Bound.of(statistics(4, "acme"));
        for (int i = 0; i < 1_000; i++) b.allowed("bigco", false);
        assertThat(b.isNamed("bigco")).isTrue();
        long before = b.countOf("bigco");

        for (int i = 0; i < FLOOD; i++) {
            String spoofed = "spoofed-" + i;
            b.allowed(spoofed, false);
            b.allowed(spoofed, false);
            b.rejected(spoofed);
            b.allowed("bigco", false);
            if (i % 1_000 == 0) b.assertBounded();
        }

        assertThat(b.statistics().namedTenants()).as("two slots stay free: no made-up id earns one")
                .containsExactlyInAnyOrder("acme", "bigco");
        assertThat(b.countOf("bigco")).isEqualTo(before + FLOOD);
        assertThat(b.removed()).isEmpty();
        b.assertBounded();
    }

    @Test
    void aGuestThatGoesQuietLosesItsNameToAHeavierOneAndItsMetersLeaveTheRegistry() {
        RequestStatistics s = statistics(1);
        Bound b = Bound.of(s);
        while (!b.isNamed("early")) b.allowed("early", false); // its last request here is its first named one
        for (int i = 0; i < 2_000; i++) b.allowed("early", false);
        assertThat(b.requestTags()).contains("early");
        assertThat(b.registry().find(QuotaMeterBinder.INFLIGHT).tag("tenant", "early").gauge()).isNotNull();

        // early goes quiet; late sends, with a trickle of made-up ids around it
        Tuning tuning = Tuning.defaults(1);
        long bound = 3L * tuning.epoch() * tuning.sampleEvery(); // the one whole epoch early keeps its name, and the decay
        long lateRequests = 0;
        while (!b.isNamed("late") && lateRequests < bound) {
            b.allowed("late", false);
            b.allowed("spoofed-" + lateRequests, false);
            lateRequests++;
        }

        assertThat(b.isNamed("late")).as("late named within %d of its requests", bound).isTrue();
        assertThat(b.isNamed("early")).isFalse();
        assertThat(b.removed()).extracting(Cell::tenant).containsOnly("early");
        assertThat(b.removed()).as("its one cell, with every request it had under its name")
                .extracting(Cell::count).containsExactly(2_001L);
        assertThat(b.requestTags()).doesNotContain("early").contains("late");
        assertThat(b.registry().find(QuotaMeterBinder.INFLIGHT).tag("tenant", "early").gauges()).isEmpty();
        assertThat(b.registry().find(QuotaMeterBinder.INFLIGHT).tag("tenant", "late").gauge()).isNotNull();
        b.allowed("early", false);
        assertThat(s.tagOf("early")).as("early's requests now count as other").isEqualTo(RequestStatistics.OTHER);
        b.assertBounded();
    }

    @Test
    void twoTenantsOfEqualTrafficDoNotTakeTurnsWithTheName() {
        Bound b = Bound.of(statistics(1));
        for (int i = 0; i < 1_000; i++) b.allowed("first", false);
        assertThat(b.isNamed("first")).isTrue();

        for (int i = 0; i < 1_000_000; i++) {
            b.allowed("first", false);
            b.allowed("second", false);
            if (i % 10_000 == 0) assertThat(b.statistics().namedTenants()).containsExactly("first");
        }

        assertThat(b.removed()).as("the name never moved").isEmpty();
        assertThat(b.statistics().namedTenants()).containsExactly("first");
    }

    @Test
    void aTenantWithClearlyMoreTrafficThanTheHolderTakesTheNameAndOneWithSomewhatMoreDoesNot() {
        Bound b = Bound.of(statistics(1));
        for (int i = 0; i < 1_000; i++) b.allowed("holder", false);
        for (int i = 0; i < 300_000; i++) { // 3 requests of "somewhat" for every 2 of the holder
            b.allowed("holder", false);
            b.allowed("somewhat", false);
            if (i % 2 == 0) b.allowed("somewhat", false);
        }
        assertThat(b.statistics().namedTenants()).containsExactly("holder");

        long clearly = 0;
        while (!b.isNamed("clearly") && clearly < 100_000) { // 4 of "clearly" for every 1 of the holder
            b.allowed("holder", false);
            for (int k = 0; k < 4; k++) b.allowed("clearly", false);
            clearly += 4;
        }
        assertThat(b.statistics().namedTenants()).containsExactly("clearly");
        assertThat(b.removed()).extracting(Cell::tenant).containsOnly("holder");
        b.assertBounded();
    }

    @Test
    void aGuestNeverTakesAKnownTenantsNameHoweverQuietTheKnownTenantIs() {
        Bound b = Bound.of(statistics(1, "acme"));
        for (int i = 0; i < 500_000; i++) b.allowed("bigco", false);

        assertThat(b.statistics().namedTenants()).containsExactly("acme");
        assertThat(b.countOf(RequestStatistics.OTHER)).isEqualTo(500_000);
    }

    @Test
    void aKnownTenantTakesAGuestsNameAtItsFirstRequest() {
        Bound b = Bound.of(statistics(1));
        for (int i = 0; i < 1_000; i++) b.allowed("bigco", false);
        assertThat(b.isNamed("bigco")).isTrue();

        b.allowed("customer", true);

        assertThat(b.statistics().namedTenants()).containsExactly("customer");
        assertThat(b.countOf("customer")).isEqualTo(1);
        assertThat(b.requestTags()).containsExactlyInAnyOrder("customer", RequestStatistics.OTHER);
        // and bigco, however heavy, cannot take it back
        for (int i = 0; i < 200_000; i++) b.allowed("bigco", false);
        assertThat(b.statistics().namedTenants()).containsExactly("customer");
    }

    @Test
    void aKnownTenantBeyondTheSlotsTakesTheNameOfAQuietKnownOneByTraffic() {
        Bound b = Bound.of(statistics(2, "acme", "globex"));
        for (int i = 0; i < 100_000; i++) {
            b.allowed("acme", true); // globex is quiet
            if (i % 2 == 0) b.allowed("initech", true);
        }

        assertThat(b.statistics().namedTenants()).containsExactlyInAnyOrder("acme", "initech");
        b.assertBounded();
    }

    @Test
    void aGuestNamedWhileUnknownBecomesKnownAndThenNoGuestTakesItsName() {
        Bound b = Bound.of(statistics(1));
        for (int i = 0; i < 1_000; i++) b.allowed("newco", false);
        assertThat(b.isNamed("newco")).isTrue();
        b.allowed("newco", true); // the directory has learnt it

        long challenger = 0;
        for (int i = 0; i < 200_000; i++) {
            b.allowed("newco", true);
            for (int k = 0; k < 10; k++) b.allowed("challenger", false);
            challenger += 10;
        }
        assertThat(b.statistics().namedTenants()).containsExactly("newco");
        assertThat(challenger).isPositive();
    }

    /**
     * Threads record while heavy tenants come and go, so names change hands during the race. A
     * request is counted in exactly one cell, live or removed: the removed cells handed to the
     * listener, read after the threads end, hold what the live cells miss (the class comment, step 3).
     */
    @Test
    void racingThreadsLoseNoRequestAcrossNameChanges() throws Exception {
        // short epochs and a small table, so that names change often
        RequestStatistics s = new RequestStatistics(2, List.of(), new Tuning(8,
                () -> ThreadLocalRandom.current().nextInt(8) == 0, 16, 64));
        List<Cell> created = new CopyOnWriteArrayList<>();
        List<Cell> removed = new CopyOnWriteArrayList<>();
        s.onCell(created::add, removed::add);
        int threads = 4;
        int perThread = 200_000;
        AtomicLong allowed = new AtomicLong();
        List<String> violations = new CopyOnWriteArrayList<>();
        Race.run(threads, t -> {
            long mine = 0;
            for (int i = 0; i < perThread; i++) {
                // a heavy guest per thread and phase, 20,000 requests long, among made-up ids
                String tenant = i % 2 == 0 ? "heavy-" + t + "-" + (i / 20_000) : "spoofed-" + t + "-" + i;
                boolean ok = i % 5 != 0;
                s.record(new String(tenant), false, "free", "items", ok ? Result.ALLOWED : Result.REJECTED,
                        ok ? null : "tenant_rate");
                if (ok) mine++;
                if (i % 10_000 == 0 && s.namedTenants().size() > 2) violations.add("named: " + s.namedTenants());
            }
            allowed.addAndGet(mine);
        });

        assertThat(violations).isEmpty();
        assertThat(removed).as("names changed hands during the race").isNotEmpty();
        long live = s.cells().stream().filter(c -> c.result() == Result.ALLOWED).mapToLong(Cell::count).sum();
        long gone = removed.stream().filter(c -> c.result() == Result.ALLOWED).mapToLong(Cell::count).sum();
        assertThat(live + gone).isEqualTo(allowed.get());
        long all = s.cells().stream().mapToLong(Cell::count).sum() + removed.stream().mapToLong(Cell::count).sum();
        assertThat(all).isEqualTo((long) threads * perThread);
        // every live cell belongs to a tenant named now or to "other"; none was made twice
        Set<String> named = s.namedTenants();
        assertThat(s.cells()).allSatisfy(c -> assertThat(named.contains(c.tenant()) || c.tenant().equals("other"))
                .as(c.tenant()).isTrue());
        assertThat(s.cells()).extracting(c -> c.tenant() + "/" + c.result()).doesNotHaveDuplicates();
        List<Cell> expectedLive = new ArrayList<>(created);
        expectedLive.removeAll(removed);
        assertThat(s.cells()).containsExactlyInAnyOrderElementsOf(expectedLive);
    }
}

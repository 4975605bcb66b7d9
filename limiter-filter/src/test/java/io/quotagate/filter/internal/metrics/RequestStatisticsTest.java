package io.quotagate.filter.internal.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quotagate.filter.internal.admission.Acquisition;
import io.quotagate.filter.internal.admission.ConcurrencyLimits;
import io.quotagate.filter.internal.admission.Decisions;
import io.quotagate.filter.metrics.QuotaMeterBinder;
import io.quotagate.filter.metrics.QuotaSource;
import io.quotagate.filter.metrics.StatisticsView.Result;
import io.quotagate.filter.metrics.StatisticsView;
import io.quotagate.filter.status.ConcurrencyListener;
import io.quotagate.filter.status.ConcurrencyView;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.filter.testing.Race;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

class RequestStatisticsTest {

    /** A QuotaSource over these parts (concurrency limits from {@code plans}, or none). */
    static QuotaSource source(RequestStatistics statistics, Decisions admission, ConcurrencyLimits limits) {
        ConcurrencyLimits l = limits != null ? limits
                : new ConcurrencyLimits(PlansFile.parse("none.yml", "plans: { p: { limits: [ { capacity: 1, refill: 1, period: 1s } ] } }"),
                new ManualClock(), ConcurrencyListener.NONE);
        return new QuotaSource() {
            public RequestStatistics statistics() {
                return statistics;
            }

            public long globalQuotaCapacity() {
                return admission.globalCapacity();
            }

            public long globalQuotaAvailable() {
                return admission.globalAvailableTokens();
            }

            public long shadowRejections(io.quotagate.filter.status.Reason reason) {
                return admission.shadowRejections(reason);
            }

            public ConcurrencyView concurrency() {
                return l;
            }
        };
    }

    @Test
    void inflightGaugesPerGroupAndTenantAndAQueueWaitTimer() {
        var plans = PlansFile.parse("c.yml", """
                plans: { free: { limits: [ { capacity: 100, refill: 100, period: 1s } ], concurrency: { reports: 5 } } }
                routes: [ { name: reports, paths: ["/reports/*"], group: reports } ]
                groups: { reports: { max-inflight: 10 } }
                """);
        RequestStatistics s = new RequestStatistics(1, List.of("acme"));
        ConcurrencyLimits limits = new ConcurrencyLimits(plans, new ManualClock(), s::queueWait);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new QuotaMeterBinder(source(s, new Decisions(plans, BucketStore.local(10, new ManualClock())), limits)).bindTo(registry);
        s.record("acme", "free", "reports", Result.ALLOWED, null);

        var acme1 = (Acquisition.Granted) limits.acquire("acme", "free", "reports");
        limits.acquire("acme", "free", "reports");
        limits.acquire("zed", "free", "reports");
        assertThat(registry.get(QuotaMeterBinder.INFLIGHT).tags("group", "reports", "tenant", "acme").gauge().value()).isEqualTo(2);
        assertThat(registry.get(QuotaMeterBinder.INFLIGHT).tags("group", "reports", "tenant", "other").gauge().value()).isEqualTo(1);
        assertThat(registry.get(QuotaMeterBinder.QUEUED).tags("group", "reports").gauge().value()).isZero();
        acme1.permit().release();
        assertThat(registry.get(QuotaMeterBinder.INFLIGHT).tags("group", "reports", "tenant", "acme").gauge().value()).isEqualTo(1);

        s.queueWait("reports", "acme", 2_000_000, true);
        s.queueWait("reports", "acme", 4_000_000, false);
        assertThat(registry.get(QuotaMeterBinder.QUEUE_WAIT).tags("group", "reports", "outcome", "admitted").timer().count()).isEqualTo(1);
        assertThat(registry.get(QuotaMeterBinder.QUEUE_WAIT).tags("group", "reports", "outcome", "timed_out").timer()
                .totalTime(java.util.concurrent.TimeUnit.MILLISECONDS)).isEqualTo(4.0);
    }

    @Test
    void aNamedTenantsRequestsLandInTheCellOfTheirOwnTagsWhateverTheOrderOrTheStringInstances() {
        RequestStatistics s = new RequestStatistics(1, List.of("acme"));
        String[][] requests = {{"items", null}, {"reports", null}, {"items", "tenant_rate"}, {"items", null},
                {new String("items"), null}, {"reports", new String("tenant_rate")}};
        for (int round = 0; round < 3; round++) {
            for (String[] r : requests) {
                Result outcome = r[1] == null ? Result.ALLOWED : Result.REJECTED;
                s.record(new String("acme"), true, "pro", r[0], outcome, r[1]);
            }
        }
        s.record("acme", true, new String("pro"), "items", Result.ALLOWED, null);
        assertThat(s.cells()).extracting(c -> c.tenant() + " " + c.plan() + " " + c.route() + " " + c.result()
                        + " " + c.reason() + " " + c.count())
                .containsExactlyInAnyOrder("acme pro items ALLOWED none 10", "acme pro reports ALLOWED none 3",
                        "acme pro items REJECTED tenant_rate 3", "acme pro reports REJECTED tenant_rate 3");
    }

    @Test
    void assignedTenantsAreNamedFromTheStartAndKnownTenantsTakeTheFreeSlotsAtTheirFirstRequest() {
        RequestStatistics s = new RequestStatistics(3, List.of("acme", "globex"));
        assertThat(s.tagOf("acme")).isEqualTo("acme");
        assertThat(s.tagOf("globex")).as("named before its first request").isEqualTo("globex");
        s.record("first", true, "pro", "items", Result.ALLOWED, null);
        s.record("second", true, "pro", "items", Result.ALLOWED, null);
        assertThat(s.tagOf("first")).isEqualTo("first");
        assertThat(s.tagOf("second")).as("no slot left: it would need clearly more traffic than a holder")
                .isEqualTo(RequestStatistics.OTHER);
        assertThat(s.tagOf("never-seen")).as("tagOf names nobody").isEqualTo(RequestStatistics.OTHER);
        assertThat(s.tagOf(null)).isEqualTo(RequestStatistics.NONE);
        assertThat(s.tagOf(RequestStatistics.ANONYMOUS)).isEqualTo(RequestStatistics.ANONYMOUS);
        assertThat(s.tagOf(new String("anonymous"))).as("a tenant called anonymous").isEqualTo(RequestStatistics.OTHER);
    }

    @Test
    void aGuestsFirstRequestsAreOtherEvenWhileSlotsAreFree() {
        RequestStatistics s = new RequestStatistics(3, List.of());
        for (int i = 0; i < 15; i++) s.record("guest", false, "pro", "items", Result.ALLOWED, null);
        assertThat(s.tagOf("guest")).as("fewer than 16 requests can never earn a name").isEqualTo(RequestStatistics.OTHER);
        assertThat(s.cells()).extracting(StatisticsView.Cell::tenant).containsOnly(RequestStatistics.OTHER);
    }

    @Test
    void countsByAllTags() {
        RequestStatistics s = new RequestStatistics(10, List.of());
        for (int i = 0; i < 5; i++) s.record("acme", "pro", "items", Result.ALLOWED, null);
        s.record("acme", "pro", "items", Result.REJECTED, "tenant_rate");
        s.record(null, null, "items", Result.REJECTED, "missing_tenant");
        assertThat(s.cells()).extracting(c -> c.tenant() + "/" + c.plan() + "/" + c.route() + "/" + c.result().tag()
                        + "/" + c.reason() + "=" + c.count())
                .containsExactlyInAnyOrder("acme/pro/items/allowed/none=5", "acme/pro/items/rejected/tenant_rate=1",
                        "none/none/items/rejected/missing_tenant=1");
    }

    @Test
    void threadsCountingIntoCellsTheyCreateTogetherLoseNoRequestAndMakeEachCellOnce() throws Exception {
        RequestStatistics s = new RequestStatistics(100, List.of()); // room for every tenant: no race for a name
        List<StatisticsView.Cell> announced = new java.util.concurrent.CopyOnWriteArrayList<>();
        s.onCell(announced::add);
        int threads = 4;
        int perThread = 50_000;
        Race.run(threads, t -> {
            for (int i = 0; i < perThread; i++) {
                // fresh strings, as a request's header gives: equal tags, never the same instance
                String tenant = new String("tenant-" + (i % 60));
                boolean allowed = i % 3 != 0;
                s.record(tenant, "pro", "route-" + (i % 7), allowed ? Result.ALLOWED : Result.REJECTED,
                        allowed ? null : "tenant_rate");
            }
        });

        assertThat(s.cells().stream().mapToLong(StatisticsView.Cell::count).sum()).isEqualTo((long) threads * perThread);
        assertThat(s.cells()).extracting(c -> c.tenant() + "/" + c.route() + "/" + c.result()).doesNotHaveDuplicates();
        // every cell holds exactly its requests (each tenant id has one outcome: i % 3 follows i % 60)
        assertThat(s.cells()).hasSize(60 * 7);
        for (StatisticsView.Cell c : s.cells()) {
            int tenant = Integer.parseInt(c.tenant().substring("tenant-".length()));
            int route = Integer.parseInt(c.route().substring("route-".length()));
            long expected = java.util.stream.IntStream.range(0, perThread)
                    .filter(i -> i % 60 == tenant && i % 7 == route).count();
            assertThat(c.count()).as("%s/%s", c.tenant(), c.route()).isEqualTo(threads * expected);
        }
        assertThat(announced).hasSameSizeAs(s.cells());
    }

    @Test
    void tenantsRacingForTheLastNamedSlotsGetExactlyTopNAndANamedTenantNeverLosesItsName() throws Exception {
        RequestStatistics s = new RequestStatistics(50, List.of());
        int threads = 4;
        int perThread = 40_000;
        Race.run(threads, t -> {
            for (int i = 0; i < perThread; i++) {
                s.record(new String("tenant-" + ((i + t * 17) % 200)), "pro", "items", Result.ALLOWED, null);
            }
        });

        List<StatisticsView.Cell> named = s.cells().stream().filter(c -> !c.tenant().equals(RequestStatistics.OTHER)).toList();
        assertThat(named).hasSize(50);
        // each of the 200 tenants sent perThread / 200 requests per thread; a named one has all of its own
        assertThat(named).allSatisfy(c -> assertThat(c.count()).as(c.tenant()).isEqualTo((long) threads * perThread / 200));
        assertThat(s.cells().stream().mapToLong(StatisticsView.Cell::count).sum()).isEqualTo((long) threads * perThread);
    }

    @Test
    void oneHundredThousandTenantsGiveABoundedNumberOfMeterSeries() {
        RequestStatistics s = new RequestStatistics(20, List.of());
        Decisions admission = new Decisions(PlansFile.parse("p.yml", """
                global: { limits: [ { capacity: 10, refill: 10, period: 1s } ] }
                plans: { free: { limits: [ { capacity: 10, refill: 10, period: 1s } ] } }
                """), BucketStore.local(10, new ManualClock()));
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new QuotaMeterBinder(source(s, admission, null)).bindTo(registry);

        for (int i = 0; i < 100_000; i++) {
            String tenant = "tenant-" + i;
            s.record(tenant, "free", "items", Result.ALLOWED, null);
            s.record(tenant, "free", "items", Result.REJECTED, "tenant_rate");
        }
        List<FunctionCounter> series = registry.find(QuotaMeterBinder.REQUESTS).functionCounters().stream().toList();
        Set<String> tenants = series.stream().map(c -> c.getId().getTag("tenant")).collect(Collectors.toSet());
        assertThat(tenants).hasSize(21).contains(RequestStatistics.OTHER, "tenant-0", "tenant-19");
        assertThat(series).hasSize(42);
        double total = series.stream().mapToDouble(FunctionCounter::count).sum();
        assertThat(total).as("nothing lost in the 'other' bucket").isEqualTo(200_000);
        FunctionCounter other = registry.find(QuotaMeterBinder.REQUESTS)
                .tags("tenant", "other", "outcome", "rejected", "reason", "tenant_rate").functionCounter();
        assertThat(other.count()).isEqualTo(100_000 - 20);
        assertThat(registry.find(QuotaMeterBinder.REQUESTS).functionCounter().getId().getDescription()).isNotBlank();
    }

    @Test
    void globalQuotaGaugesReadTheBucket() {
        RequestStatistics s = new RequestStatistics(1, List.of());
        ManualClock clock = new ManualClock();
        Decisions admission = new Decisions(PlansFile.parse("p.yml", """
                global: { limits: [ { capacity: 100, refill: 100, period: 1m }, { capacity: 500, refill: 500, period: 1h } ] }
                plans: { free: { limits: [ { capacity: 10, refill: 10, period: 1s } ] } }
                """), BucketStore.local(10, clock));
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new QuotaMeterBinder(source(s, admission, null)).bindTo(registry);
        admission.admit("acme", "free", 7);
        assertThat(registry.get(QuotaMeterBinder.GLOBAL_CAPACITY).gauge().value()).isEqualTo(100);
        assertThat(registry.get(QuotaMeterBinder.GLOBAL_AVAILABLE).gauge().value()).isEqualTo(93);
    }
}

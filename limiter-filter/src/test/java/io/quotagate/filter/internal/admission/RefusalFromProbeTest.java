package io.quotagate.filter.internal.admission;

import io.quotagate.filter.internal.route.Route;
import io.quotagate.filter.status.BandwidthStatus;
import io.quotagate.filter.status.ConcurrencyListener;
import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.store.BucketLimits;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.store.QuotaBucket;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import io.quotagate.tenant.TenantDirectory;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One decision, one value: a refusal's Retry-After and published fields come from the store operation that
 * refused it (its probe), so the refused request looks its bucket up once, and what other requests do to the
 * bucket afterwards does not change what its answer says.
 */
class RefusalFromProbeTest {
    private final ManualClock clock = new ManualClock();
    /** Counts the lookups of tenant buckets. */
    private final AtomicInteger lookups = new AtomicInteger();
    private final BucketStore local = BucketStore.local(100, clock);
    private final BucketStore store = new BucketStore() {
        @Override
        public QuotaBucket bucket(BucketKind kind, String id, BucketLimits limits) {
            if (kind == BucketKind.TENANT) lookups.incrementAndGet();
            return local.bucket(kind, id, limits);
        }
    };
    private final Plans plans = PlansFile.parse("t.yml", """
            plans:
              open:
                publish: true
                limits:
                  - { name: burst, capacity: 5, refill: 1, period: 1s }
                  - { name: daily, capacity: 100, refill: 100, period: 1d }
              hidden:
                limits: [ { capacity: 5, refill: 1, period: 1s } ]
            tenants: { default-plan: hidden, assignments: { acme: open, globex: hidden } }
            """);
    private final Gate gate = new Gate(store, new ConcurrencyLimits(plans, clock, ConcurrencyListener.NONE),
            new FailureLog(System.getLogger("test"), clock, "directory"));
    private final Policy policy = gate.policy(plans, TenantDirectory.of(plans.tenants().assignments()), null);

    private Outcome decide(String tenant) {
        return gate.decide(policy, Route.DEFAULT, tenant, "192.0.2.1");
    }

    @Test
    void aRefusalOfAPublishingPlanLooksItsBucketUpOnceAndPublishesWhatItsOwnTakeFound() {
        for (int i = 0; i < 5; i++) ((Ticket) decide("acme")).run();
        lookups.set(0);
        Outcome.Refused refused = (Outcome.Refused) decide("acme");
        assertThat(lookups.get()).as("one lookup: the take; the fields are not read again").isEqualTo(1);
        assertThat(refused.status()).isEqualTo(429);
        assertThat(refused.retryAfterSeconds()).isEqualTo(1);
        assertThat(refused.limits()).extracting(BandwidthStatus::name, BandwidthStatus::remaining)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("burst", 0L),
                        org.assertj.core.groups.Tuple.tuple("daily", 95L));
        assertThat(refused.limits()).allSatisfy(s -> assertThat(s.partitionKey()).isEqualTo("acme"));

        // another request's units come back meanwhile: the refusal still says what its own take found
        local.bucket(BucketKind.TENANT, "acme", limitsOf("acme")).refund(3);
        assertThat(refused.limits().get(0).remaining()).isZero();
    }

    @Test
    void anAdmittedRequestPublishesWhatItsOwnTakeLeftAndItsGiveBack() {
        Ticket first = (Ticket) decide("acme");
        assertThat(first.published()).extracting(BandwidthStatus::remaining).containsExactly(4L, 99L);
        ((Ticket) decide("acme")).run(); // another request: the first one's fields do not move
        assertThat(first.published()).extracting(BandwidthStatus::remaining).containsExactly(4L, 99L);
        gate.release(first); // not run: its unit goes back, and its fields say so (capped at capacity)
        assertThat(first.published()).extracting(BandwidthStatus::remaining).containsExactly(5L, 100L);
    }

    @Test
    void aHiddenPlanPublishesNothingAndLooksItsBucketUpOnce() {
        for (int i = 0; i < 5; i++) ((Ticket) decide("globex")).run();
        lookups.set(0);
        Outcome.Refused refused = (Outcome.Refused) decide("globex");
        assertThat(lookups.get()).isEqualTo(1);
        assertThat(refused.limits()).isEmpty();
        clock.advance(Duration.ofSeconds(1));
        assertThat(decide("globex")).isInstanceOf(Ticket.class);
    }

    @Test
    void aPublishedCalendarQuotaIsWhatTheRequestsOwnStoreOperationReplied() {
        AtomicInteger sideReads = new AtomicInteger();
        io.quotagate.filter.store.QuotaCounters counters = local.quotaCounters().orElseThrow();
        io.quotagate.filter.store.QuotaCounters counting = new io.quotagate.filter.store.QuotaCounters() {
            @Override
            public long tryAdd(String key, long units, long limit, long nowMillis, long expiresAtMillis) {
                return counters.tryAdd(key, units, limit, nowMillis, expiresAtMillis);
            }

            @Override
            public void add(String key, long units, long nowMillis, long expiresAtMillis) {
                counters.add(key, units, nowMillis, expiresAtMillis);
            }

            @Override
            public long used(String key) {
                return counters.used(key);
            }

            @Override
            public long notedUsed(String key) {
                sideReads.incrementAndGet();
                return counters.notedUsed(key);
            }
        };
        BucketStore withQuotas = new BucketStore() {
            @Override
            public QuotaBucket bucket(BucketKind kind, String id, BucketLimits limits) {
                return local.bucket(kind, id, limits);
            }

            @Override
            public java.util.Optional<io.quotagate.filter.store.QuotaCounters> quotaCounters() {
                return java.util.Optional.of(counting);
            }
        };
        Plans quoted = PlansFile.parse("q.yml", """
                plans:
                  open:
                    publish: true
                    limits: [ { name: burst, capacity: 5, refill: 1, period: 1s } ]
                    quotas: [ { name: daily, limit: 3, per: day } ]
                tenants: { assignments: { acme: open } }
                """);
        Gate quotaGate = new Gate(withQuotas, new ConcurrencyLimits(quoted, clock, ConcurrencyListener.NONE),
                new FailureLog(System.getLogger("test"), clock, "directory"));
        Policy quotaPolicy = quotaGate.policy(quoted, TenantDirectory.of(quoted.tenants().assignments()), null);
        String tenant = "acme";

        Ticket first = (Ticket) quotaGate.decide(quotaPolicy, Route.DEFAULT, tenant, "192.0.2.1");
        assertThat(first.published()).extracting(BandwidthStatus::name, BandwidthStatus::remaining)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("burst", 4L),
                        org.assertj.core.groups.Tuple.tuple("daily", 2L));
        ((Ticket) quotaGate.decide(quotaPolicy, Route.DEFAULT, tenant, "192.0.2.1")).run();
        assertThat(first.published()).as("another request's count does not move the first one's fields")
                .extracting(BandwidthStatus::remaining).containsExactly(4L, 2L);
        quotaGate.release(first); // not run: its unit goes back to the bucket and to the quota, and its fields say so
        assertThat(first.published()).extracting(BandwidthStatus::remaining).containsExactly(5L, 3L);
        ((Ticket) quotaGate.decide(quotaPolicy, Route.DEFAULT, tenant, "192.0.2.1")).run();
        ((Ticket) quotaGate.decide(quotaPolicy, Route.DEFAULT, tenant, "192.0.2.1")).run();
        Outcome.Refused refused = (Outcome.Refused) quotaGate.decide(quotaPolicy, Route.DEFAULT, tenant, "192.0.2.1");
        assertThat(refused.rate()).isEqualTo(io.quotagate.filter.status.Reason.QUOTA);
        assertThat(refused.limits()).extracting(BandwidthStatus::name, BandwidthStatus::remaining)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("burst", 2L),
                        org.assertj.core.groups.Tuple.tuple("daily", 0L));
        assertThat(sideReads.get()).as("no figure read from a side cache: the replies had them").isZero();
    }

    private BucketLimits limitsOf(String tenant) {
        return policy.limits.plans().get(plans.tenants().assignments().get(tenant)).limits();
    }
}

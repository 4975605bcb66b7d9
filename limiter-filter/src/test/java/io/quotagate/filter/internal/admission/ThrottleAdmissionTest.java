package io.quotagate.filter.internal.admission;

import io.quotagate.filter.internal.route.Route;
import io.quotagate.filter.status.BandwidthStatus;
import io.quotagate.filter.status.ConcurrencyListener;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import io.quotagate.tenant.TenantDirectory;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code throttle:}: a request whose units arrive within max-delay is reserved and delayed, not refused;
 * one that would wait longer is refused at once with its exact wait; a delayed request that never runs
 * gives its units back.
 */
class ThrottleAdmissionTest {
    private final ManualClock clock = new ManualClock();
    private final BucketStore store = BucketStore.local(1000, clock);
    private final Plans plans = PlansFile.parse("t.yml", """
            global:
              limits: [ { capacity: 1000, refill: 1000, period: 1s } ]
            plans:
              free:
                limits: [ { capacity: 10, refill: 10, period: 1s } ]
                throttle: { max-delay: 1s, queue: 100 }
              pro:
                limits: [ { capacity: 10, refill: 10, period: 1s } ]
              shadowed:
                limits: [ { capacity: 10, refill: 10, period: 1s } ]
                shadow: true
                throttle: { max-delay: 1s, queue: 100 }
            routes:
              - { name: slow, paths: [/slow], throttle: { max-delay: 200ms, queue: 5 } }
              - { name: other, paths: ["/**"] }
            tenants: { default-plan: pro, assignments: { acme: free, globex: pro, shady: shadowed } }
            """);
    private final Gate gate = new Gate(store, new ConcurrencyLimits(plans, clock, ConcurrencyListener.NONE),
            new FailureLog(System.getLogger("test"), clock, "directory"));
    private final Policy policy = gate.policy(plans, TenantDirectory.of(plans.tenants().assignments()), null);
    private final Route other = policy.route("GET", "/other");
    private final Route slow = policy.route("GET", "/slow");

    private Outcome decide(Route route, String tenant) {
        return gate.decide(policy, route, tenant, "192.0.2.1");
    }

    /** The units in the tenant's bucket of 10 a second (negative in debt), from the time it needs to be full. */
    private long available(Policy p, String tenant) {
        BandwidthStatus s = gate.tenantLimits(p, tenant).get(0);
        return s.capacity() - -Math.floorDiv(-s.nanosToFull(), TimeUnit.MILLISECONDS.toNanos(100));
    }

    /** Runs an admitted or delayed request to its end: its units stay taken. */
    private static long ran(Outcome o) {
        Ticket t = o instanceof Outcome.Delayed d ? d.ticket() : (Ticket) o;
        t.run();
        t.end();
        return t.delayNanos();
    }

    @Test
    void aTenantAtTwiceItsRateIsDelayedWithinMaxDelayAndNeverRefused() {
        long longest = 0;
        // 10 a second with a burst of 10, sent at 20 a second for 1.8 s: the last 17 short of units,
        // the last one by 0.85 s
        for (int i = 0; i < 36; i++) {
            Outcome o = decide(other, "acme");
            assertThat(o).as("request " + i).isNotInstanceOf(Outcome.Refused.class);
            if (i < 10) assertThat(o).as("within the burst: at once").isInstanceOf(Ticket.class);
            longest = Math.max(longest, ran(o));
            clock.advance(Duration.ofMillis(50));
        }
        assertThat(longest).as("the planned delays").isPositive().isLessThanOrEqualTo(TimeUnit.SECONDS.toNanos(1));
        // the reservations are real: the bucket is in debt by what the delayed requests took ahead of time
        assertThat(available(policy, "acme")).isNegative();
    }

    @Test
    void aDelayIsTheExactWaitForTheUnitsAndTheNextOneQueuesBehindIt() {
        for (int i = 0; i < 10; i++) ran(decide(other, "acme"));
        Outcome first = decide(other, "acme");
        assertThat(first).isInstanceOfSatisfying(Outcome.Delayed.class, d -> {
            assertThat(d.delayNanos()).isEqualTo(TimeUnit.MILLISECONDS.toNanos(100));
            assertThat(d.throttle().maxDelay()).isEqualTo(Duration.ofSeconds(1));
        });
        assertThat(decide(other, "acme")).isInstanceOfSatisfying(Outcome.Delayed.class,
                d -> assertThat(d.delayNanos()).as("behind the first one's reservation")
                        .isEqualTo(TimeUnit.MILLISECONDS.toNanos(200)));
    }

    @Test
    void aRequestThatWouldWaitLongerThanMaxDelayIsRefusedAtOnceWithTheExactWaitAndNothingTaken() {
        for (int i = 0; i < 20; i++) ran(decide(other, "acme")); // 10 now, 10 reserved up to 1 s ahead
        long before = available(policy, "acme");
        Outcome o = decide(other, "acme");
        assertThat(o).isInstanceOfSatisfying(Outcome.Refused.class, r -> {
            assertThat(r.status()).isEqualTo(429);
            assertThat(r.reason()).isEqualTo("tenant_rate");
            assertThat(r.retryAfterSeconds()).as("1.1 s, rounded up").isEqualTo(2);
        });
        assertThat(available(policy, "acme")).isEqualTo(before);
    }

    @Test
    void aDelayedRequestThatNeverRunsGivesItsUnitsBack() {
        for (int i = 0; i < 10; i++) ran(decide(other, "acme"));
        Outcome o = decide(other, "acme");
        assertThat(o).isInstanceOf(Outcome.Delayed.class);
        assertThat(available(policy, "acme")).isEqualTo(-1);
        gate.release(((Outcome.Delayed) o).ticket()); // dropped before it resumed
        assertThat(available(policy, "acme")).isZero();
    }

    @Test
    void aRoutesThrottleTakesPrecedenceOverThePlansAndAPlanWithoutOneRefusesAtOnce() {
        for (int i = 0; i < 10; i++) ran(decide(slow, "acme"));
        assertThat(decide(slow, "acme")).isInstanceOfSatisfying(Outcome.Delayed.class,
                d -> assertThat(d.throttle().maxDelay()).isEqualTo(Duration.ofMillis(200)));
        ran(decide(slow, "acme")); // 200 ms ahead: the route's max-delay is full
        assertThat(decide(slow, "acme")).isInstanceOf(Outcome.Refused.class);

        for (int i = 0; i < 10; i++) ran(decide(other, "globex"));
        assertThat(decide(other, "globex")).as("pro has no throttle").isInstanceOf(Outcome.Refused.class);
    }

    @Test
    void shadowModeDelaysNothing() {
        for (int i = 0; i < 15; i++) {
            assertThat(decide(other, "shady")).as("request " + i).isInstanceOf(Ticket.class);
        }
    }

    @Test
    void theGlobalQuotaAndTheTenantsBucketAreReservedTogetherAndTheDelayIsTheLongest() {
        Plans withGlobal = PlansFile.parse("t.yml", """
                global:
                  limits: [ { capacity: 5, refill: 5, period: 1s } ]
                plans:
                  free:
                    limits: [ { capacity: 10, refill: 10, period: 1s } ]
                    throttle: { max-delay: 1s, queue: 100 }
                tenants: { default-plan: free }
                """);
        Policy p = gate.policy(withGlobal, TenantDirectory.of(withGlobal.tenants().assignments()), null);
        Route r = p.route("GET", "/x");
        for (int i = 0; i < 5; i++) ran(gate.decide(p, r, "acme", "192.0.2.1"));
        assertThat(gate.decide(p, r, "acme", "192.0.2.1")).as("the global quota's 5 are used: 200 ms for one")
                .isInstanceOfSatisfying(Outcome.Delayed.class,
                        d -> assertThat(d.delayNanos()).isEqualTo(TimeUnit.MILLISECONDS.toNanos(200)));
        for (int i = 0; i < 4; i++) ran(gate.decide(p, r, "acme", "192.0.2.1"));
        Outcome refused = gate.decide(p, r, "acme", "192.0.2.1");
        assertThat(refused).as("1.2 s for the global quota").isInstanceOfSatisfying(Outcome.Refused.class,
                x -> assertThat(x.reason()).isEqualTo("global_rate"));
        assertThat(available(p, "acme")).as("10 taken, none for the refusal").isEqualTo(0);
    }
}

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

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An estimated route's refusal (its cost known only from the body) waits for the route's own bucket
 * too, not only the plan's: waiting its Retry-After is enough.
 */
class EstimatedRefusalTest {
    private final ManualClock clock = new ManualClock();
    private final BucketStore store = BucketStore.local(1000, clock);
    private final Plans plans = PlansFile.parse("t.yml", """
            plans: { pro: { limits: [ { capacity: 10, refill: 10, period: 1s } ], concurrency: { heavy: 2 } } }
            routes:
              - name: gen
                paths: ["/gen"]
                limits: [ { name: gens, capacity: 3, refill: 3, period: 1h } ]
              - name: grouped
                paths: ["/grouped"]
                group: heavy
                limits: [ { name: grouped, capacity: 3, refill: 3, period: 1h } ]
              - name: other
                paths: ["/other"]
                cost: 7
            tenants: { assignments: { acme: pro } }
            """);
    private final Gate gate = new Gate(store, new ConcurrencyLimits(plans, clock, ConcurrencyListener.NONE),
            new FailureLog(System.getLogger("test"), clock, "directory"));
    private final Policy policy = gate.policy(plans, TenantDirectory.of(plans.tenants().assignments()), null);

    private Object decide(Route route, boolean estimated) {
        return gate.decide(policy, route, "acme", "192.0.2.1", RequestFacts.address(estimated));
    }

    @Test
    void aRefusalWaitsForTheRoutesOwnBucketWhenThePlansIsEmptyToo() {
        Route gen = policy.route("POST", "/gen");
        Route other = policy.route("GET", "/other");
        for (int i = 0; i < 3; i++) { // the route's 3 an hour, used
            Object admitted = decide(gen, true);
            assertThat(admitted).isInstanceOf(Ticket.class);
            ((Ticket) admitted).run();
            ((Ticket) admitted).end();
        }
        Object heavy = decide(other, false); // 7 more: the plan's 10 used
        assertThat(heavy).isInstanceOf(Ticket.class);
        ((Ticket) heavy).run();

        Object refused = decide(gen, true);
        assertThat(refused).isInstanceOf(Outcome.Refused.class);
        long retryAfter = ((Outcome.Refused) refused).retryAfterSeconds();
        assertThat(retryAfter).as("the route's next unit comes in 20 minutes").isGreaterThanOrEqualTo(1200);

        clock.advance(Duration.ofSeconds(retryAfter));
        assertThat(decide(gen, true)).as("admitted after waiting Retry-After").isInstanceOf(Ticket.class);
    }

    /** With a concurrency group the body is read first: the refusal of its cost waits for the route's bucket too. */
    @Test
    void aRepricedRefusalWaitsForTheRoutesOwnBucketToo() {
        Route grouped = policy.route("POST", "/grouped");
        Route other = policy.route("GET", "/other");
        for (int i = 0; i < 3; i++) {
            Object o = decide(grouped, true);
            assertThat(o).as(String.valueOf(o)).isInstanceOf(Ticket.class);
            Ticket t = (Ticket) o;
            assertThat(gate.reprice(t, 1)).as("admitted at its cost").isNull();
            t.run();
            t.end();
            t.permit().release();
        }
        Ticket heavy = (Ticket) decide(other, false);
        heavy.run();

        Ticket reading = (Ticket) decide(grouped, true); // holds a slot while its body arrives
        Outcome.Refused refused = gate.reprice(reading, 1);
        gate.release(reading);
        assertThat(refused).isNotNull();
        assertThat(refused.retryAfterSeconds()).as("the route's next unit comes in 20 minutes")
                .isGreaterThanOrEqualTo(1200);
    }
}

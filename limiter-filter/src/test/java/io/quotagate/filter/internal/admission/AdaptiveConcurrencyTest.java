package io.quotagate.filter.internal.admission;

import io.quotagate.filter.status.ConcurrencyListener;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Adaptive groups ({@code groups.<g>.adaptive}) on a manual clock, without threads: the fair shares
 * inside the moving total, and the Netflix limit driven by synthetic request durations.
 */
class AdaptiveConcurrencyTest {
    /** A limit pinned at 12 (initial = min = max), so the shares are the subject. */
    static final String PINNED = """
            plans:
              big:
                limits: [ { capacity: 100, refill: 100, period: 1s } ]
              small:
                limits: [ { capacity: 100, refill: 100, period: 1s } ]
                concurrency: { reports: 3, queued: 3 }
            routes:
              - { name: reports, paths: ["/reports/*"], group: reports }
              - { name: queued, paths: ["/queued/*"], group: queued }
              - { name: fixed, paths: ["/fixed/*"], group: fixed }
            groups:
              reports: { adaptive: { initial: 12, min: 12, max: 12 } }
              queued:
                adaptive: { algorithm: vegas, initial: 12, min: 12, max: 12 }
                queue: { size: 4, max-wait: 10s }
              fixed: { max-inflight: 12 }
            tenants:
              default-plan: big
            """;

    private final ManualClock clock = new ManualClock();
    private final List<Permit> held = new ArrayList<>();

    private ConcurrencyLimits limits(String yaml) {
        return new ConcurrencyLimits(PlansFile.parse("adaptive.yml", yaml), clock, ConcurrencyListener.NONE);
    }

    /** Takes slots for {@code tenant} until one is refused (fail-fast only); returns how many it got. */
    private int fill(ConcurrencyLimits limits, String tenant, String plan, String group, int atMost) {
        for (int n = 0; n < atMost; n++) {
            if (!(limits.acquire(tenant, plan, group) instanceof Acquisition.Granted g)) return n;
            held.add(g.permit());
        }
        return atMost;
    }

    @Test
    void aBusyTenantAloneHoldsHalfTheLimitAndAQuietTenantStillFindsItsShare() {
        ConcurrencyLimits limits = limits(PINNED);
        assertThat(limits.adaptiveLimit("reports")).hasValue(12);

        assertThat(fill(limits, "busy", "big", "reports", 100))
                .as("alone, its fair share is 12 / (1 + a newcomer) = 6; the other 6 are kept for a newcomer")
                .isEqualTo(6);
        Acquisition refused = limits.acquire("busy", "big", "reports");
        assertThat(refused).isInstanceOfSatisfying(Acquisition.Refused.class, r -> {
            assertThat(r.group()).isEqualTo("reports");
            assertThat(r.timedOut()).isFalse();
            assertThat(r.retryAfterSeconds()).as("a full group's wait: its average duration, 1 s before any").isEqualTo(1);
        });

        assertThat(fill(limits, "quiet", "big", "reports", 100))
                .as("the newcomer's share: 12 / (2 + 1) = 4, taken at once from the reserve").isEqualTo(4);
        assertThat(limits.inflightByTenant("reports")).containsEntry("busy", 6).containsEntry("quiet", 4);
        assertThat(limits.acquire("busy", "big", "reports")).as("still above its share").isInstanceOf(Acquisition.Refused.class);
        assertThat(fill(limits, "third", "big", "reports", 100))
                .as("a third tenant still finds the 2 slots left (its share is 3)").isEqualTo(2);
        assertThat(limits.inflight("reports")).as("never above the total").isEqualTo(12);
        assertThat(limits.acquire("fourth", "big", "reports")).as("the total is full")
                .isInstanceOf(Acquisition.Refused.class);
    }

    @Test
    void aFreedSlotGoesOnlyToATenantBelowItsShareWhileTheReserveIsReached() {
        ConcurrencyLimits limits = limits(PINNED);
        fill(limits, "busy", "big", "reports", 100);           // 6
        fill(limits, "quiet", "big", "reports", 100);          // 4; the share of each of two is 12 / 3 = 4
        held.get(0).release();                                 // busy 5: 9 in flight, 3 free
        assertThat(limits.acquire("busy", "big", "reports")).as("above its share, and 2 left after it < 4")
                .isInstanceOf(Acquisition.Refused.class);
        assertThat(limits.acquire("quiet", "big", "reports")).as("at its share, and 2 left after it < 4")
                .isInstanceOf(Acquisition.Refused.class);
        held.get(1).release();
        held.get(2).release();                                 // busy 3: below its share
        assertThat(limits.acquire("busy", "big", "reports")).isInstanceOf(Acquisition.Granted.class);
        assertThat(limits.acquire("busy", "big", "reports")).as("at its share again; 4 free are the reserve")
                .isInstanceOf(Acquisition.Refused.class);
        assertThat(limits.inflight("reports")).isEqualTo(8);
    }

    @Test
    void aTenantNeverExceedsItsPlansCapInsideTheAdaptiveTotal() {
        ConcurrencyLimits limits = limits(PINNED);
        assertThat(fill(limits, "s", "small", "reports", 100)).as("plan small caps reports at 3").isEqualTo(3);
        Acquisition refused = limits.acquire("s", "small", "reports");
        assertThat(refused).as("refused at its own cap: the wait of its own oldest request")
                .isInstanceOfSatisfying(Acquisition.Refused.class, r -> assertThat(r.nanosToWait()).isPositive());
    }

    @Test
    void aQueuedAdaptiveGroupAdmitsAQuietTenantWithoutWaiting() {
        ConcurrencyLimits limits = limits(PINNED);
        assertThat(limits.adaptiveLimit("queued")).hasValue(12);
        for (int i = 0; i < 6; i++) held.add(((Acquisition.Granted) limits.acquire("busy", "big", "queued")).permit());
        // a 7th request of busy would wait (its share is reached and the reserve kept); the quiet tenant does not
        for (int i = 0; i < 4; i++) {
            assertThat(limits.acquire("quiet", "big", "queued")).isInstanceOf(Acquisition.Granted.class);
        }
        assertThat(limits.queued("queued")).isZero();
        assertThat(limits.inflight("queued")).isEqualTo(10);
    }

    @Test
    void aFixedGroupHasNeitherAMovingLimitNorSharesNorTheGauge() {
        ConcurrencyLimits limits = limits(PINNED);
        assertThat(limits.adaptiveLimit("fixed")).isEmpty();
        assertThat(limits.adaptiveLimit("nope")).isEmpty();
        assertThat(fill(limits, "busy", "big", "fixed", 100)).as("one tenant may take the whole fixed cap").isEqualTo(12);
    }

    // The Netflix limit fed by synthetic requests: rounds of as many requests as the group admits from
    // ten tenants, all started together and ended together after `latency` of the manual clock.

    static final String MOVING = """
            plans:
              big:
                limits: [ { capacity: 100, refill: 100, period: 1s } ]
            routes:
              - { name: reports, paths: ["/reports/*"], group: reports }
            groups:
              reports: { adaptive: { algorithm: %s, initial: 20, min: 2, max: 60 } }
            tenants:
              default-plan: big
            """;

    /** One round: fills the group from ten tenants, advances the clock by {@code latency}, releases all. */
    private void round(ConcurrencyLimits limits, Duration latency) {
        List<Permit> permits = new ArrayList<>();
        boolean admitted = true;
        while (admitted) {
            admitted = false;
            for (int t = 0; t < 10; t++) {
                if (limits.acquire("t" + t, "big", "reports") instanceof Acquisition.Granted g) {
                    permits.add(g.permit());
                    admitted = true;
                }
            }
        }
        clock.advance(latency);
        permits.forEach(Permit::release);
    }

    private int rounds(ConcurrencyLimits limits, int n, Duration latency) {
        for (int i = 0; i < n; i++) round(limits, latency);
        return limits.adaptiveLimit("reports").orElseThrow();
    }

    @Test
    void gradient2FallsWithinSecondsWhenLatencyRisesFiveFoldAndClimbsBackAfter() {
        ConcurrencyLimits limits = limits(MOVING.formatted("gradient2"));
        // Gradient2 recalculates once per window of 1 s (of the group's clock) and at least 10 requests
        int normal = rounds(limits, 100, Duration.ofMillis(100));                      // 10 s
        assertThat(normal).as("no queueing: the limit climbs from 20 towards max").isGreaterThan(20);
        // each window at 5x takes 10 % off (Gradient2's smoothing 0.2 of a gradient held at 0.5), towards 8
        int falling = rounds(limits, 6, Duration.ofMillis(500));                      // 3 s
        assertThat(falling).as("within 3 s of 5x latency it falls").isLessThan(normal);
        int slow = rounds(limits, 44, Duration.ofMillis(500));                        // 22 s more
        assertThat(slow).as("25 s of 5x latency at least halve it").isLessThanOrEqualTo(normal / 2);
        int floor = rounds(limits, 120, Duration.ofMillis(500));                      // a minute more
        assertThat(floor).as("a slowdown of a minute stays a slowdown: the limit does not climb back")
                .isLessThanOrEqualTo(slow).isGreaterThanOrEqualTo(2);
        int back = rounds(limits, 200, Duration.ofMillis(100));                       // 20 s
        assertThat(back).as("latency back to normal: the limit climbs again").isGreaterThan(Math.max(2 * floor, normal / 2));
        assertThat(limits.inflight("reports")).isZero();
    }

    @Test
    void vegasFallsWhenLatencyRisesFiveFoldNeverBelowMinAndClimbsBackAfter() {
        ConcurrencyLimits limits = limits(MOVING.formatted("vegas").replace("initial: 20, min: 2", "initial: 40, min: 35"));
        // Vegas re-probes its base latency after a random 15-30 x limit samples (at least 15 x 35 = 525 here):
        // 5 rounds of at most 60 samples and one slow round stay below that, so no probe can take a slow
        // sample as the new base and the run does not depend on Vegas's random jitter
        int normal = rounds(limits, 5, Duration.ofMillis(100));
        assertThat(normal).as("no queueing: the limit climbs from 40 to max").isEqualTo(60);
        // Vegas takes a step of log10(limit) per sample: one round of 5x latency cuts 60 towards min
        int slow = rounds(limits, 1, Duration.ofMillis(500));
        assertThat(slow).as("5x latency: it falls, never below min").isLessThan(normal).isGreaterThanOrEqualTo(35);
        int back = rounds(limits, 10, Duration.ofMillis(100));
        assertThat(back).as("latency back to normal: the limit climbs again").isGreaterThan(slow);
    }
}

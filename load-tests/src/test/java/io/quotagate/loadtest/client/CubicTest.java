package io.quotagate.loadtest.client;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class CubicTest {
    private static final long S = 1_000_000_000L;
    private final Cubic.Options options = new Cubic.Options(3000, 300, 12000, 0.7, 0.4);

    @Test
    void beforeAnyThrottleTheRateGrowsAsInitialPlusCTimesTCubed() {
        Cubic cubic = new Cubic(options, 0);
        cubic.onAccepted(5 * S, true);   // W is in units per second: 50 + 0.4 · 5³ = 100/s
        assertThat(cubic.unitsPerMinute()).isCloseTo(6000, within(1e-6));
    }

    @Test
    void aThrottleCutsToBetaAndTheCurveReturnsToWMaxAfterK() {
        Cubic cubic = new Cubic(options, 0);
        cubic.onThrottled(0, 0);
        assertThat(cubic.unitsPerMinute()).isCloseTo(2100, within(1e-9));
        assertThat(cubic.wMax()).isEqualTo(3000);
        double k = Math.cbrt(50 * 0.3 / 0.4);                       // RFC 8312 eq. 2 with W_max = 50 units/s: 3.35 s
        assertThat(cubic.k()).isCloseTo(k, within(1e-9));

        cubic.onAccepted((long) (k / 2 * S), true);                  // concave: 7/8 of the way back at K/2
        assertThat(cubic.unitsPerMinute()).isCloseTo(3000 - 60 * 0.4 * Math.pow(k / 2, 3), within(0.01));
        assertThat(cubic.unitsPerMinute()).isCloseTo(3000 - 900.0 / 8, within(0.01));
        cubic.onAccepted((long) (k * S), true);
        assertThat(cubic.unitsPerMinute()).isCloseTo(3000, within(0.01));
        cubic.onAccepted((long) ((k + 2) * S), true);                // convex above W_max: + 0.4 · 2³ units/s
        assertThat(cubic.unitsPerMinute()).isCloseTo(3000 + 60 * 3.2, within(0.01));
    }

    @Test
    void fastConvergenceLowersWMaxWhenThrottledBelowThePreviousWMax() {
        Cubic cubic = new Cubic(options, 0);
        cubic.onThrottled(0, 0);                                     // W_max 3000, W 2100
        cubic.onThrottled(S, S);                                     // below W_max: W_max = 2100 × 1.7 / 2
        assertThat(cubic.wMax()).isCloseTo(1785, within(1e-9));
        assertThat(cubic.unitsPerMinute()).isCloseTo(1470, within(1e-9));
    }

    @Test
    void holdsWhenRequestsDidNotWaitAndClampsToMax() {
        Cubic cubic = new Cubic(options, 0);
        cubic.onAccepted(5 * S, false);
        assertThat(cubic.unitsPerMinute()).isEqualTo(3000);
        cubic.onAccepted(20 * S, true);
        assertThat(cubic.unitsPerMinute()).isEqualTo(12000);
    }

    @Test
    void oneCutPerCongestionEvent() {
        Cubic cubic = new Cubic(options, 0);
        cubic.onThrottled(5 * S, 4 * S);
        cubic.onThrottled(5 * S + 10, 4 * S + 10);
        assertThat(cubic.unitsPerMinute()).isCloseTo(2100, within(1e-9));
    }
}

package io.quotagate.client;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class CubicTest {
    private static final long S = 1_000_000_000L;

    private static Cubic started() {
        Cubic cubic = new Cubic(0.7, 0.4);
        cubic.start(3000, 300, 12000, 0);
        return cubic;
    }

    @Test
    void beforeAnyThrottleTheRateGrowsAsInitialPlusCTimesTCubed() {
        // W is in units per second: 50 + 0.4 · 5³ = 100/s
        assertThat(started().onAccepted(3000, 5 * S, true)).isCloseTo(6000, within(1e-6));
    }

    @Test
    void aThrottleCutsToBetaAndTheCurveReturnsToWMaxAfterK() {
        Cubic cubic = started();
        assertThat(cubic.onThrottled(3000, 0, 0)).isCloseTo(2100, within(1e-9));
        assertThat(cubic.wMax()).isEqualTo(3000);
        double k = Math.cbrt(50 * 0.3 / 0.4);                       // RFC 8312 eq. 2 with W_max = 50 units/s: 3.35 s
        assertThat(cubic.k()).isCloseTo(k, within(1e-9));
        // concave: 7/8 of the way back at K/2
        assertThat(cubic.onAccepted(2100, (long) (k / 2 * S), true)).isCloseTo(3000 - 900.0 / 8, within(0.01));
        assertThat(cubic.onAccepted(2100, (long) (k * S), true)).isCloseTo(3000, within(0.01));
        // convex above W_max: + 0.4 · 2³ units/s
        assertThat(cubic.onAccepted(3000, (long) ((k + 2) * S), true)).isCloseTo(3000 + 60 * 3.2, within(0.01));
    }

    @Test
    void fastConvergenceLowersWMaxWhenThrottledBelowThePreviousWMax() {
        Cubic cubic = started();
        double rate = cubic.onThrottled(3000, 0, 0);                 // W_max 3000, W 2100
        rate = cubic.onThrottled(rate, S, S);                        // below W_max: W_max = 2100 × 1.7 / 2
        assertThat(cubic.wMax()).isCloseTo(1785, within(1e-9));
        assertThat(rate).isCloseTo(1470, within(1e-9));
    }

    @Test
    void holdsWhenRequestsDidNotWait() {
        assertThat(started().onAccepted(3000, 5 * S, false)).isEqualTo(3000);
    }

    @Test
    void oneCutPerCongestionEvent() {
        Cubic cubic = started();
        double rate = cubic.onThrottled(3000, 5 * S, 4 * S);
        assertThat(cubic.onThrottled(rate, 5 * S + 10, 4 * S + 10)).isCloseTo(2100, within(1e-9));
    }

    @Test
    void rejectsNonsenseSettingsNamingThem() {
        assertThatThrownBy(() -> RateController.cubic(1, 0.4)).hasMessageContaining("beta");
        assertThatThrownBy(() -> RateController.cubic(0.7, 0)).hasMessageContaining("c must");
    }
}

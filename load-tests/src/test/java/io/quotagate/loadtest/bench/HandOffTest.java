package io.quotagate.loadtest.bench;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class HandOffTest {
    /**
     * The process CPU clock may count in coarse steps (2,000 hand-offs fit inside one step on some VMs):
     * the figure is then measured over more hand-offs, and is a cost only if the clock moved.
     */
    @Test
    void aHandOffCostIsMeasuredOverAsManyAsTheCpuClockNeedsNeverReadAsZero() throws InterruptedException {
        HandOff.Cost cost = HandOff.measure(2_000);
        assertThat(cost.count()).isGreaterThanOrEqualTo(2_000);
        if (cost.cpuMeasured()) assertThat(cost.cpuMicros()).isPositive().isFinite();
        assertThat(cost.wallMicros()).isNotNegative().isFinite();
    }

    @Test
    void anOddCountIsRoundedUpToAnEvenOne() throws InterruptedException {
        HandOff.Cost cost = HandOff.measure(1);
        assertThat(cost.count() % 2).isZero();
        assertThat(cost.count()).isGreaterThanOrEqualTo(2);
    }

    @Test
    void aCountBelowOneIsRefused() {
        assertThatThrownBy(() -> HandOff.measure(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("count must be > 0, was 0");
    }
}

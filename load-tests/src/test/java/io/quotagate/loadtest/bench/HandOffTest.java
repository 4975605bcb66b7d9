package io.quotagate.loadtest.bench;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class HandOffTest {
    @Test
    void everyHandOffCostsSomeCpuAndTime() throws InterruptedException {
        HandOff.Cost cost = HandOff.measure(2_000);
        assertThat(cost.cpuMicros()).isPositive().isFinite();
        assertThat(cost.wallMicros()).isPositive().isFinite();
    }

    @Test
    void anOddCountEndsToo() throws InterruptedException {
        assertThat(HandOff.measure(1).wallMicros()).isPositive();
    }

    @Test
    void aCountBelowOneIsRefused() {
        assertThatThrownBy(() -> HandOff.measure(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("count must be > 0, was 0");
    }
}

package io.quotagate.filter.internal.admission;

import io.quotagate.filter.status.BandwidthStatus;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class BandwidthStatusTest {

    @Test
    void secondsToFullRoundsUpWholeSecondsWithoutOverflowing() {
        assertThat(status(0).secondsToFull()).isZero();
        assertThat(status(1).secondsToFull()).isEqualTo(1);
        assertThat(status(1_000_000_000L).secondsToFull()).isEqualTo(1);
        assertThat(status(1_000_000_001L).secondsToFull()).isEqualTo(2);
        assertThat(status(Long.MAX_VALUE).secondsToFull()).isEqualTo(Long.MAX_VALUE / 1_000_000_000L + 1);
    }

    private static BandwidthStatus status(long nanosToFull) {
        return new BandwidthStatus("burst", 10, 1, 10, nanosToFull);
    }
}

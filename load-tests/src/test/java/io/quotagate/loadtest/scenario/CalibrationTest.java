package io.quotagate.loadtest.scenario;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The calibration before an in-process run: what it measures, and when it warns. */
class CalibrationTest {

    @Test
    void warnsWithASpeedThatFitsWhenTheRunAsksMoreThanTheMachineCarriesNow() {
        // race at --speed 15 asks about 6,250 requests/s; a loaded machine carried 4,000/s, 60 % of it keeps the schedule
        String warning = Calibration.warning(6_250, 4_000, 15).orElseThrow();
        assertThat(warning).contains("carried 4,000 requests/s", "at speed 15 the modes may send up to 6,250/s",
                "more than the 2,400/s (60 %)", "expect SATURATED (exit status 3)", "Use --speed 5.7 or less.");
    }

    @Test
    void saysNothingWhenTheMachineKeepsUp() {
        assertThat(Calibration.warning(2_400, 4_000, 15)).isEmpty();
    }

    @Test
    void measuresARealRateThroughTheExampleApp() throws Exception {
        double measured = Calibration.measure();
        assertThat(measured).isGreaterThan(50);
    }
}

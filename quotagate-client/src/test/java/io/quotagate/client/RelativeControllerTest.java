package io.quotagate.client;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** The rules of the default controllers, one call at a time on nanosecond readings the test chooses. */
class RelativeControllerTest {
    private static final long S = 1_000_000_000L;

    private static RelativeController started(RelativeController.Probe probe) {
        RelativeController c = new RelativeController(probe);
        assertThat(c.start(600, 6, 6000, 0)).isEqualTo(600);
        return c;
    }

    /** Throttled at 1000/min after slow start with every answer accepted: rate 800, ceiling 900. */
    private static RelativeController cutOnceHealthy(RelativeController.Probe probe) {
        RelativeController c = started(probe);
        for (int i = 0; i < 10; i++) c.onAccepted(1000, S / 2, false);
        assertThat(c.onThrottled(1000, 10 * S, 10 * S)).isCloseTo(800, within(1e-9));
        assertThat(c.ceiling()).isCloseTo(900, within(1e-9));
        return c;
    }

    @Test
    void slowStartDoublesAtMostOncePerSecondAndOnlyWhenRequestsWaited() {
        RelativeController c = started(RelativeController.Probe.LINEAR);
        assertThat(c.onAccepted(600, S / 2, true)).isEqualTo(600);
        assertThat(c.onAccepted(600, S, true)).isEqualTo(1200);
        assertThat(c.onAccepted(1200, S + S / 2, true)).isEqualTo(1200);
        assertThat(c.onAccepted(1200, 3 * S, false)).isEqualTo(1200);
        assertThat(c.onAccepted(1200, 3 * S, true)).isEqualTo(2400);
        assertThat(c.ceiling()).isNaN();
    }

    @Test
    void aThrottleAfterMostlyAcceptedAnswersCutsTo80PercentAndRemembers90PercentAsTheCeiling() {
        cutOnceHealthy(RelativeController.Probe.LINEAR);
    }

    @Test
    void aThrottleAfterTooManyThrottlesCutsToTheAcceptedShareButNeverBelow70Percent() {
        RelativeController c = cutOnceHealthy(RelativeController.Probe.LINEAR);
        // since the cut: 3 accepted, this 429 the 2nd throttle: 3 of 5 = 60 %, below 70 %
        c.onAccepted(800, 11 * S, true);
        c.onAccepted(800, 11 * S, true);
        c.onThrottled(800, 11 * S, 9 * S);                       // sent before the cut: the same event
        c.onAccepted(800, 11 * S, true);
        assertThat(c.onThrottled(800, 12 * S, 11 * S)).isCloseTo(560, within(1e-9));
        assertThat(c.ceiling()).isCloseTo(560, within(1e-9));
        // 3 of 4 = 75 %: the accepted share
        for (int i = 0; i < 3; i++) c.onAccepted(560, 13 * S, true);
        assertThat(c.onThrottled(560, 14 * S, 13 * S)).isCloseTo(420, within(1e-9));
        assertThat(c.ceiling()).isCloseTo(420, within(1e-9));
    }

    @Test
    void throttlesOfRequestsSentBeforeTheLastCutAreOneCongestionEvent() {
        RelativeController c = cutOnceHealthy(RelativeController.Probe.LINEAR);
        assertThat(c.onThrottled(800, 10 * S + 5, 10 * S - 1)).isEqualTo(800);
        assertThat(c.ceiling()).isCloseTo(900, within(1e-9));
    }

    @Test
    void afterACutTheRateClimbsBackToTheCeilingAndLingersThere30SecondsAnd300Answers() {
        RelativeController c = cutOnceHealthy(RelativeController.Probe.LINEAR);
        assertThat(c.onAccepted(800, 10 * S + S / 2, true)).isEqualTo(800);     // a second after the cut
        assertThat(c.onAccepted(800, 11 * S, true)).isCloseTo(900, within(1e-9));
        double rate = 900;
        for (int i = 0; i < 400; i++) rate = c.onAccepted(rate, 12 * S + i * S / 100, true);   // 400 answers in 4 s
        assertThat(rate).as("30 s not over").isCloseTo(900, within(1e-9));
        assertThat(c.probing()).isFalse();
        rate = c.onAccepted(rate, 40 * S, true);                                  // 30 s after the cut
        assertThat(c.probing()).isTrue();
        assertThat(rate).isCloseTo(900, within(1e-9));
    }

    @Test
    void fewAnswersKeepTheLingerUpTo15Minutes() {
        RelativeController c = cutOnceHealthy(RelativeController.Probe.LINEAR);
        double rate = c.onAccepted(800, 11 * S, true);
        for (int s = 12; s < 10 + 900; s += 10) rate = c.onAccepted(rate, s * S, true);   // 90 answers in 15 min
        assertThat(c.probing()).isFalse();
        c.onAccepted(rate, (10 + 900) * S, true);
        assertThat(c.probing()).isTrue();
    }

    private static RelativeController lingeredUntil40s(RelativeController.Probe probe) {
        RelativeController c = cutOnceHealthy(probe);
        double rate = c.onAccepted(800, 11 * S, true);
        for (int i = 0; i < 300; i++) rate = c.onAccepted(rate, 12 * S, true);
        c.onAccepted(rate, 40 * S, true);
        assertThat(c.probing()).isTrue();
        return c;
    }

    @Test
    void aimdProbesByHalfAPercentOfTheCeilingPerSecond() {
        RelativeController c = lingeredUntil40s(RelativeController.Probe.LINEAR);
        assertThat(c.onAccepted(900, 50 * S, true)).isCloseTo(900 * 1.05, within(1e-6));
        assertThat(c.onAccepted(945, 60 * S, false)).isEqualTo(945);
        assertThat(c.onAccepted(945, 140 * S, true)).isCloseTo(900 * 1.5, within(1e-6));
    }

    @Test
    void cubicProbesAlongTheCeilingTimesOnePlusTOverTwoMinutesCubed() {
        RelativeController c = lingeredUntil40s(RelativeController.Probe.CUBIC);
        assertThat(c.onAccepted(900, 100 * S, true)).isCloseTo(900 * 1.125, within(1e-6));   // t = 60 s
        assertThat(c.onAccepted(1012.5, 160 * S, true)).isCloseTo(1800, within(1e-6));       // t = 2 min
    }

    @Test
    void aThrottleWhileProbingKeepsTheCeilingTheLingerProved() {
        RelativeController c = lingeredUntil40s(RelativeController.Probe.LINEAR);
        double rate = c.onAccepted(900, 50 * S, true);                      // 945
        assertThat(c.onThrottled(rate, 51 * S, 50 * S)).isCloseTo(756, within(1e-6));
        assertThat(c.ceiling()).as("0.9 × 945 is below 900").isCloseTo(900, within(1e-9));
    }

    @Test
    void threeCutsInARowWithNothingAcceptedKeepTheCeilingOfBeforeTheOutage() {
        RelativeController c = lingeredUntil40s(RelativeController.Probe.LINEAR);
        double rate = 900;
        for (int s = 100; s < 120; s++) rate = c.onThrottled(rate, s * S, s * S - S / 2);   // 20 s of 429s
        assertThat(rate).isLessThan(6);
        assertThat(c.ceiling()).isCloseTo(900, within(1e-9));
        // the server is back: the rate doubles to the ceiling again
        rate = 6;
        for (int s = 121; s < 135; s++) rate = c.onAccepted(rate, s * S, true);
        assertThat(rate).isCloseTo(900, within(1e-9));
    }

    @Test
    void anOutageInSlowStartKeepsTheCeilingItsFirstThrottleSet() {
        RelativeController c = started(RelativeController.Probe.CUBIC);
        for (int i = 0; i < 50; i++) c.onAccepted(1000, S / 2, false);
        double rate = 1000;
        for (int s = 10; s < 30; s++) rate = c.onThrottled(rate, s * S, s * S - S / 2);
        assertThat(c.ceiling()).isCloseTo(900, within(1e-9));
    }

    @Test
    void twoCutsInARowAreAQuotaNotAnOutage() {
        RelativeController c = lingeredUntil40s(RelativeController.Probe.LINEAR);
        double rate = c.onThrottled(900, 100 * S, 100 * S);                 // healthy: 720, the ceiling kept
        rate = c.onThrottled(rate, 101 * S, 101 * S);                        // nothing accepted: 0.7 × 720
        assertThat(rate).isCloseTo(504, within(1e-9));
        assertThat(c.ceiling()).isCloseTo(504, within(1e-9));
    }
}

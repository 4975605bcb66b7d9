package io.quotagate.loadtest.scenario;

import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class MeasuresTest {
    @Test
    void jainIsOneForEqualSharesAndOneOverNWhenOneTakesAll() {
        assertThat(Measures.jain(new double[]{1500, 1500})).isEqualTo(1.0);
        assertThat(Measures.jain(new double[]{3000, 0, 0})).isCloseTo(1.0 / 3, within(1e-12));
        // (1 + 2 + 3)² / (3 · (1 + 4 + 9)) = 36 / 42
        assertThat(Measures.jain(new double[]{1, 2, 3})).isCloseTo(36.0 / 42, within(1e-12));
        assertThat(Measures.jain(new double[]{7})).isEqualTo(1.0);
        assertThat(Measures.jain(new double[]{0, 0})).isEqualTo(1.0);
    }

    @Test
    void utilizationIsTheWorkersShareOfWhatTheNeighbourLeft() {
        // the seeds' race: 15 min of 3,000/min, the neighbour takes 1,500 in one minute
        double quotaUnits = 15 * 3000;
        assertThat(Measures.utilization(43_500, quotaUnits, 1_500)).isCloseTo(1.0, within(1e-12));
        assertThat(Measures.utilization(2_625 * 15, quotaUnits, 1_500)).isCloseTo(2625.0 / 2900, within(1e-12));
        assertThat(Measures.utilization(100, 50, 60)).isZero();
    }

    @Test
    void scenarioQuotaUnitsAreTimeWeighted() {
        Scenario drop = Scenario.named("quota-drop");   // 5 min of 3,000/min, one minute of them at half
        assertThat(drop.quotaUnits()).isCloseTo(4 * 3000 + 1500, within(1e-6));
        assertThat(Scenario.named("race").quotaUnits()).isCloseTo(15 * 3000, within(1e-6));
    }

    @Test
    void windowCheckPassesAtQuotaPlusBurstAndFailsOneUnitAbove() {
        long[] admitted = new long[120];
        double[] quota = new double[120];
        Arrays.fill(quota, 600);          // 10 units per second
        Arrays.fill(admitted, 10);
        admitted[30] += 100;              // the whole burst at once
        Measures.WindowCheck ok = Measures.checkWindows(admitted, quota, 100, 60, new double[0]);
        assertThat(ok.passed()).isTrue();
        assertThat(ok.worstAccepted()).isEqualTo(700);
        assertThat(ok.worstAllowed()).isCloseTo(700, within(1e-9));

        admitted[89] += 1;                // the window [30, 90) now holds 701
        Measures.WindowCheck bad = Measures.checkWindows(admitted, quota, 100, 60, new double[0]);
        assertThat(bad.passed()).isFalse();
        assertThat(bad.worstStart()).isEqualTo(30);
        assertThat(bad.worstAccepted()).isEqualTo(701);
    }

    @Test
    void windowCheckAllowsWhatRefilledWhileTheServerWasCountingAUnit() {
        long[] admitted = new long[120];
        double[] quota = new double[120];
        Arrays.fill(quota, 600);          // 10 units per second
        Arrays.fill(admitted, 10);
        admitted[29] -= 2;                // two units admitted at the end of second 29 ...
        admitted[30] += 102;              // ... were counted in second 30, with the whole burst
        assertThat(Measures.checkWindows(admitted, quota, 100, 60, new double[0]).passed()).isFalse();

        double[] delay = new double[120];
        delay[30] = 0.2;                  // units counted in second 30 were admitted up to 200 ms earlier
        Measures.WindowCheck check = Measures.checkWindows(admitted, quota, 100, 60, delay);
        assertThat(check.passed()).isTrue();
        delay[30] = 0.1;
        assertThat(Measures.checkWindows(admitted, quota, 100, 60, delay).passed()).isFalse();
        // a delay far inside the window reaches no further back than its own second
        delay[30] = 0;
        delay[50] = 20.1;
        assertThat(Measures.checkWindows(admitted, quota, 100, 60, delay).passed()).isFalse();
        delay[50] = 20.2;
        assertThat(Measures.checkWindows(admitted, quota, 100, 60, delay).passed()).isTrue();
    }

    @Test
    void windowCheckFollowsAQuotaThatChanges() {
        long[] admitted = new long[60];
        double[] quota = new double[60];
        Arrays.fill(quota, 0, 30, 600);   // 10/s for 30 s, then 5/s
        Arrays.fill(quota, 30, 60, 300);
        Arrays.fill(admitted, 0, 30, 10);
        Arrays.fill(admitted, 30, 60, 10);  // 150 too many in the second half, more than the 100 burst
        assertThat(Measures.checkWindows(admitted, quota, 100, 60, new double[0]).passed()).isFalse();
        assertThat(Measures.checkWindows(admitted, quota, 150, 60, new double[0]).passed()).isTrue();
    }

    @Test
    void convergenceIsWhenTheSmoothedRateStaysInTheBandForTheHoldTime() {
        long[] perSecond = new long[200];
        Arrays.fill(perSecond, 0, 40, 50);      // 3,000/min
        Arrays.fill(perSecond, 40, 52, 40);     // slow to come down after the event at 40
        Arrays.fill(perSecond, 52, 200, 25);    // 1,500/min from 52 on
        // [49, 59) averages 1,770/min (out of ±15%), [50, 60) 1,680 (in): in from the window ending at 60
        assertThat(Measures.convergence(perSecond, 40, 200, 1500, 0.15, 10, 20)).isEqualTo(20);
        assertThat(Measures.convergence(perSecond, 40, 200, 3000, 0.15, 10, 20)).isEqualTo(-1);
        assertThat(Measures.convergence(perSecond, 0, 40, 3000, 0.15, 10, 20)).isEqualTo(10);

        perSecond[75] = 0;                      // a dip inside the hold time: windows holding both zeros
        perSecond[76] = 0;                      // average 1,200/min (out), those starting 67..75
        assertThat(Measures.convergence(perSecond, 40, 200, 1500, 0.15, 10, 20)).isEqualTo(76 - 40 + 10);
        perSecond[150] = 0;                     // a later excursion, after the share was held: does not count
        perSecond[151] = 0;
        assertThat(Measures.convergence(perSecond, 40, 200, 1500, 0.15, 10, 20)).isEqualTo(46);
    }
}

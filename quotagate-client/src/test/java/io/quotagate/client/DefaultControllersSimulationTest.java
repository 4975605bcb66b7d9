package io.quotagate.client;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 42: {@link RateController#aimd()} and {@link RateController#cubic()} with the limiter's
 * defaults fit any quota. A {@link QuotaSimulation} (manual clock, no threads: deterministic) of ten
 * minutes against hidden quotas of 1, 5, 100 and 2,000 requests a second, one and three instances
 * with several threads each, an initial rate of 0.1×, 1× and 10× the quota: from 30 s on at least
 * 90 % of the quota is used and at most 1 % of the answers are 429. The figures of every run are in
 * the docs' table (quotagate-client's defaults); the tightest are the 1/s runs with three instances
 * (0.89 %: 5 429s of 561, each instance learning the quota from its own few requests).
 */
class DefaultControllersSimulationTest {
    private static final double[] QUOTAS = {1, 5, 100, 2000};

    private static List<QuotaSimulation.Setup> setups(double... initialFactors) {
        List<QuotaSimulation.Setup> setups = new ArrayList<>();
        for (String name : List.of("aimd()", "cubic()")) {
            Supplier<RateController> controller = name.equals("aimd()") ? RateController::aimd : RateController::cubic;
            for (double quota : QUOTAS) {
                for (int instances : new int[]{1, 3}) {
                    for (double f : initialFactors) setups.add(QuotaSimulation.Setup.of(name, controller, quota, instances, f));
                }
            }
        }
        return setups;
    }

    static List<QuotaSimulation.Setup> sustained() {
        return setups(0.1, 1, 10);
    }

    static List<QuotaSimulation.Setup> outage() {
        List<QuotaSimulation.Setup> setups = new ArrayList<>();
        for (QuotaSimulation.Setup s : setups(0.1, 1, 10)) setups.add(s.withOutage(OUTAGE_AT, OUTAGE));
        return setups;
    }

    private static final Duration OUTAGE_AT = Duration.ofMinutes(5);
    private static final Duration OUTAGE = Duration.ofSeconds(20);
    private static final long RECOVERY_SECONDS = 20;

    @ParameterizedTest(name = "{0}")
    @MethodSource("sustained")
    void theDefaultsUseAtLeast90PercentOfAnyQuotaWithAtMostOnePercent429s(QuotaSimulation.Setup setup) {
        QuotaSimulation.Result r = QuotaSimulation.run(setup);
        System.out.println(r);
        assertThat(r.utilisation()).as("%s", r).isGreaterThanOrEqualTo(0.90);
        assertThat(r.throttledShare()).as("%s", r).isLessThanOrEqualTo(0.01);
    }

    /**
     * The server answers 429 to everything for 20 s at 5:00, then recovers: the ceiling survives the
     * outage, so within 20 s a 10 s window accepts 90 % of the quota again (measured: 0–12 s), and
     * outside the outage the figures above still hold.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("outage")
    void afterAnOutageTheRateIsBackWithin20Seconds(QuotaSimulation.Setup setup) {
        QuotaSimulation.Result r = QuotaSimulation.run(setup);
        long back = r.secondsUntilAccepting(OUTAGE_AT.plus(OUTAGE), 0.9);
        System.out.println(r + ", back at 90 % after " + back + " s");
        assertThat(back).as("%s", r).isLessThanOrEqualTo(RECOVERY_SECONDS);
        assertThat(r.utilisation()).as("%s", r).isGreaterThanOrEqualTo(0.90);
        assertThat(r.throttledShare()).as("%s", r).isLessThanOrEqualTo(0.01);
    }
}

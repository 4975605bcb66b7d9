package io.quotagate.loadtest.scenario;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

class PaceTest {

    @Test
    void aRunThatKeptItsScheduleIsNotSaturated() {
        Pace pace = new Pace();
        for (int i = 0; i < 1000; i++) {
            pace.sent();
            pace.lag(2_000_000L);            // 2 ms late
            pace.response(5_000_000L);       // answered in 5 ms
        }
        Pace.Verdict verdict = pace.verdict();
        assertThat(verdict.saturated()).isFalse();
        assertThat(verdict.reasons()).isEmpty();
        assertThat(verdict.sent()).isEqualTo(1000);
        assertThat(verdict.lagP99Ms()).isBetween(1.9, 2.1);
    }

    @Test
    void lateRequestsSlowAnswersOrAFullPoolEachSaturateTheRun() {
        Pace late = new Pace();
        for (int i = 0; i < 100; i++) late.lag(i < 95 ? 1_000_000L : 500_000_000L);   // 5 % half a second late
        assertThat(late.verdict().reasons()).singleElement().asString().contains("p99 lag 50");

        Pace slow = new Pace();
        for (int i = 0; i < 100; i++) slow.response(400_000_000L);
        assertThat(slow.verdict().reasons()).singleElement().asString().contains("p99 response time 40");

        Pace full = new Pace();
        full.sent();
        full.refusedByPool();
        assertThat(full.verdict().reasons()).singleElement().asString().contains("1 request(s) found the client's");
        assertThat(full.verdict().sent()).isZero();
    }

    @Test
    void failuresAboveOnePercentOfTheRequestsSentAreTooMany() {
        Pace pace = new Pace();
        for (int i = 0; i < 1000; i++) pace.sent();
        for (int i = 0; i < 10; i++) pace.failed();
        assertThat(pace.verdict().tooManyFailed()).isFalse();   // exactly 1 %
        pace.failed();
        assertThat(pace.verdict().tooManyFailed()).isTrue();
    }

    @Test
    void theCapacityWarningNamesASpeedThisMachineCarries() {
        Scenario race = Scenario.named("race");
        List<Mode> all = race.defaultModes();
        assertThat(Capacity.warning(race, all, 1, 2)).isEmpty();
        Optional<String> warning = Capacity.warning(race, all, 1000, 2);
        assertThat(warning).get().asString().contains("at speed 1000").contains("Use --speed");
        double faithful = Capacity.REQUESTS_PER_SECOND_PER_CPU * 2;
        // the speed it names sends no more than two processors carry
        double named = Double.parseDouble(warning.orElseThrow().replaceAll("(?s).*Use --speed ([0-9.]+) or less.*", "$1"));
        assertThat(Capacity.offeredPerSecond(race, all, named)).isLessThanOrEqualTo(faithful);
        assertThat(Capacity.warning(race, all, named, 2)).isEmpty();
    }
}

package io.quotagate.filter.internal.metrics;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

class HeavyHittersTest {

    @Test
    void theLowerBoundNeverExceedsATenantsTrueDecayedCountWhateverFloodsTheTable() {
        HeavyHitters table = new HeavyHitters(32);
        Map<String, Double> truth = new HashMap<>();
        SplittableRandom random = new SplittableRandom(7);
        for (int i = 0; i < 200_000; i++) {
            // a few heavy ids among a flood of ids seen once or twice
            String tenant = random.nextInt(4) == 0 ? "heavy-" + random.nextInt(5) : "spoofed-" + random.nextInt(150_000);
            table.observe(tenant, false);
            truth.merge(tenant, 1.0, Double::sum);
            if (i % 5_000 == 4_999) {
                table.halve();
                truth.replaceAll((t, n) -> n / 2);
            }
            if (i % 997 == 0) {
                truth.forEach((t, n) -> assertThat((double) table.lowerBound(t)).as(t).isLessThanOrEqualTo(n));
            }
        }
        truth.forEach((t, n) -> assertThat((double) table.lowerBound(t)).as(t).isLessThanOrEqualTo(n));
        assertThat(table.size()).isEqualTo(32);
    }

    @Test
    void anIdObservedFewerThanNTimesNeverReachesALowerBoundOfN() {
        HeavyHitters table = new HeavyHitters(8);
        for (int i = 0; i < 100_000; i++) {
            String tenant = "spoofed-" + (i / 3); // each id three times in a row
            assertThat(table.observe(tenant, false).lowerBound()).isLessThanOrEqualTo(3);
        }
    }

    @Test
    void aTenantWithMoreThanOneInCapacityOfTheObservationsIsNeverEvicted() {
        HeavyHitters table = new HeavyHitters(16);
        long heavy = 0;
        for (int i = 0; i < 100_000; i++) {
            if (i % 10 == 0) {
                table.observe("heavy", false);
                heavy++;
            } else {
                table.observe("spoofed-" + i, false);
            }
        }
        // it entered with no error (the table had room), so every observation of it counts
        assertThat(table.lowerBound("heavy")).isEqualTo(heavy);
    }

    @Test
    void halvingRoundsTheLowerBoundDownAndKeepsTheSmallestEntryTheOneReplaced() {
        HeavyHitters table = new HeavyHitters(2);
        for (int i = 0; i < 5; i++) table.observe("a", false);
        for (int i = 0; i < 3; i++) table.observe("b", false);
        table.halve();
        assertThat(table.lowerBound("a")).isEqualTo(2);
        assertThat(table.lowerBound("b")).isEqualTo(1);

        HeavyHitters.Entry c = table.observe("c", false); // replaces b (count 1): count 2, error 1
        assertThat(c.count).isEqualTo(2);
        assertThat(c.lowerBound()).isEqualTo(1);
        assertThat(table.lowerBound("b")).isZero();
        table.halve(); // count 1, error rounded up to 1
        assertThat(table.lowerBound("c")).isZero();
    }

    @Test
    void anOfferedExactCountReplacesOnlyASmallerEntryAndRemovedTenantsAreForgotten() {
        HeavyHitters table = new HeavyHitters(2);
        for (int i = 0; i < 10; i++) table.observe("a", true);
        for (int i = 0; i < 4; i++) table.observe("b", false);

        table.offer("demoted", false, 3);
        assertThat(table.lowerBound("demoted")).as("every entry counts more").isZero();
        table.offer("demoted", false, 7);
        assertThat(table.lowerBound("demoted")).isEqualTo(7);
        assertThat(table.lowerBound("b")).isZero();

        table.remove("a");
        assertThat(table.size()).isEqualTo(1);
        assertThat(table.observe("fresh", false).lowerBound()).as("room again: no error").isEqualTo(1);
        assertThat(table.lowerBound("demoted")).isEqualTo(7);
    }
}

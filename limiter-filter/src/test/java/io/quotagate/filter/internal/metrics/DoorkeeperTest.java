package io.quotagate.filter.internal.metrics;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class DoorkeeperTest {

    @Test
    void anIdIsLetInFromItsSecondSampleUntilTheDoorIsCleared() {
        Doorkeeper door = new Doorkeeper(1_000);
        int letInAtFirstSight = 0;
        for (int i = 0; i < 1_000; i++) if (door.seenBefore("id-" + i)) letInAtFirstSight++;
        // two of the filter's 8,192 bits per id: false positives stay around 5 % or below
        assertThat(letInAtFirstSight).as("ids let in at their first sample").isLessThan(60);
        for (int i = 0; i < 1_000; i++) assertThat(door.seenBefore("id-" + i)).as("id-%d, second sample", i).isTrue();

        door.clear();
        int afterClear = 0;
        for (int i = 0; i < 1_000; i++) if (door.seenBefore("id-" + i)) afterClear++;
        assertThat(afterClear).as("ids let in at their first sample after the clear").isLessThan(60);
    }

    @Test
    void aMarkedIdIsLetInAtItsNextSample() {
        Doorkeeper door = new Doorkeeper(64);
        door.mark("tracked");
        assertThat(door.seenBefore("tracked")).isTrue();
    }
}

package io.quotagate.filter.store;

import io.quotagate.filter.testing.Await;
import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

class TickingTimeTest {
    /** A clock the test moves; the ticking thread reads it as it would the JVM's. */
    private final AtomicLong clock = new AtomicLong(5_000_000_000L);
    private final TickingTime time = new TickingTime(clock::get);

    @Test
    void aReadWhileStoppedIsTheClocksAndStartsTheThread() throws InterruptedException {
        assertThat(time.ticking()).isFalse();
        clock.set(6_000_000_000L);
        assertThat(time.read()).isEqualTo(6_000_000_000L);
        Await.until("the thread ticks", time::ticking);
    }

    @Test
    void whileTickingAReadFollowsTheClockWithinTicks() throws InterruptedException {
        time.read();
        Await.until("the thread ticks", time::ticking);
        clock.set(7_000_000_000L);
        Await.until("the clock published", () -> time.read() == 7_000_000_000L);
    }

    @Test
    void aRefreshIsReadAtOnceAndTheTimeNeverGoesBack() throws InterruptedException {
        time.read();
        clock.set(8_000_000_000L);
        assertThat(time.refresh()).isEqualTo(8_000_000_000L);
        assertThat(time.read()).isEqualTo(8_000_000_000L);
        clock.set(7_500_000_000L); // a clock that went back (not System.nanoTime's way, but a published time must hold)
        assertThat(time.refresh()).isEqualTo(8_000_000_000L);
        assertThat(time.read()).isEqualTo(8_000_000_000L);
    }

    @Test
    void theThreadStopsWhenNothingReadsAndStartsAgainAtTheNextRead() throws InterruptedException {
        time.read();
        Await.until("the thread ticks", time::ticking);
        // no read from here on: a whole idle period passes without one
        Await.until("the thread stopped", () -> !time.ticking());
        clock.set(9_000_000_000L);
        assertThat(time.read()).as("read from the clock while stopped").isEqualTo(9_000_000_000L);
        Await.until("ticking again", time::ticking);
    }
}

package io.quotagate.example;

import io.quotagate.filter.testing.ManualClock;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The admin endpoint's lockouts, on a clock the test moves. */
class WrongTokenBackoffTest {
    private final ManualClock clock = new ManualClock();
    private final WrongTokenBackoff backoff = new WrongTokenBackoff(clock::nanoTime);

    @Test
    void theFirstWrongTokensCostNothingThenEachLocksOutTwiceAsLongUpToFiveMinutes() {
        List<Long> lockouts = new ArrayList<>();
        for (int i = 0; i < 14; i++) {
            long locked = backoff.failed("192.0.2.1");
            assertThat(backoff.lockedFor("192.0.2.1")).isEqualTo(locked);
            lockouts.add(Duration.ofNanos(locked).toSeconds());
            clock.advance(Duration.ofNanos(locked)); // the caller waits it out, exactly
            assertThat(backoff.lockedFor("192.0.2.1")).isZero();
        }
        assertThat(lockouts).containsExactly(0L, 0L, 1L, 2L, 4L, 8L, 16L, 32L, 64L, 128L, 256L, 300L, 300L, 300L);
    }

    @Test
    void aLockoutEndsOnTimeAndLocksOnlyItsOwnAddress() {
        for (int i = 0; i < WrongTokenBackoff.FREE_FAILURES; i++) backoff.failed("192.0.2.1");
        assertThat(backoff.lockedFor("192.0.2.1")).isEqualTo(Duration.ofSeconds(1).toNanos());
        assertThat(backoff.lockedFor("198.51.100.7")).isZero();
        clock.advance(Duration.ofMillis(999));
        assertThat(backoff.lockedFor("192.0.2.1")).isEqualTo(Duration.ofMillis(1).toNanos());
        clock.advance(Duration.ofMillis(1));
        assertThat(backoff.lockedFor("192.0.2.1")).isZero();
    }

    @Test
    void whileLockedOutOneTokenASecondIsComparedSoTheRightOneGetsInWithinASecond() {
        for (int i = 0; i < 12; i++) {
            assertThat(backoff.mayCompare("192.0.2.1")).isZero();
            backoff.failed("192.0.2.1");
            clock.advance(Duration.ofSeconds(1));
        }
        assertThat(backoff.lockedFor("192.0.2.1")).as("locked out for 5 minutes").isEqualTo(Duration.ofSeconds(299).toNanos());
        assertThat(backoff.mayCompare("192.0.2.1")).as("a turn a second, not one per lockout").isZero();
        assertThat(backoff.mayCompare("192.0.2.1")).as("that turn is taken").isEqualTo(Duration.ofSeconds(1).toNanos());
        clock.advance(Duration.ofMillis(400));
        assertThat(backoff.mayCompare("192.0.2.1")).isEqualTo(Duration.ofMillis(600).toNanos());
        assertThat(backoff.mayCompare("198.51.100.7")).as("other addresses compare freely").isZero();
        clock.advance(Duration.ofMillis(600));
        assertThat(backoff.mayCompare("192.0.2.1")).as("the right token's turn").isZero();
        backoff.succeeded("192.0.2.1");
        assertThat(backoff.lockedFor("192.0.2.1")).isZero();
        assertThat(backoff.mayCompare("192.0.2.1")).isZero();
        assertThat(backoff.mayCompare("192.0.2.1")).isZero();
    }

    @Test
    void aGuesserDuringALockoutGetsOneComparisonASecondHoweverFastItAsks() {
        for (int i = 0; i < WrongTokenBackoff.FREE_FAILURES; i++) backoff.failed("192.0.2.1");
        int compared = 0;
        for (int ms = 0; ms < 60_000; ms += 10) { // a wrong token every 10 ms for a minute
            if (backoff.mayCompare("192.0.2.1") == 0) {
                compared++;
                backoff.failed("192.0.2.1");
            }
            clock.advance(Duration.ofMillis(10));
        }
        assertThat(compared).as("one at each second after the third failure").isEqualTo(59);
        assertThat(backoff.lockedFor("192.0.2.1")).as("and the lockout kept growing").isGreaterThan(Duration.ofMinutes(4).toNanos());
    }

    @Test
    void anAddressThatIsNotLockedOutComparesEveryToken() {
        backoff.failed("192.0.2.1");
        backoff.failed("192.0.2.1");
        for (int i = 0; i < 5; i++) assertThat(backoff.mayCompare("192.0.2.1")).isZero();
        backoff.failed("192.0.2.1"); // the third: locked out for 1 s, and this comparison was its turn
        assertThat(backoff.mayCompare("192.0.2.1")).isEqualTo(Duration.ofSeconds(1).toNanos());
        clock.advance(Duration.ofSeconds(1)); // the lockout is over
        for (int i = 0; i < 5; i++) assertThat(backoff.mayCompare("192.0.2.1")).isZero();
    }

    @Test
    void aRightTokenClearsItsAddressesRecord() {
        for (int i = 0; i < 5; i++) backoff.failed("192.0.2.1");
        backoff.succeeded("192.0.2.1");
        assertThat(backoff.lockedFor("192.0.2.1")).isZero();
        assertThat(backoff.failed("192.0.2.1")).as("counting starts again").isZero();
    }

    @Test
    void anAddressQuietForFifteenMinutesStartsAgainFromNothing() {
        for (int i = 0; i < 6; i++) backoff.failed("192.0.2.1");
        clock.advance(WrongTokenBackoff.FORGET_AFTER.minusSeconds(1));
        assertThat(backoff.failed("192.0.2.1")).as("still remembered: the 7th failure").isEqualTo(Duration.ofSeconds(16).toNanos());
        clock.advance(WrongTokenBackoff.FORGET_AFTER);
        assertThat(backoff.failed("192.0.2.1")).as("forgotten: a first failure").isZero();
    }

    @Test
    void theTableHoldsABoundedNumberOfAddresses() {
        for (int i = 0; i < 5 * WrongTokenBackoff.MAX_ADDRESSES; i++) backoff.failed("10." + (i >> 16) + "." + ((i >> 8) & 255) + "." + (i & 255));
        assertThat(backoff.addresses()).isLessThanOrEqualTo(WrongTokenBackoff.MAX_ADDRESSES);
    }
}

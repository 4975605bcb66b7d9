package io.quotagate.loadtest.client;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

class ClientLimiterTest {
    private static final long S = 1_000_000_000L;
    private static final ClientLimiter.Options OPTIONS = new ClientLimiter.Options(Duration.ofSeconds(5), 10, Duration.ofSeconds(1));

    @Test
    void eachInstanceRefillsAtItsShareOfTheAppRate() {
        AtomicInteger instances = new AtomicInteger(2);
        ClientLimiter<String> limiter = new ClientLimiter<>(new FixedRate(120), instances::get, OPTIONS, 0);
        assertThat(limiter.instanceRate()).isEqualTo(60);   // 1 unit per second
        assertThat(limiter.offer("a", 1, 0)).isEqualTo(ClientLimiter.Offer.QUEUED);
        assertThat(limiter.nextWake(0)).isEqualTo(S);
        assertThat(limiter.poll(S - 1).granted()).isEmpty();
        assertThat(limiter.poll(S).granted()).containsExactly("a");
        instances.set(4);
        assertThat(limiter.instanceRate()).isEqualTo(30);
    }

    @Test
    void grantsAtOnceWhenUnitsAreSavedAndNobodyQueues() {
        ClientLimiter<String> limiter = new ClientLimiter<>(new FixedRate(60), () -> 1, OPTIONS, 0);
        assertThat(limiter.offer("a", 1, 3 * S)).isEqualTo(ClientLimiter.Offer.GRANTED);
        // the bucket saves at most one second of rate: the next one waits
        assertThat(limiter.offer("b", 1, 3 * S)).isEqualTo(ClientLimiter.Offer.QUEUED);
    }

    @Test
    void rejectsARequestWhoseWaitWouldExceedTheMaximumWait() {
        ClientLimiter<Integer> limiter = new ClientLimiter<>(new FixedRate(60), () -> 1, OPTIONS, 0);
        for (int i = 1; i <= 5; i++) assertThat(limiter.offer(i, 1, 0)).isEqualTo(ClientLimiter.Offer.QUEUED);
        assertThat(limiter.offer(6, 1, 0)).isEqualTo(ClientLimiter.Offer.REJECTED);   // 6 s away
    }

    @Test
    void rejectsWhenTheQueueIsFull() {
        ClientLimiter<Integer> limiter = new ClientLimiter<>(new FixedRate(6000), () -> 1,
                new ClientLimiter.Options(Duration.ofSeconds(5), 3, Duration.ofSeconds(1)), 0);
        for (int i = 1; i <= 3; i++) assertThat(limiter.offer(i, 1, 0)).isEqualTo(ClientLimiter.Offer.QUEUED);
        assertThat(limiter.offer(4, 1, 0)).isEqualTo(ClientLimiter.Offer.REJECTED);
    }

    @Test
    void aThrottlePausesTheWholeBucketUntilRetryAfterAndCutsTheRate() {
        Aimd aimd = new Aimd(new Aimd.Options(600, 60, 6000, 0.7, 60, Duration.ofSeconds(5)), 0);
        ClientLimiter<String> limiter = new ClientLimiter<>(aimd, () -> 1, OPTIONS, 0);
        limiter.throttled(S, S / 2, 2 * S);
        assertThat(aimd.unitsPerMinute()).isCloseTo(420, org.assertj.core.api.Assertions.within(1e-9));
        assertThat(limiter.offer("a", 1, S)).isEqualTo(ClientLimiter.Offer.QUEUED);
        assertThat(limiter.nextWake(S)).isEqualTo(3 * S);
        assertThat(limiter.poll(3 * S - 1).granted()).isEmpty();
        // nothing accumulated during the pause: the first unit comes 1/7 s after it ends
        assertThat(limiter.poll(3 * S).granted()).isEmpty();
        long oneUnit = (long) Math.ceil(60e9 / 420);
        assertThat(limiter.nextWake(3 * S)).isEqualTo(3 * S + oneUnit);
        assertThat(limiter.poll(3 * S + oneUnit).granted()).containsExactly("a");
    }

    @Test
    void expiresQueuedRequestsWhenTheRateDropsUnderThem() {
        Aimd aimd = new Aimd(new Aimd.Options(600, 60, 6000, 0.5, 60, Duration.ofSeconds(5)), 0);
        ClientLimiter<Integer> limiter = new ClientLimiter<>(aimd, () -> 1,
                new ClientLimiter.Options(Duration.ofSeconds(5), 100, Duration.ofSeconds(1)), 0);
        for (int i = 1; i <= 40; i++) assertThat(limiter.offer(i, 1, 0)).isEqualTo(ClientLimiter.Offer.QUEUED);  // 10/s: 4 s of queue
        for (int i = 0; i < 4; i++) limiter.throttled(S / 10, S / 10 + i, 0);  // 600 → 37.5 → clamped 60/min
        ClientLimiter.Released<Integer> at6 = limiter.poll(6 * S);
        assertThat(at6.granted()).isEmpty();    // nothing polled before the deadline: all 40 ran out of time
        assertThat(at6.expired()).hasSize(40);
        assertThat(limiter.queued()).isZero();
    }

    @Test
    void onlyRequestsThatQueuedCountAsHavingWaited() {
        Aimd aimd = new Aimd(new Aimd.Options(600, 60, 6000, 0.7, 60, Duration.ofSeconds(5)), 0);
        ClientLimiter<String> limiter = new ClientLimiter<>(aimd, () -> 1, OPTIONS, 0);
        limiter.accepted(10 * S, false);
        assertThat(aimd.unitsPerMinute()).isEqualTo(600);
        limiter.accepted(10 * S, true);
        assertThat(aimd.unitsPerMinute()).isEqualTo(660);
    }
}

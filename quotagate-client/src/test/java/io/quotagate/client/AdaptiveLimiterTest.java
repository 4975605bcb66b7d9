package io.quotagate.client;

import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.ManualClock;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/**
 * The limiter's rules, on a clock the test advances: the test polls the queue itself (the timer's
 * own polls, at the same clock reading, grant the same requests).
 */
class AdaptiveLimiterTest {
    private static final Function<String, List<String>> NO_HEADERS = name -> List.of();
    private final ManualClock clock = new ManualClock();

    private AdaptiveLimiter.Builder limiter(RateController controller, double initial) {
        return AdaptiveLimiter.builder().name("test").clock(clock::nanoTime).controller(controller).initialRate(initial)
                .minRate(60).maxRate(6000).maxWait(Duration.ofSeconds(5)).maxQueue(10).burst(Duration.ofSeconds(1));
    }

    private static Function<String, List<String>> headers(Map<String, String> fields) {
        return name -> fields.containsKey(name) ? List.of(fields.get(name)) : List.of();
    }

    private static AdaptiveLimiter.Permit now(CompletableFuture<AdaptiveLimiter.Permit> f) {
        assertThat(f).isCompleted();
        return f.join();
    }

    @Test
    void eachInstanceRefillsAtItsShareOfTheAppRate() {
        AtomicInteger instances = new AtomicInteger(2);
        AdaptiveLimiter limiter = limiter(RateController.fixed(120), 120).instanceCount(instances::get).build();
        assertThat(limiter.unitsPerMinute()).isEqualTo(60);          // one unit per second
        CompletableFuture<AdaptiveLimiter.Permit> a = limiter.acquireAsync(1);
        assertThat(a).isNotDone();
        clock.advance(Duration.ofMillis(999));
        limiter.poll();
        assertThat(a).isNotDone();
        clock.advance(Duration.ofMillis(1));
        limiter.poll();
        assertThat(now(a).waited()).isTrue();
        instances.set(4);
        assertThat(limiter.unitsPerMinute()).isEqualTo(30);
        assertThat(limiter.appUnitsPerMinute()).isEqualTo(120);
    }

    @Test
    void grantsAtOnceWhenUnitsAreSavedAndNobodyQueues() {
        AdaptiveLimiter limiter = limiter(RateController.fixed(60), 60).build();
        clock.advance(Duration.ofSeconds(3));
        assertThat(now(limiter.acquireAsync(1)).waited()).isFalse();
        // the bucket saves at most one second of rate: the next one waits
        assertThat(limiter.acquireAsync(1)).isNotDone();
    }

    @Test
    void rejectsUnsentARequestWhoseWaitWouldExceedTheMaximumWait() {
        AdaptiveLimiter limiter = limiter(RateController.fixed(60), 60).build();
        for (int i = 1; i <= 5; i++) assertThat(limiter.acquireAsync(1)).isNotDone();
        assertThatThrownBy(() -> limiter.acquireAsync(1).get())    // 6 s away
                .isInstanceOf(ExecutionException.class).cause()
                .isInstanceOfSatisfying(RejectedByLimiterException.class,
                        r -> assertThat(r.reason()).isEqualTo(RejectedByLimiterException.Reason.WAIT_TOO_LONG));
        assertThat(limiter.queued()).isEqualTo(5);
        assertThat(limiter.rejected.sum()).isEqualTo(1);
    }

    @Test
    void rejectsWhenTheQueueIsFull() {
        AdaptiveLimiter limiter = limiter(RateController.fixed(6000), 6000).maxQueue(3).build();
        for (int i = 1; i <= 3; i++) assertThat(limiter.acquireAsync(1)).isNotDone();
        assertThatThrownBy(() -> limiter.acquireAsync(1).get()).cause()
                .isInstanceOfSatisfying(RejectedByLimiterException.class,
                        r -> assertThat(r.reason()).isEqualTo(RejectedByLimiterException.Reason.QUEUE_FULL));
    }

    @Test
    void a429CutsTheRateAndPausesEveryRequestUntilRetryAfter() {
        AdaptiveLimiter limiter = limiter(RateController.aimd(0.7, 60, Duration.ofSeconds(5)), 600).build();
        clock.advance(Duration.ofSeconds(1));
        AdaptiveLimiter.Permit sent = now(limiter.acquireAsync(1));
        sent.complete(429, headers(Map.of("Retry-After", "2")));
        assertThat(limiter.appUnitsPerMinute()).isCloseTo(420, within(1e-9));
        CompletableFuture<AdaptiveLimiter.Permit> next = limiter.acquireAsync(1);
        clock.advance(Duration.ofSeconds(2).minusNanos(1));
        limiter.poll();
        assertThat(next).isNotDone();
        // nothing accumulated during the pause: the first unit comes 1/7 s after it ends
        clock.advanceNanos(1);
        limiter.poll();
        assertThat(next).isNotDone();
        clock.advanceNanos((long) Math.ceil(60e9 / 420));
        limiter.poll();
        assertThat(next).isCompleted();
        assertThat(limiter.throttled.sum()).isEqualTo(1);
    }

    @Test
    void a503ThrottlesOnlyWithRetryAfterAndADateCountsToo() {
        AdaptiveLimiter limiter = limiter(RateController.aimd(0.5, 60, Duration.ofSeconds(5)), 600).build();
        clock.advance(Duration.ofSeconds(1));
        now(limiter.acquireAsync(1)).complete(503, NO_HEADERS);
        assertThat(limiter.appUnitsPerMinute()).isEqualTo(600);
        now(limiter.acquireAsync(1)).complete(503, headers(Map.of("Retry-After", "Fri, 31 Dec 2100 23:59:59 GMT")));
        assertThat(limiter.appUnitsPerMinute()).isEqualTo(300);
        // paused until 2100, that is maxRetryAfter (5 min), longer than the maximum wait: refused at once
        assertThat(limiter.acquireAsync(1)).isCompletedExceptionally();
    }

    @Test
    void aThrottleOfARequestSentBeforeTheLastCutDoesNotCutAgain() {
        AdaptiveLimiter limiter = limiter(RateController.aimd(0.5, 60, Duration.ofSeconds(5)), 1200).build();
        clock.advance(Duration.ofSeconds(1));
        AdaptiveLimiter.Permit first = now(limiter.acquireAsync(1));
        AdaptiveLimiter.Permit second = now(limiter.acquireAsync(1));
        clock.advance(Duration.ofMillis(100));
        first.complete(429, headers(Map.of("Retry-After", "1")));
        second.complete(429, headers(Map.of("Retry-After", "1")));
        assertThat(limiter.appUnitsPerMinute()).isEqualTo(600);
    }

    @Test
    void aRequestGrantedBeforeTheCutButSentAfterItIsANewCongestionEvent() {
        AdaptiveLimiter limiter = limiter(RateController.aimd(0.5, 60, Duration.ofSeconds(5)), 1200).build();
        clock.advance(Duration.ofSeconds(1));
        AdaptiveLimiter.Permit first = now(limiter.acquireAsync(1));
        AdaptiveLimiter.Permit second = now(limiter.acquireAsync(1));
        clock.advance(Duration.ofMillis(100));
        first.complete(429, headers(Map.of("Retry-After", "0")));
        clock.advance(Duration.ofMillis(100));
        second.sent();                       // it waited for a connection: it went out after the cut
        second.complete(429, headers(Map.of("Retry-After", "0")));
        assertThat(limiter.appUnitsPerMinute()).isEqualTo(300);
    }

    @Test
    void increasesOnlyWhenRequestsWaitedForUnits() {
        AdaptiveLimiter limiter = limiter(RateController.aimd(0.7, 60, Duration.ofSeconds(5)), 600).build();
        clock.advance(Duration.ofSeconds(10));
        AdaptiveLimiter.Permit atOnce = now(limiter.acquireAsync(1));
        assertThat(atOnce.waited()).isFalse();
        atOnce.complete(200, NO_HEADERS);
        assertThat(limiter.appUnitsPerMinute()).isEqualTo(600);
        CompletableFuture<AdaptiveLimiter.Permit> queued;
        do queued = limiter.acquireAsync(1); while (queued.isDone());   // the bucket is empty: this one queues
        clock.advance(Duration.ofSeconds(1));
        limiter.poll();
        assertThat(now(queued).waited()).isTrue();
        now(queued).complete(204, NO_HEADERS);
        assertThat(limiter.appUnitsPerMinute()).isEqualTo(660);
    }

    @Test
    void theRateStaysBetweenMinAndMax() {
        AdaptiveLimiter limiter = limiter(RateController.aimd(0.5, 6000, Duration.ofSeconds(1)), 600).build();
        for (int i = 0; i < 10; i++) {
            clock.advance(Duration.ofSeconds(10));
            now(limiter.acquireAsync(0)).complete(429, headers(Map.of("Retry-After", "0")));
        }
        assertThat(limiter.appUnitsPerMinute()).isEqualTo(60);
        for (int i = 0; i < 5; i++) {
            clock.advance(Duration.ofSeconds(10));
            CompletableFuture<AdaptiveLimiter.Permit> f;
            do f = limiter.acquireAsync(1); while (f.isDone());
            clock.advance(Duration.ofSeconds(2));
            limiter.poll();
            now(f).complete(200, NO_HEADERS);
        }
        assertThat(limiter.appUnitsPerMinute()).isEqualTo(6000);
    }

    @Test
    void optionsDescribeTheWholeAppSoTheIncreaseStepShrinksWithTheInstanceCount() {
        AdaptiveLimiter limiter = limiter(RateController.aimd(0.7, 360, Duration.ofSeconds(5)), 900)
                .instanceCount(InstanceCountSource.fixed(3)).build();
        assertThat(limiter.unitsPerMinute()).isEqualTo(300);
        clock.advance(Duration.ofSeconds(5));
        CompletableFuture<AdaptiveLimiter.Permit> f;
        do f = limiter.acquireAsync(1); while (f.isDone());
        clock.advance(Duration.ofSeconds(1));
        limiter.poll();
        now(f).complete(200, NO_HEADERS);
        assertThat(limiter.unitsPerMinute()).isEqualTo(420);    // + 360 / 3
        assertThat(limiter.appUnitsPerMinute()).isEqualTo(1260);
    }

    @Test
    void aQueuedRequestStillWaitingAfterTheMaximumWaitIsRejectedUnsent() {
        RateController tenfold = new RateController() {
            @Override
            public double onThrottled(double rate, long now, long sentAt) {
                return rate / 10;
            }

            @Override
            public double onAccepted(double rate, long now, boolean waited) {
                return rate;
            }
        };
        AdaptiveLimiter limiter = limiter(tenfold, 600).maxQueue(100).build();
        AdaptiveLimiter.Permit sent = now(limiter.acquireAsync(0));
        List<CompletableFuture<AdaptiveLimiter.Permit>> queued = new java.util.ArrayList<>();
        for (int i = 0; i < 40; i++) queued.add(limiter.acquireAsync(1));   // 10/s: 4 s of queue, within the 5 s
        assertThat(queued).noneMatch(CompletableFuture::isDone);
        sent.complete(429, headers(Map.of("Retry-After", "0")));            // 60/min: 40 s of queue
        clock.advance(Duration.ofSeconds(5).plusNanos(1));
        limiter.poll();
        // nothing polled before the deadline: all 40 ran out of time, none was sent
        assertThat(queued).allSatisfy(f -> assertThatThrownBy(f::get).cause()
                .isInstanceOfSatisfying(RejectedByLimiterException.class,
                        r -> assertThat(r.reason()).isEqualTo(RejectedByLimiterException.Reason.TIMED_OUT)));
        assertThat(limiter.queued()).isZero();
    }

    @Test
    void cancellingAQueuedRequestGivesUpItsPlace() {
        AdaptiveLimiter limiter = limiter(RateController.fixed(60), 60).build();
        CompletableFuture<AdaptiveLimiter.Permit> first = limiter.acquireAsync(1);
        CompletableFuture<AdaptiveLimiter.Permit> second = limiter.acquireAsync(1);
        assertThat(first.cancel(false)).isTrue();
        assertThat(limiter.queued()).isEqualTo(1);
        clock.advance(Duration.ofSeconds(1));
        limiter.poll();
        assertThat(second).isCompleted();   // it moved up: one unit, one second
    }

    @Test
    void anInterruptedAcquireLeavesTheQueueUnsent() throws Exception {
        AdaptiveLimiter limiter = limiter(RateController.fixed(60), 60).build();
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            try {
                limiter.acquire(1);
            } catch (Throwable t) {
                thrown.set(t);
            }
        });
        waiter.start();
        Await.until("the caller queued", () -> limiter.queued() > 0);
        waiter.interrupt();
        waiter.join(5_000);
        assertThat(thrown.get()).isInstanceOf(InterruptedException.class);
        assertThat(limiter.queued()).isZero();
    }

    @Test
    void publishedFieldsMoveAPublishedPacingController() {
        AdaptiveLimiter limiter = limiter(RateController.publishedPacing(), 500).build();
        clock.advance(Duration.ofSeconds(1));
        now(limiter.acquireAsync(1)).complete(200, headers(Map.of(
                "RateLimit", "\"hidden\";r=150;t=3", "RateLimit-Policy", "\"hidden\";q=3000;w=60")));
        assertThat(limiter.appUnitsPerMinute()).isEqualTo(3000);
        // a malformed field changes nothing
        now(limiter.acquireAsync(0)).complete(200, headers(Map.of("RateLimit", "\"hidden\";r=-1")));
        assertThat(limiter.appUnitsPerMinute()).isEqualTo(3000);
    }

    @Test
    void misconfigurationFailsAtBuildNamingTheSetting() {
        assertThatThrownBy(() -> AdaptiveLimiter.builder().build()).hasMessageContaining("initialRate: required");
        assertThatThrownBy(() -> AdaptiveLimiter.builder().initialRate(100).minRate(200).build())
                .hasMessageContaining("initialRate 100.0 is outside [minRate 200.0");
        assertThatThrownBy(() -> AdaptiveLimiter.builder().initialRate(100).minRate(200).maxRate(150).build())
                .hasMessageContaining("minRate 200.0 is above maxRate 150.0");
        assertThatThrownBy(() -> AdaptiveLimiter.builder().maxQueue(0)).hasMessageContaining("maxQueue");
        assertThatThrownBy(() -> AdaptiveLimiter.builder().maxWait(Duration.ofSeconds(-1))).hasMessageContaining("maxWait");
        assertThatThrownBy(() -> AdaptiveLimiter.builder().initialRate(-3)).hasMessageContaining("initialRate");
        AdaptiveLimiter defaults = AdaptiveLimiter.builder().initialRate(600).build();
        assertThat(defaults.appUnitsPerMinute()).isEqualTo(600);
        assertThat(defaults.instanceCount()).isEqualTo(1);
    }
}

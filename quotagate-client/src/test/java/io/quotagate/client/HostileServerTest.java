package io.quotagate.client;

import io.quotagate.filter.testing.ManualClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The limiter against a server that answers what it likes: Retry-After of a year, of 10^30 seconds,
 * negative, text, in the past; RateLimit fields that are garbage or absurd; 429 forever. On a clock
 * the test advances and with no timer (a scheduler already shut down), so the test polls the queue
 * itself and every step is deterministic.
 */
class HostileServerTest {
    private static final Duration MAX_WAIT = Duration.ofSeconds(5);
    private static final Duration MAX_RETRY_AFTER = Duration.ofSeconds(30);
    private static final int MAX_QUEUE = 10;
    private final ManualClock clock = new ManualClock();

    private static ScheduledExecutorService noTimer() {
        ScheduledExecutorService s = Executors.newSingleThreadScheduledExecutor();
        s.shutdown();
        return s;
    }

    private AdaptiveLimiter.Builder limiter(RateController controller) {
        return AdaptiveLimiter.builder().name("hostile").clock(clock::nanoTime).scheduler(noTimer()).controller(controller)
                .initialRate(600).minRate(60).maxRate(6000).maxWait(MAX_WAIT).maxQueue(MAX_QUEUE)
                .maxRetryAfter(MAX_RETRY_AFTER).burst(Duration.ofSeconds(1));
    }

    private static Function<String, List<String>> headers(Map<String, List<String>> fields) {
        return name -> fields.getOrDefault(name, List.of());
    }

    private static Function<String, List<String>> retryAfter(String... values) {
        return headers(Map.of("Retry-After", List.of(values)));
    }

    private static AdaptiveLimiter.Permit now(CompletableFuture<AdaptiveLimiter.Permit> f) {
        assertThat(f).isCompleted();
        return f.join();
    }

    private static RejectedByLimiterException.Reason refusal(CompletableFuture<AdaptiveLimiter.Permit> f) {
        assertThat(f).isCompletedExceptionally();
        try {
            f.join();
            throw new AssertionError("not refused");
        } catch (java.util.concurrent.CompletionException e) {
            return ((RejectedByLimiterException) e.getCause()).reason();
        }
    }

    /**
     * How long the limiter pauses after the server's 429 with these Retry-After lines: a request for
     * no units, asked right after it, is granted when the pause ends. maxWait is longer than the
     * longest pause here, so it queues instead of being refused.
     */
    private Duration pauseAfter429(Function<String, List<String>> headers) {
        AdaptiveLimiter limiter = limiter(RateController.aimd()).maxWait(MAX_RETRY_AFTER.plusSeconds(1)).build();
        assertThatCode(() -> now(limiter.acquireAsync(0)).complete(429, headers)).doesNotThrowAnyException();
        CompletableFuture<AdaptiveLimiter.Permit> next = limiter.acquireAsync(0);
        long waited = 0;
        for (long step = 250_000_000L; !next.isDone() && waited <= MAX_RETRY_AFTER.toNanos(); waited += step) {
            clock.advanceNanos(step);
            limiter.poll();
        }
        assertThat(next).as("granted once the pause is over").isCompleted();
        return Duration.ofNanos(waited);
    }

    @ParameterizedTest(name = "Retry-After: [{0}] pauses {1} ms")
    @CsvSource(delimiter = '|', value = {
            "2 | 2000",
            "0 | 0",
            "Thu, 01 Jan 1970 00:00:00 GMT | 0",           // a date in the past: no pause
            "1.5 | 2000",                                   // rounded up
            "soon | 1000",                                  // unreadable: as if absent, 1 s
            "-1 | 1000",
            "-999999999999 | 1000",
            "'' | 1000",
            "29 | 29000",
            "31 | 30000",                                   // the maximum pause, maxRetryAfter
            "9999999999 | 30000",                           // once overflowed into no pause at all
            "999999999999 | 30000",                         // once read as unreadable: 1 s
            "99999999999999999999999 | 30000",
            "1e30 | 30000",
            "Fri, 31 Dec 2100 23:59:59 GMT | 30000",        // once a pause of 75 years
            "Fri, 31 Dec 9999 23:59:59 GMT | 30000",
    })
    void aRetryAfterOfAnyShapeGivesABoundedPause(String value, long millis) {
        assertThat(pauseAfter429(retryAfter(value))).isEqualTo(Duration.ofMillis(millis));
    }

    @Test
    void ofSeveralRetryAfterValuesTheLongestCountsAndNoneIsOneSecond() {
        assertThat(pauseAfter429(retryAfter("2", "5"))).isEqualTo(Duration.ofSeconds(5));
        assertThat(pauseAfter429(retryAfter("soon", "3"))).isEqualTo(Duration.ofSeconds(3));
        assertThat(pauseAfter429(retryAfter("4, 2"))).isEqualTo(Duration.ofSeconds(4));
        assertThat(pauseAfter429(retryAfter("2", "99999999999999"))).isEqualTo(MAX_RETRY_AFTER);
        assertThat(pauseAfter429(headers(Map.of()))).isEqualTo(Duration.ofSeconds(1));
    }

    @Test
    void aThrottleOfAnyDurationIsClampedAndNeverThrows() {
        for (Duration d : List.of(Duration.ofSeconds(Long.MAX_VALUE), Duration.ofSeconds(Long.MIN_VALUE),
                Duration.ofDays(365 * 1000L), Duration.ofSeconds(-5))) {
            AdaptiveLimiter limiter = limiter(RateController.aimd()).maxWait(Duration.ofMinutes(1)).build();
            assertThatCode(() -> now(limiter.acquireAsync(0)).throttled(d)).as("%s", d).doesNotThrowAnyException();
            CompletableFuture<AdaptiveLimiter.Permit> next = limiter.acquireAsync(0);
            if (d.isNegative()) {
                assertThat(next).as("%s: no pause", d).isCompleted();
                continue;
            }
            clock.advance(MAX_RETRY_AFTER.minusNanos(1));
            limiter.poll();
            assertThat(next).as("%s: paused", d).isNotDone();
            clock.advanceNanos(1);
            limiter.poll();
            assertThat(next).as("%s: paused at most maxRetryAfter", d).isCompleted();
        }
    }

    @Test
    void aPauseLongerThanTheMaximumWaitRefusesTheWaitingAndTheArrivingAtOnce() {
        AdaptiveLimiter limiter = limiter(RateController.aimd()).build();
        AdaptiveLimiter.Permit sent = now(limiter.acquireAsync(0));
        List<CompletableFuture<AdaptiveLimiter.Permit>> waiting = new ArrayList<>();
        for (int i = 0; i < 3; i++) waiting.add(limiter.acquireAsync(1));   // 10 a second: within the 5 s
        assertThat(waiting).noneMatch(CompletableFuture::isDone);

        sent.complete(429, retryAfter("Fri, 31 Dec 9999 23:59:59 GMT"));   // paused 30 s, longer than 5 s
        limiter.poll();                                                      // at the same clock reading
        assertThat(waiting).allSatisfy(f -> assertThat(refusal(f)).isEqualTo(RejectedByLimiterException.Reason.WAIT_TOO_LONG));
        assertThat(limiter.queued()).isZero();
        assertThat(refusal(limiter.acquireAsync(1))).as("not parked").isEqualTo(RejectedByLimiterException.Reason.WAIT_TOO_LONG);

        clock.advance(MAX_RETRY_AFTER.plusSeconds(1));
        assertThat(limiter.acquireAsync(1)).as("back after maxRetryAfter").isCompleted();
    }

    @Test
    void theTimerRefusesTheWaitersAPauseDoomsWithoutWaitingForTheirDeadline() throws Exception {
        // the shared timer this time; the clock stands still, so only the pause can end these waits
        AdaptiveLimiter limiter = AdaptiveLimiter.builder().clock(clock::nanoTime).controller(RateController.aimd())
                .initialRate(60).maxWait(MAX_WAIT).build();
        AdaptiveLimiter.Permit sent = now(limiter.acquireAsync(0));
        CompletableFuture<AdaptiveLimiter.Permit> waiting = limiter.acquireAsync(1);
        assertThat(waiting).isNotDone();
        sent.complete(429, retryAfter("3600"));
        // a safety net, not a measure: without the refusal this waits until the clock moves, never
        assertThatThrownBy(() -> waiting.get(30, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class).cause()
                .isInstanceOfSatisfying(RejectedByLimiterException.class,
                        r -> assertThat(r.reason()).isEqualTo(RejectedByLimiterException.Reason.WAIT_TOO_LONG));
    }

    static Stream<String[]> hostileFields() {
        StringBuilder many = new StringBuilder();
        StringBuilder manyPolicies = new StringBuilder();
        for (int i = 0; i < 5000; i++) {
            many.append(i == 0 ? "" : ", ").append("p").append(i).append(";r=").append(i);
            manyPolicies.append(i == 0 ? "" : ", ").append("p").append(i).append(";q=").append(i + 1).append(";w=1");
        }
        StringBuilder fewer = new StringBuilder();
        StringBuilder fewerPolicies = new StringBuilder();
        for (int i = 0; i < RateLimitFields.MAX_MEMBERS; i++) {
            fewer.append(i == 0 ? "" : ", ").append("p").append(i).append(";r=").append(i);
            fewerPolicies.append(i == 0 ? "" : ", ").append("p").append(i).append(";q=").append(i + 1).append(";w=1");
        }
        String huge = "999999999999999";
        return Stream.of(
                new String[]{"\u0000\u00ff%%%;;;", ""},
                new String[]{"\"burst\";r=", "\"burst\";q="},
                new String[]{"\"burst\";t=1", "\"burst\";w=60"},                     // missing r, q
                new String[]{"\"burst\";r=-5;t=-5", "\"burst\";q=-1;w=-60"},
                new String[]{"\"burst\";r=1;t=-5", "\"burst\";q=100;w=60"},
                new String[]{"\"burst\";r=1e3", "\"burst\";q=1.5;w=60"},
                new String[]{"\"burst\";r=9999999999999999999", "\"burst\";q=9999999999999999999;w=1"},
                new String[]{"\"burst\";r=" + huge + ";t=" + huge, "\"burst\";q=" + huge + ";w=1"},   // valid, absurd
                new String[]{"\"burst\";r=0;t=" + huge, "\"burst\";q=1;w=" + huge},
                new String[]{"\"burst\";r=0;t=0", "\"burst\";q=0;w=1"},
                new String[]{"\"burst\";r=" + huge, ""},
                new String[]{"\"burst\";r=\u0663", "\"burst\";q=\u0663"},             // an Arabic-Indic three
                new String[]{many.toString(), manyPolicies.toString()},               // 5,000 policies
                new String[]{fewer.toString(), fewerPolicies.toString()},             // 1,024: read
                new String[]{"\"" + "x".repeat(1_000_000) + "\";r=1", "\"" + "x".repeat(1_000_000) + "\";q=10;w=1"},
                new String[]{"a;r=1" + ";r=2".repeat(200_000), "a;q=1;w=1"},
                new String[]{"\"unterminated;r=1", "\"burst\";q=10;w=60"});
    }

    @ParameterizedTest
    @MethodSource("hostileFields")
    void malformedOrAbsurdRateLimitFieldsNeverThrowAndLeaveTheRateWithinItsBounds(String limit, String policy) {
        for (RateController controller : List.of(RateController.publishedPacing(), RateController.aimd())) {
            AdaptiveLimiter limiter = limiter(controller).build();
            for (int status : new int[]{200, 429, 503}) {
                clock.advance(Duration.ofMinutes(1));
                Map<String, List<String>> fields = new HashMap<>();
                fields.put("RateLimit", List.of(limit));
                fields.put("RateLimit-Policy", List.of(policy));
                fields.put("Retry-After", List.of("1e30"));
                assertThatCode(() -> now(limiter.acquireAsync(0)).complete(status, headers(fields))).doesNotThrowAnyException();
                assertThat(limiter.appUnitsPerMinute()).isBetween(60.0, 6000.0);
            }
            clock.advance(Duration.ofMinutes(1));                   // past the last pause
            assertThatCode(() -> now(limiter.acquireAsync(0)).published(limit, policy)).doesNotThrowAnyException();
            assertThatCode(() -> now(limiter.acquireAsync(0)).published(null, null)).doesNotThrowAnyException();
            assertThat(limiter.appUnitsPerMinute()).isBetween(60.0, 6000.0);
        }
    }

    /**
     * A server that answers 429 forever, with every hostile Retry-After in turn: callers far above
     * any rate; at every step no more than maxQueue wait, nobody waits beyond maxWait, the rate falls
     * to its minimum. Then the server recovers, and so does the rate.
     */
    @Test
    void aServerAnswering429ForeverNeverHoldsACallerBeyondTheBoundsAndTheRateRecoversWithIt() throws Exception {
        AdaptiveLimiter limiter = limiter(RateController.aimd(0.5, 60, Duration.ofSeconds(1))).build();
        List<String> hostile = List.of("999999999999", "1e30", "-1", "soon", "", "0", "1.5",
                "Thu, 01 Jan 1970 00:00:00 GMT", "Fri, 31 Dec 2100 23:59:59 GMT", "Fri, 31 Dec 9999 23:59:59 GMT");
        Map<CompletableFuture<AdaptiveLimiter.Permit>, Long> pending = new HashMap<>();
        Map<RejectedByLimiterException.Reason, Integer> refusals = new EnumMap<>(RejectedByLimiterException.Reason.class);
        int[] sent = {0};
        boolean[] healthy = {false};
        long step = Duration.ofMillis(100).toNanos();
        Runnable tick = () -> {
            for (int caller = 0; caller < 20; caller++) pending.put(limiter.acquireAsync(1), clock.nanoTime());
            clock.advanceNanos(step);
            limiter.poll();
            assertThat(limiter.queued()).isLessThanOrEqualTo(MAX_QUEUE);
            var it = pending.entrySet().iterator();
            while (it.hasNext()) {
                var e = it.next();
                CompletableFuture<AdaptiveLimiter.Permit> f = e.getKey();
                if (!f.isDone()) {
                    assertThat(clock.nanoTime() - e.getValue()).as("waiting within maxWait").isLessThanOrEqualTo(MAX_WAIT.toNanos());
                    continue;
                }
                it.remove();
                if (f.isCompletedExceptionally()) {
                    refusals.merge(refusal(f), 1, Integer::sum);
                } else if (healthy[0]) {
                    sent[0]++;
                    f.join().complete(200, headers(Map.of()));
                } else {
                    f.join().complete(429, retryAfter(hostile.get(sent[0]++ % hostile.size())));
                }
            }
        };
        for (int i = 0; i < 3000; i++) tick.run();                  // five minutes of 429s
        assertThat(limiter.appUnitsPerMinute()).isEqualTo(60);
        assertThat(sent[0]).as("requests reach the server: the limiter probes").isGreaterThan(hostile.size());
        assertThat(refusals).containsKeys(RejectedByLimiterException.Reason.QUEUE_FULL,
                RejectedByLimiterException.Reason.WAIT_TOO_LONG);

        healthy[0] = true;
        clock.advance(MAX_RETRY_AFTER);                               // the last pause is over
        for (int i = 0; i < 600; i++) tick.run();                     // one minute of 200s
        assertThat(limiter.appUnitsPerMinute()).as("recovered").isGreaterThanOrEqualTo(600);
    }

    @Test
    void durationOptionsAreBoundedAtBuild() {
        assertThatThrownBy(() -> AdaptiveLimiter.builder().maxRetryAfter(Duration.ofSeconds(-1))).hasMessageContaining("maxRetryAfter");
        assertThatThrownBy(() -> AdaptiveLimiter.builder().maxRetryAfter(Duration.ofDays(2))).hasMessageContaining("maxRetryAfter");
        assertThatThrownBy(() -> AdaptiveLimiter.builder().maxWait(Duration.ofSeconds(Long.MAX_VALUE))).hasMessageContaining("maxWait");
        assertThatCode(() -> AdaptiveLimiter.builder().maxRetryAfter(Duration.ZERO).maxWait(Duration.ofDays(1))).doesNotThrowAnyException();
    }
}

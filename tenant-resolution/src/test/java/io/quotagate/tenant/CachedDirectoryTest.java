package io.quotagate.tenant;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * {@link TenantDirectory#cached} can never hang its caller: a cached tenant is answered from its entry
 * whatever the source does (hangs, fails, for longer than the refresh time and the expiry), a tenant the
 * cache does not know waits at most the lookup timeout, beyond the most lookups at once it is refused at
 * once, one lookup runs per tenant, and failures are logged once per interval. Time is a manual ticker;
 * a source that "hangs" blocks on a latch the test opens. Bounds on real time ("at once", "within the
 * timeout") are asserted with a generous {@code assertTimeoutPreemptively}: a loaded machine cannot make
 * them fail, while a call that waited for the source would block until the latch opens and fail them.
 */
class CachedDirectoryTest {
    private static final long POSITIVE = Duration.ofMinutes(5).toNanos();
    private static final long NEGATIVE = Duration.ofSeconds(30).toNanos();
    private static final Duration GENEROUS = Duration.ofSeconds(5);
    private final AtomicLong now = new AtomicLong();

    /** A directory whose answers the test sets, which hangs while {@link #hang} is set, and counts its calls. */
    private static final class Source implements TenantDirectory {
        final AtomicInteger calls = new AtomicInteger();
        final CountDownLatch entered = new CountDownLatch(64);
        volatile String plan = "pro";
        volatile CountDownLatch hang;
        volatile RuntimeException failure;

        @Override
        public Optional<String> planOf(String tenant) {
            calls.incrementAndGet();
            entered.countDown();
            CountDownLatch h = hang;
            if (h != null) {
                try {
                    h.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            RuntimeException f = failure;
            if (f != null) throw f;
            return tenant.startsWith("unknown") ? Optional.empty() : Optional.of(plan);
        }
    }

    private TenantDirectory threaded(Source source, Duration timeout, int maxLookups) {
        return TenantDirectory.cached(source, 1000, Duration.ofNanos(POSITIVE), Duration.ofNanos(NEGATIVE), timeout,
                maxLookups, now::get);
    }

    /** Lookups on the calling thread: a background read has ended when the call returns. */
    private TenantDirectory inline(TenantDirectory source) {
        return new CachedDirectory(source, 1000, POSITIVE, NEGATIVE, Duration.ofMillis(250).toNanos(), 8, now::get,
                Runnable::run);
    }

    private void advance(Duration d) {
        now.addAndGet(d.toNanos());
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) throw new AssertionError("not within 10 s: " + what);
            Thread.sleep(5);
        }
    }

    @Test
    void aCachedTenantIsAnsweredFromItsEntryWhileItsRefreshHangsPastTheRefreshTimeAndTheExpiry() throws Exception {
        Source source = new Source();
        TenantDirectory d = threaded(source, Duration.ofMillis(250), 8);
        assertThat(d.planOf("acme")).contains("pro");

        CountDownLatch hang = new CountDownLatch(1);
        source.hang = hang;
        source.plan = "enterprise";
        assertTimeoutPreemptively(GENEROUS, () -> {
            // an hour of requests, one every 4 minutes: past the refresh time (2.5 min) at once, past the
            // expiry (5 min) after the second, while the one refresh that started hangs all along
            for (int minute = 0; minute <= 60; minute += 4) {
                advance(Duration.ofMinutes(4));
                for (int i = 0; i < 50; i++) assertThat(d.planOf("acme")).as("minute " + minute).contains("pro");
            }
        });
        // the refresh runs on the directory's own thread: on a loaded machine it may not have reached the source yet
        await("the refresh reaching the source", () -> source.calls.get() >= 2);
        assertThat(source.calls).as("the first lookup and the one refresh, still running").hasValue(2);

        hang.countDown();
        await("the refresh's answer", () -> d.planOf("acme").equals(Optional.of("enterprise")));
    }

    @Test
    void anOutageLongerThanTheRefreshAndTheExpiryServesTheCachedAnswerAndAsksTheSourceOncePerRetry() {
        Source source = new Source();
        TenantDirectory d = inline(source);
        assertThat(d.planOf("acme")).contains("pro");
        source.failure = new IllegalStateException("connection refused");
        for (int minute = 4; minute <= 120; minute += 4) {
            advance(Duration.ofMinutes(4));
            for (int i = 0; i < 20; i++) assertThat(d.planOf("acme")).as("minute " + minute).contains("pro");
        }
        assertThat(source.calls).as("one read on the first request of each step, none per request").hasValue(1 + 30);
        advance(Duration.ofSeconds(4));
        assertThat(d.planOf("acme")).contains("pro");
        assertThat(source.calls).as("a failed read is tried again 5 s later at the soonest").hasValue(31);

        source.failure = null;
        source.plan = "enterprise";
        advance(Duration.ofSeconds(1));
        assertThat(d.planOf("acme")).as("the request that reads it again").contains("pro");
        assertThat(d.planOf("acme")).as("the directory is back").contains("enterprise");
    }

    @Test
    void aTenantNotRequestedForTheExpiryIsDroppedAndLookedUpAgain() {
        Source source = new Source();
        TenantDirectory d = inline(source);
        assertThat(d.planOf("acme")).contains("pro");
        source.failure = new IllegalStateException("connection refused");
        advance(Duration.ofMinutes(5).plusSeconds(1));
        assertThatThrownBy(() -> d.planOf("acme")).isInstanceOf(IllegalStateException.class)
                .hasMessage("tenant 'acme': the tenant directory failed: java.lang.IllegalStateException: connection refused")
                .hasCauseReference(source.failure);
    }

    @Test
    void aNewTenantWaitsAtMostTheTimeoutAndTheLateAnswerIsCached() throws Exception {
        Source source = new Source();
        TenantDirectory d = threaded(source, Duration.ofMillis(200), 8);
        CountDownLatch hang = new CountDownLatch(1);
        source.hang = hang;
        assertTimeoutPreemptively(GENEROUS, () -> assertThatThrownBy(() -> d.planOf("newco"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("tenant 'newco': the tenant directory did not answer within 200 ms"));
        source.hang = null;
        hang.countDown();
        await("the late answer cached", () -> {
            try {
                return d.planOf("newco").equals(Optional.of("pro"));
            } catch (IllegalStateException stillRunning) {
                return false;
            }
        });
        assertThat(source.calls).as("the late answer was cached, not asked again").hasValue(1);
    }

    @Test
    void beyondMaxLookupsANewTenantIsRefusedAtOnceAndEachTenantHasOneLookup() throws Exception {
        Source source = new Source();
        TenantDirectory d = threaded(source, Duration.ofSeconds(10), 2);
        CountDownLatch hang = new CountDownLatch(1);
        source.hang = hang;
        List<CompletableFuture<Optional<String>>> waiting = new ArrayList<>();
        ExecutorService requests = Executors.newFixedThreadPool(6); // not the common pool: one thread on 2 cores
        for (int i = 0; i < 6; i++) {
            String tenant = i % 2 == 0 ? "one" : "two";
            waiting.add(CompletableFuture.supplyAsync(() -> d.planOf(tenant), requests));
        }
        await("two lookups running", () -> source.calls.get() == 2);
        assertTimeoutPreemptively(GENEROUS, () -> assertThatThrownBy(() -> d.planOf("three"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("tenant 'three': all 2 lookups of the tenant directory are running; not asked"));
        hang.countDown();
        for (CompletableFuture<Optional<String>> w : waiting) assertThat(w.get(10, TimeUnit.SECONDS)).contains("pro");
        requests.shutdown();
        assertThat(source.calls).as("six requests of two tenants: two lookups").hasValue(2);
        source.hang = null;
        assertThat(d.planOf("three")).as("a slot is free again").contains("pro");
    }

    @Test
    void aRefreshThatBringsAnEqualContractKeepsTheCachedInstance() {
        TenantDirectory fresh = new TenantDirectory() {
            @Override
            public Optional<String> planOf(String tenant) {
                return Optional.of("pro");
            }

            @Override
            public Optional<TenantContract> contractOf(String tenant) {
                return Optional.of(new TenantContract("pro", List.of())); // a new, equal instance every time
            }
        };
        TenantDirectory d = inline(fresh);
        TenantContract first = d.contractOf("acme").orElseThrow();
        advance(Duration.ofMinutes(3));
        d.contractOf("acme");
        advance(Duration.ofMinutes(3));
        d.contractOf("acme");
        assertThat(d.contractOf("acme").orElseThrow()).isSameAs(first);
    }

    @Test
    void anInvalidationWhileALookupRunsIsNotUndoneByTheOldAnswer() throws Exception {
        Source source = new Source();
        TenantDirectory d = threaded(source, Duration.ofSeconds(10), 8);
        CountDownLatch hang = new CountDownLatch(1);
        source.hang = hang;
        ExecutorService request = Executors.newSingleThreadExecutor();
        CompletableFuture<Optional<String>> before = CompletableFuture.supplyAsync(() -> d.planOf("acme"), request);
        await("the first lookup running", () -> source.calls.get() == 1);
        source.plan = "enterprise"; // the first lookup read "pro" before the change... and answers after it
        d.invalidate("acme");
        source.hang = null;
        assertThat(d.planOf("acme")).as("a new lookup after the invalidation").contains("enterprise");
        hang.countDown();
        before.get(10, TimeUnit.SECONDS);
        request.shutdown();
        assertThat(d.planOf("acme")).as("the late lookup's answer is not cached over it").contains("enterprise");
    }

    @Test
    void anUnknownTenantIsCachedForTheShortExpiryAndAFailureIsNotCached() {
        Source source = new Source();
        TenantDirectory d = inline(source);
        assertThat(d.planOf("unknown-1")).isEmpty();
        assertThat(d.planOf("unknown-1")).isEmpty();
        assertThat(source.calls).hasValue(1);
        source.failure = new IllegalStateException("connection refused");
        assertThatThrownBy(() -> d.planOf("newco")).isInstanceOf(IllegalStateException.class);
        source.failure = null;
        assertThat(d.planOf("newco")).as("the failure was not cached").contains("pro");
    }

    @Test
    void failedRefreshesAreLoggedOncePerIntervalAndCaffeineLogsNothing() {
        Source source = new Source();
        TenantDirectory d = inline(source);
        for (int i = 0; i < 30; i++) d.planOf("tenant-" + i);
        source.failure = new IllegalStateException("connection refused");
        List<LogRecord> records = new ArrayList<>();
        Handler handler = new Handler() {
            @Override
            public synchronized void publish(LogRecord r) {
                records.add(r);
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        Logger root = Logger.getLogger("");
        root.addHandler(handler);
        try {
            advance(Duration.ofMinutes(3));
            // 30 failed refreshes now, 30 more 5 s later (each tenant's retry), 30 more 10 s later: the first
            // is logged, the next 59 only counted in the line of the next interval
            for (int round = 0; round < 3; round++) {
                for (int i = 0; i < 30; i++) assertThat(d.planOf("tenant-" + i)).contains("pro");
                advance(Duration.ofSeconds(5));
            }
        } finally {
            root.removeHandler(handler);
        }
        List<String> messages = records.stream().map(LogRecord::getMessage).toList();
        assertThat(messages).noneMatch(m -> m.contains("Exception thrown during refresh"));
        assertThat(messages).filteredOn(m -> m.startsWith("tenant directory failed")).containsExactly(
                "tenant directory failed to refresh tenant tenant-0; its cached answer stands",
                "tenant directory failed to refresh tenant tenant-0; its cached answer stands (and 59 refreshes more "
                        + "failed in the last 10 s or longer, not logged)");
    }
}

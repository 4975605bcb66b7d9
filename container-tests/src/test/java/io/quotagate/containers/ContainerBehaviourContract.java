package io.quotagate.containers;

import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.Http;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The behaviour every servlet container must show with {@code QuotaFilter} registered as docs/installation.md's
 * "From web.xml (or ServletContext.addFilter)" section shows (async support on, {@code REQUEST}
 * dispatches, {@code /*}), serving {@link TestApp} with {@code container-plans.yml}: a free plan of
 * 3 units a minute and one report in flight per tenant.
 *
 * <p>A subclass starts its container once on 127.0.0.1, port 0; each test uses a tenant of its own,
 * so tests share the server without sharing buckets or slots. Nothing asserts on timing: waits are
 * latches and bounded polls, and each test has a time-out so a hung container fails instead of
 * blocking the build.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public abstract class ContainerBehaviourContract {
    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private int port;
    /** False while this leg cannot run here ({@link #virtualThreads()} on a JDK before 21): nothing to stop. */
    private boolean runnable;

    /**
     * Whether this leg's container runs requests on virtual threads (the {@code *VirtualThreadsTest} legs, JDK 21 or
     * later: on an older JDK the class is skipped by an assumption that says so).
     */
    protected boolean virtualThreads() {
        return false;
    }

    /** Starts the container serving {@link TestApp} on 127.0.0.1, port 0; returns the bound port. */
    protected abstract int start() throws Exception;

    /** Stops what {@link #start()} started. */
    protected abstract void stop() throws Exception;

    @BeforeAll
    void startContainer() throws Exception {
        if (virtualThreads() && !VirtualThreadLeg.available()) return; // each test is skipped, see below
        runnable = true;
        port = start();
    }

    /**
     * Skips each test of a leg that cannot run on this JDK, naming the reason: per test, not in {@link #startContainer},
     * because a class skipped there is reported as no test at all, which looks like a pass.
     */
    @BeforeEach
    void skipWhereThisLegCannotRun() {
        if (virtualThreads()) VirtualThreadLeg.assumeAvailable();
    }

    @AfterAll
    void stopContainer() throws Exception {
        if (!runnable) return;
        // release anything a failed test left held, so the container can stop without waiting
        TestApp.RELEASE.values().forEach(java.util.concurrent.CountDownLatch::countDown);
        stop();
    }

    @Test
    void burstIsRefusedWith429RetryAfterAndProblemJson() throws Exception {
        String tenant = tenant();
        for (int i = 0; i < 3; i++) {
            assertThat(get("/items/" + i, tenant).statusCode()).as("request %d within capacity 3", i).isEqualTo(200);
        }
        HttpResponse<String> refused = get("/items/4", tenant);
        assertThat(refused.statusCode()).isEqualTo(429);
        String retryAfter = refused.headers().firstValue("Retry-After").orElseThrow();
        assertThat(Integer.parseInt(retryAfter)).isGreaterThanOrEqualTo(1);
        assertThat(refused.headers().firstValue("Content-Type").orElseThrow()).startsWith("application/problem+json");
        assertThat(refused.body()).contains("\"reason\":\"tenant_rate\"");
    }

    @Test
    void missingTenantIs401AndInvalidTenantIs400() throws Exception {
        HttpResponse<String> missing = get("/items/1", null);
        assertThat(missing.statusCode()).isEqualTo(401);
        assertThat(missing.body()).contains("missing_tenant");

        // the JDK client refuses no printable header value, but send it raw so nothing is re-encoded
        String invalid = Http.raw(port, "GET", "/items/1", "X-Tenant-Id: bad id!\r\n");
        assertThat(Http.status(invalid)).isEqualTo(400);
        assertThat(invalid).contains("invalid_tenant");
    }

    @Test
    void healthPassesWithoutTenant() throws Exception {
        HttpResponse<String> health = get("/health", null);
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(health.body()).isEqualTo("ok");
    }

    @Test
    void concurrencyCapHoldsAcrossAsyncCompletion() throws Exception {
        String tenant = tenant();
        String hold = tenant + "-first";
        CompletableFuture<HttpResponse<String>> first = holdReport(tenant, hold);

        HttpResponse<String> second = get("/reports/2", tenant);
        assertThat(second.statusCode()).isEqualTo(429);
        assertThat(second.body()).contains("\"reason\":\"concurrency\"");

        TestApp.release(hold).countDown();
        assertThat(first.get(20, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        // the slot is freed by the async listener, which may run just after the response was sent
        assertThat(pollUntilAdmitted("/reports/3", tenant)).isEqualTo(200);
    }

    /**
     * An adaptive group ({@code adaptive}: its limit pinned at 2 by {@code min} = {@code max}) keeps a quiet tenant's
     * share: a tenant alone holds its fair share, 2 / (1 + a newcomer) = 1, and is refused a second slot
     * ({@code concurrency}), while a second tenant still gets the slot kept for it.
     */
    @Test
    void anAdaptiveGroupKeepsAQuietTenantsShare() throws Exception {
        String busy = tenant();
        String quiet = tenant();
        CompletableFuture<HttpResponse<String>> busyFirst = hold("/adaptive/1", busy, busy + "-adaptive");

        HttpResponse<String> busySecond = get("/adaptive/2", busy);
        assertThat(busySecond.statusCode()).as(busySecond.body()).isEqualTo(429);
        assertThat(busySecond.body()).contains("\"reason\":\"concurrency\"");

        CompletableFuture<HttpResponse<String>> quietFirst = hold("/adaptive/1", quiet, quiet + "-adaptive");
        TestApp.release(busy + "-adaptive").countDown();
        TestApp.release(quiet + "-adaptive").countDown();
        assertThat(busyFirst.get(20, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        assertThat(quietFirst.get(20, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    }

    /**
     * The servlet runs on the threads this leg promises: virtual ones on a {@link #virtualThreads()} leg, platform
     * ones otherwise, for a request served at once and for one resumed after its delay (plan {@code spaced}: the
     * second of two requests sent at once waits for its unit), which the container dispatches again.
     */
    @Test
    void requestsRunOnTheThreadsOfThisLeg() throws Exception {
        String expected = virtualThreads() ? "virtual" : "platform";
        List<CompletableFuture<HttpResponse<String>>> sent = List.of(
                CLIENT.sendAsync(request("/paced/threads-1", "spaced-threads"), HttpResponse.BodyHandlers.ofString()),
                CLIENT.sendAsync(request("/paced/threads-2", "spaced-threads"), HttpResponse.BodyHandlers.ofString()));
        int delayed = 0;
        for (CompletableFuture<HttpResponse<String>> r : sent) {
            HttpResponse<String> response = r.get(30, TimeUnit.SECONDS);
            assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
            assertThat(response.headers().firstValue(TestApp.SERVED_ON)).as("the servlet's thread").contains(expected);
            if (response.headers().firstValue("Quota-Delay").isPresent()) delayed++;
        }
        assertThat(delayed).as("requests delayed, then dispatched again, of the two").isEqualTo(1);
    }

    @Test
    void asyncTimeoutDoesNotLeakThePermit() throws Exception {
        String tenant = tenant();
        // no listener completes it, so the container ends it after 200 ms with an error dispatch (500,
        // Servlet 6.0 section 2.3.3.3); the filter's onComplete must still free the slot
        HttpResponse<String> timedOut = get("/reports/1?hang=1", tenant);
        assertThat(timedOut.statusCode()).isEqualTo(500);
        assertThat(pollUntilAdmitted("/reports/2", tenant)).isEqualTo(200);
    }

    @Test
    void aClientThatDisconnectsDoesNotLeakThePermit() throws Exception {
        String tenant = tenant();
        String hold = tenant + "-gone";
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", port)) {
            socket.getOutputStream().write(("GET /reports/1?hold=" + hold + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "X-Tenant-Id: " + tenant + "\r\n\r\n").getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
            socket.getOutputStream().flush();
            assertThat(TestApp.started(hold).await(20, TimeUnit.SECONDS)).as("held report started").isTrue();
        } // the client goes away while its report holds the slot
        // the report ends (its answer goes nowhere, or the container ends it on the broken connection):
        // either way the slot must come back
        TestApp.release(hold).countDown();
        assertThat(pollUntilAdmitted("/reports/2", tenant)).isEqualTo(200);
    }

    /**
     * docs/costs.md: a report after the request completed is ignored and answers false, on every container
     * (Jetty 12 threw a NullPointerException from its recycled request). The report waits until the slot is
     * free again, which the filter does when the request has ended.
     */
    @Test
    void aReportAfterTheAsyncRequestCompletedIsIgnoredAndAnswersFalse() throws Exception {
        String tenant = tenant();
        String key = tenant + "-late";
        assertThat(get("/reports/1?late=" + key, tenant).statusCode()).isEqualTo(200);
        assertThat(pollUntilAdmitted("/reports/2", tenant)).as("the first request has ended").isEqualTo(200);
        TestApp.release(key).countDown();
        String answer = Await.until("the late report's answer", () -> TestApp.LATE_REPORTS.get(key),
                java.util.Objects::nonNull);
        assertThat(answer).isEqualTo("false");
    }

    /**
     * docs/costs.md: an estimator that fails on its own (a plain RuntimeException, or an Error, thrown on after the
     * answer) gets the filter's 500 problem, not the container's error page; its slot comes back (one per tenant).
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"runtime", "error"})
    void anEstimatorThatFailsIsAProblemAnswerAndFreesItsSlot(String failure) throws Exception {
        String tenant = tenant();
        HttpResponse<String> failed = post("/estimated/1", tenant, failure);
        assertThat(failed.statusCode()).isEqualTo(500);
        assertThat(failed.headers().firstValue("Content-Type").orElseThrow()).startsWith("application/problem+json");
        assertThat(failed.body()).contains("\"reason\":\"internal_error\"").doesNotContain("bug", "<html");
        HttpResponse<String> next = post("/estimated/2", tenant, "5");
        assertThat(next.statusCode()).as(next.body()).isEqualTo(200);
    }

    @Test
    void headAndPathVariantsCannotEscapeTheRoute() throws Exception {
        String tenant = tenant();
        String hold = tenant + "-held";
        CompletableFuture<HttpResponse<String>> held = holdReport(tenant, hold);
        String header = "X-Tenant-Id: " + tenant + "\r\n";

        // a rule for GET covers HEAD: HEAD must meet the same held slot
        String head = Http.raw(port, "HEAD", "/reports/1", header);
        assertThat(Http.status(head)).as(head).isEqualTo(429);

        // raw, because HTTP clients normalise these; a container may merge or refuse them itself
        for (String path : new String[] {"/reports//1", "/reports/./1"}) {
            String answer = Http.raw(port, "GET", path, header);
            assertThat(Http.status(answer)).as(path + " -> " + answer).isIn(pathVariantOutcomes(path));
            if (Http.status(answer) == 429) {
                assertThat(answer).as(path).contains("\"reason\":\"concurrency\"");
            }
        }

        TestApp.release(hold).countDown();
        assertThat(held.get(20, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    }

    /**
     * The statuses allowed for {@code path} ({@code /reports//1}, {@code /reports/./1}) while the
     * tenant's report slot is held: 429, the filter normalised it and charged it to the reports route.
     * A container that refuses the path itself overrides this with {400, 429}: both are safe, only an
     * admission (200, as another route) is an escape.
     */
    protected Set<Integer> pathVariantOutcomes(String path) {
        return Set.of(429);
    }

    protected URI uri(String path) {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    /**
     * A tenant whose plan throttles ({@code paced}: 1 unit, 20 a second, {@code max-delay: 2s}) sending ten
     * requests at once: none is refused; the nine short of units are delayed (in async mode, resumed by a
     * dispatch) by at most max-delay, as their {@code Quota-Delay} says, then answered by the servlet.
     */
    @Test
    void aThrottledBurstIsDelayedNotRefused() throws Exception {
        List<CompletableFuture<HttpResponse<String>>> sent = new java.util.ArrayList<>();
        for (int i = 0; i < 10; i++) {
            sent.add(CLIENT.sendAsync(request("/paced/" + i, "paced-tenant"), HttpResponse.BodyHandlers.ofString()));
        }
        int delayed = 0;
        for (CompletableFuture<HttpResponse<String>> r : sent) {
            HttpResponse<String> response = r.get(30, TimeUnit.SECONDS);
            assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
            assertThat(response.body()).isEqualTo("ok");
            java.util.Optional<String> delay = response.headers().firstValue("Quota-Delay");
            if (delay.isPresent()) {
                delayed++;
                assertThat(Long.parseLong(delay.get())).as("planned delay, ms").isBetween(1L, 2000L);
            }
        }
        // the refill between the requests' arrivals may spare one or two of them a delay
        assertThat(delayed).isGreaterThanOrEqualTo(5);
    }

    /**
     * Issue 56: the servlet of a throttled route need not support async. The filter starts async mode and, after the
     * delay, dispatches the request back to its path, where it reaches the servlet as an {@code ASYNC} dispatch
     * that the servlet serves synchronously. Plan {@code spaced}: one unit every 3 s, {@code max-delay: 5s}; the
     * second of two requests sent at once is delayed (up to 3 s), then answered by the servlet
     * registered without async support. Seen the same on Jetty 12, Tomcat 11 and 10.1 and Undertow 2.3.
     */
    @Test
    void aServletWithoutAsyncSupportIsStillDelayedNotRefused() throws Exception {
        String tenant = "spaced-plain";
        List<CompletableFuture<HttpResponse<String>>> sent = List.of(
                CLIENT.sendAsync(request("/plain/1", tenant), HttpResponse.BodyHandlers.ofString()),
                CLIENT.sendAsync(request("/plain/2", tenant), HttpResponse.BodyHandlers.ofString()));
        int delayed = 0;
        for (CompletableFuture<HttpResponse<String>> r : sent) {
            HttpResponse<String> response = r.get(30, TimeUnit.SECONDS);
            assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
            assertThat(response.body()).as("answered by the servlet").isEqualTo("ok");
            java.util.Optional<String> delay = response.headers().firstValue("Quota-Delay");
            if (delay.isPresent()) {
                delayed++;
                assertThat(Long.parseLong(delay.get())).as("planned delay, ms").isBetween(1L, 3000L);
            }
        }
        // two requests sent together arrive well within the 3 s the second one's unit takes to refill
        assertThat(delayed).as("requests delayed of the two").isEqualTo(1);
    }

    /**
     * What does need async support is the chain in front of the servlet: the quota filter and every filter before it.
     * Behind a filter registered without it ({@code /front/*}) the request cannot go async, so one that would be
     * delayed is refused at once, {@code throttle_full}, with the wait its units had (plan {@code dropping}: one unit
     * every 50 s), and its reservation is given back: the next request is refused with the same wait, not twice it.
     */
    @Test
    void behindAFilterWithoutAsyncSupportAThrottledRequestIsRefusedThrottleFull() throws Exception {
        String tenant = "dropping-front";
        assertThat(get("/front/1", tenant).statusCode()).isEqualTo(200);
        for (int i = 2; i <= 3; i++) {
            HttpResponse<String> refused = get("/front/" + i, tenant);
            assertThat(refused.statusCode()).as(refused.body()).isEqualTo(429);
            assertThat(refused.body()).contains("\"reason\":\"throttle_full\"");
            assertThat(Integer.parseInt(refused.headers().firstValue("Retry-After").orElseThrow()))
                    .as("the wait for one unit (50 s), not for two").isBetween(1, 50);
        }
    }

    /**
     * Issue 42's contract: a tenant sending at twice its plan's rate ({@code paced}: 20 a second, here one
     * request every 25 ms) with {@code max-delay: 2s} gets no 429; each request short of units is delayed by at
     * most max-delay and then answered. Thirty requests need 1.45 s of refill, so even if they all arrived at
     * once none would have to wait past max-delay.
     */
    @Test
    void aTenantAtTwiceItsRateIsDelayedNeverRefused() throws Exception {
        List<CompletableFuture<HttpResponse<String>>> sent = new java.util.ArrayList<>();
        long start = System.nanoTime();
        for (int i = 0; i < 30; i++) {
            long early = start + i * 25_000_000L - System.nanoTime(); // on a schedule of 40 a second, not drifting
            if (early > 0) TimeUnit.NANOSECONDS.sleep(early);
            sent.add(CLIENT.sendAsync(request("/paced/steady-" + i, "paced-steady"), HttpResponse.BodyHandlers.ofString()));
        }
        long spanMillis = (System.nanoTime() - start) / 1_000_000;
        int delayed = 0;
        long longest = 0;
        for (CompletableFuture<HttpResponse<String>> r : sent) {
            HttpResponse<String> response = r.get(30, TimeUnit.SECONDS);
            assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
            java.util.Optional<String> delay = response.headers().firstValue("Quota-Delay");
            if (delay.isPresent()) {
                delayed++;
                longest = Math.max(longest, Long.parseLong(delay.get()));
            }
        }
        assertThat(longest).as("the longest planned delay, ms (max-delay 2000)").isBetween(0L, 2000L);
        // the 30 were sent within spanMillis and arrived within about as long (250 ms allowed for the last to
        // trail): the refill of that time (one unit every 50 ms, one at the start) admits at most that many
        // undelayed; the rest were delayed, not refused
        long undelayedAtMost = 1 + (spanMillis + 250) / 50;
        assertThat((long) delayed).as("delayed of 30 sent in %d ms", spanMillis)
                .isGreaterThanOrEqualTo(30 - undelayedAtMost);
    }

    /**
     * Issue 42's drop, where the protocol reports it: over HTTP/2 (h2c) a client that gives up on a delayed
     * request resets its stream, and the container must report it so the reservation comes back. Plan
     * {@code dropping}: one unit every 50 s, {@code max-delay: 60s}, one delayed request at a time. The second
     * request is delayed 50 s; its client cancels. Were its reservation kept, a third sent within 40 s of it would
     * owe more than 60 s, past max-delay, and be refused at once; given back, the third is delayed too.
     */
    @Test
    void aDelayedRequestDroppedOverHttp2GivesItsReservationBack() throws Exception {
        HttpClient h2 = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2)
                .connectTimeout(Duration.ofSeconds(5)).build();
        HttpResponse<String> health = h2.send(h2Request("/health"), HttpResponse.BodyHandlers.ofString());
        assertThat(health.version()).as("the container speaks h2c").isEqualTo(HttpClient.Version.HTTP_2);
        assertThat(h2.send(h2Request("/paced/drop-1"), HttpResponse.BodyHandlers.ofString()).statusCode())
                .isEqualTo(200);

        int suspended = TestApp.SUSPENDED.get();
        CompletableFuture<HttpResponse<String>> second = h2.sendAsync(h2Request("/paced/drop-2"),
                HttpResponse.BodyHandlers.ofString());
        Await.within(Duration.ofSeconds(20), "the second request delayed", () -> delayedNow() == 1);
        if (reportsStreamResets()) { // a reset before its dispatch returned is not reported (docs/throttling.md)
            Await.within(Duration.ofSeconds(20), "the second request suspended", () -> TestApp.SUSPENDED.get() > suspended);
        }
        second.cancel(true); // the JDK client resets the stream
        if (!reportsStreamResets()) {
            TimeUnit.SECONDS.sleep(3);
            assertThat(delayedNow()).as("not reported: the dropped request still waits for its time").isEqualTo(1.0);
            return;
        }
        Await.within(Duration.ofSeconds(20), "the dropped request's place given back", () -> delayedNow() == 0);

        // the third is delayed (a refusal would mean the second's 50 s were still owed; it is retried for a few
        // seconds, as a refusal charges nothing, in case it raced the give-back that follows the place's)
        CompletableFuture<HttpResponse<String>> third = Await.until(Duration.ofSeconds(10), "the third request delayed",
                () -> h2.sendAsync(h2Request("/paced/drop-3"), HttpResponse.BodyHandlers.ofString()),
                sent -> {
                    try {
                        sent.get(2, TimeUnit.SECONDS);
                        return false; // answered at once: refused
                    } catch (java.util.concurrent.TimeoutException waiting) {
                        return delayedNow() == 1;
                    } catch (Exception e) {
                        throw new AssertionError(e);
                    }
                });
        third.cancel(true);
        Await.within(Duration.ofSeconds(20), "the third request's place given back", () -> delayedNow() == 0);
    }

    private HttpRequest h2Request(String path) {
        return HttpRequest.newBuilder(uri(path)).header("X-Tenant-Id", "dropping-h2").GET().build();
    }

    private static double delayedNow() {
        return TestApp.meters().get(io.quotagate.filter.metrics.QuotaMeterBinder.DELAYED).gauge().value();
    }

    /**
     * Whether the container tells a suspended request's {@code AsyncListener} that its client reset the HTTP/2
     * stream: Jetty 12 and Tomcat do, at once.
     */
    protected boolean reportsStreamResets() {
        return true;
    }

    /** Starts {@code GET /reports/1?hold=key} and returns once the servlet runs it (its slot is taken). */
    private CompletableFuture<HttpResponse<String>> holdReport(String tenant, String key) throws Exception {
        return hold("/reports/1", tenant, key);
    }

    /** Starts {@code GET path?hold=key} (an async report) and returns once the servlet runs it (its slot is taken). */
    private CompletableFuture<HttpResponse<String>> hold(String path, String tenant, String key) throws Exception {
        CompletableFuture<HttpResponse<String>> response = CLIENT.sendAsync(
                request(path + "?hold=" + key, tenant), HttpResponse.BodyHandlers.ofString());
        boolean started = TestApp.started(key).await(20, TimeUnit.SECONDS);
        assertThat(started).as("held report started; early answer: %s", response.getNow(null)).isTrue();
        return response;
    }

    /** Repeats the request while it is refused for concurrency; returns the status of the first that is not. */
    private int pollUntilAdmitted(String path, String tenant) throws Exception {
        return Await.until(path + " not refused for concurrency", () -> get(path, tenant),
                r -> !(r.statusCode() == 429 && r.body().contains("concurrency"))).statusCode();
    }

    private HttpResponse<String> post(String path, String tenant, String body) throws Exception {
        HttpRequest r = HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(20)).header("X-Tenant-Id", tenant)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        return CLIENT.send(r, HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(String path, String tenant) throws Exception {
        return CLIENT.send(request(path, tenant), HttpResponse.BodyHandlers.ofString());
    }

    private HttpRequest request(String path, String tenant) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(20)).GET();
        if (tenant != null) b.header("X-Tenant-Id", tenant);
        return b.build();
    }

    private static String tenant() {
        return "t-" + UUID.randomUUID().toString().substring(0, 8);
    }
}

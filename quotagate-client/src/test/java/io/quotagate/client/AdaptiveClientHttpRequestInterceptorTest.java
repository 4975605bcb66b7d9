package io.quotagate.client;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.HttpClientErrorException;
import org.springframework.web.client.ResourceAccessException;
import org.springframework.web.client.RestClient;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A real Spring {@link RestClient} through the interceptor against the real example app's hidden quota. */
class AdaptiveClientHttpRequestInterceptorTest {
    private final List<AutoCloseable> closing = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable c : closing) c.close();
    }

    @Test
    void restClientLearnsTheHiddenQuotaUsesItAndRarelyMeetsA429() throws Exception {
        HiddenQuotaApi api = new HiddenQuotaApi(1200);
        closing.add(api);
        AdaptiveLimiter limiter = AdaptiveHttpClientTest.quickAimd(api.perMinute).build();
        RestClient rest = RestClient.builder()
                .requestFactory(new JdkClientHttpRequestFactory())
                .requestInterceptor(new AdaptiveClientHttpRequestInterceptor(limiter))
                .defaultHeader("X-Tenant-Id", "acme")
                .build();
        AtomicLong accepted = new AtomicLong(), throttled = new AtomicLong(), rejected = new AtomicLong(), ids = new AtomicLong();
        long start = System.nanoTime();
        long end = start + Duration.ofSeconds(12).toNanos();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            threads.add(AdaptiveHttpClientTest.started(() -> {
                while (System.nanoTime() < end) {
                    try {
                        rest.get().uri(api.item(ids.incrementAndGet())).retrieve().toBodilessEntity();
                        accepted.incrementAndGet();
                    } catch (HttpClientErrorException.TooManyRequests e) {
                        throttled.incrementAndGet();
                    } catch (ResourceAccessException e) {
                        assertThat(e.getCause()).isInstanceOf(RejectedByLimiterException.class);
                        rejected.incrementAndGet();
                    }
                }
            }));
        }
        for (Thread t : threads) t.join();
        double seconds = (System.nanoTime() - start) / 1e9;

        assertThat(accepted.get()).as("the quota is used").isGreaterThan((long) (0.8 * api.allowedIn(seconds)));
        assertThat(throttled.get()).as("429s are rare: %d of %d", throttled.get(), accepted.get())
                .isLessThan(accepted.get() / AdaptiveHttpClientTest.RARE);
        assertThat(limiter.waitNanos.sum()).as("callers waited for units").isPositive();
        assertThat(rejected.get()).isZero();
    }

    @Test
    void aRejectedRequestIsNotSentAndFailsAsAResourceAccessException() throws Exception {
        HiddenQuotaApi api = new HiddenQuotaApi(1200);
        closing.add(api);
        AdaptiveLimiter limiter = AdaptiveLimiter.builder().controller(RateController.fixed(1)).initialRate(1).minRate(1).maxRate(1)
                .maxWait(Duration.ofSeconds(1)).build();
        RestClient rest = RestClient.builder().requestFactory(new JdkClientHttpRequestFactory())
                .requestInterceptor(new AdaptiveClientHttpRequestInterceptor(limiter)).build();
        assertThatThrownBy(() -> rest.get().uri(api.item(1)).header("X-Tenant-Id", "acme").retrieve().toBodilessEntity())
                .isInstanceOf(ResourceAccessException.class).cause().isInstanceOf(RejectedByLimiterException.class);
        assertThat(limiter.rejected.sum()).isEqualTo(1);
    }
}

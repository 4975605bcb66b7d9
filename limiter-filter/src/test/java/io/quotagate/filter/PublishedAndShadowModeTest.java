package io.quotagate.filter;

import io.quotagate.filter.status.Reason;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.LogCapture;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** Published plans carry the IETF RateLimit fields; hidden ones carry nothing; shadow mode refuses nothing. */
class PublishedAndShadowModeTest {
    static final String PLANS = """
            global: { limits: [ { name: api, capacity: 1000, refill: 1000, period: 1m } ] }
            plans:
              hidden: { limits: [ { capacity: 5, refill: 5, period: 10s } ] }
              open:
                publish: true
                limits:
                  - { name: burst, capacity: 200, refill: 100, period: 10s }
                  - { name: daily, capacity: 5000, refill: 5000, period: 1d }
              trial:
                shadow: true
                limits: [ { capacity: 2, refill: 2, period: 1m } ]
            routes:
              - { name: heavy, paths: ["/heavy"] }   # 81 units, from an estimator
            tenants:
              default-plan: hidden
              assignments: { acme: open, newbie: trial }
            """;
    private static final Pattern ITEM = Pattern.compile("\"burst\";r=(\\d+);t=(\\d+)");

    private final ManualClock clock = new ManualClock();
    private JettyServer server;

    private QuotaFilter start(boolean legacy) throws Exception {
        QuotaFilter filter = QuotaFilter.builder().plans(PlansFile.parse("t.yml", PLANS)).clock(clock)
                .costEstimator("heavy", (request, body) -> 81).legacyRateLimitHeaders(legacy).build();
        server = JettyServer.start(filter);
        return filter;
    }

    @AfterEach
    void stop() throws Exception {
        if (server != null) server.close();
    }

    @Test
    void aPublishedPlanCarriesPolicyAndStateOnEveryResponseOneItemPerBandwidth() throws Exception {
        start(false);
        HttpResponse<String> r = Http.get(server.uri("/heavy"), "acme");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("RateLimit-Policy"))
                .contains("\"burst\";q=200;w=20;pk=:YWNtZQ==:, \"daily\";q=5000;w=86400;pk=:YWNtZQ==:");
        // 119 left, the next unit within 0.1 s (10 per second), rounded up; daily: one unit per 17.28 s
        assertThat(r.headers().firstValue("RateLimit"))
                .contains("\"burst\";r=119;t=1;pk=:YWNtZQ==:, \"daily\";r=4919;t=18;pk=:YWNtZQ==:");
        assertThat(r.headers().firstValue("X-RateLimit-Limit")).as("legacy fields are off by default").isEmpty();
        assertThat(r.headers().map().keySet()).as("the global quota is never published")
                .noneMatch(h -> h.toLowerCase().contains("api"));
        assertThat(r.headers().allValues("RateLimit").toString()).doesNotContain("\"api\"");
    }

    @Test
    void on429RetryAfterIsNeverEarlierThanTheResetOfAnyItem() throws Exception {
        start(false);
        Http.get(server.uri("/heavy"), "acme");
        Http.get(server.uri("/heavy"), "acme");
        HttpResponse<String> r = Http.get(server.uri("/heavy"), "acme"); // 38 left, 81 needed
        assertThat(r.statusCode()).isEqualTo(429);
        long retryAfter = Long.parseLong(r.headers().firstValue("Retry-After").orElseThrow());
        assertThat(retryAfter).isEqualTo(5); // 43 missing at 10/s
        Matcher m = ITEM.matcher(r.headers().firstValue("RateLimit").orElseThrow());
        assertThat(m.find()).isTrue();
        assertThat(Long.parseLong(m.group(1))).isEqualTo(38);
        assertThat(Long.parseLong(m.group(2))).isLessThanOrEqualTo(retryAfter).isEqualTo(1);
        assertThat(r.headers().firstValue("RateLimit-Policy")).isPresent();
    }

    @Test
    void legacyFieldsDescribeTheTightestBandwidthWhenSwitchedOn() throws Exception {
        start(true);
        HttpResponse<String> r = Http.get(server.uri("/heavy"), "acme");
        assertThat(r.headers().firstValue("X-RateLimit-Limit")).contains("200");
        assertThat(r.headers().firstValue("X-RateLimit-Remaining")).contains("119");
        assertThat(r.headers().firstValue("X-RateLimit-Reset")).as("seconds until full, as before").contains("9");
        HttpResponse<String> hidden = Http.get(server.uri("/x"), "globex");
        assertThat(hidden.headers().firstValue("X-RateLimit-Limit")).as("only published plans").isEmpty();
    }

    @Test
    void aHiddenPlanPublishesNothingEvenOn429() throws Exception {
        start(true);
        for (int i = 0; i < 5; i++) Http.get(server.uri("/x"), "globex");
        HttpResponse<String> r = Http.get(server.uri("/x"), "globex");
        assertThat(r.statusCode()).isEqualTo(429);
        assertThat(r.headers().map().keySet()).noneMatch(h -> h.toLowerCase().contains("ratelimit"));
    }

    @Test
    void shadowModeLetsEverythingThroughButCountsAndLogsWhatItWouldHaveRefused() throws Exception {
        List<String> messages;
        try (LogCapture log = LogCapture.of(QuotaFilter.class, java.util.logging.Level.ALL)) {
            QuotaFilter filter = start(false);
            for (int i = 0; i < 6; i++) assertThat(Http.get(server.uri("/x"), "newbie").statusCode()).isEqualTo(200);
            assertThat(filter.control().shadowRejections(Reason.TENANT_RATE)).isEqualTo(4);
            assertThat(filter.control().shadowRejections(Reason.GLOBAL_RATE)).isZero();
            clock.advance(Duration.ofSeconds(1));
            Http.get(server.uri("/x"), "newbie");
            assertThat(filter.control().shadowRejections(Reason.TENANT_RATE)).isEqualTo(5);
            var registry = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
            new io.quotagate.filter.metrics.QuotaMeterBinder(filter.control()).bindTo(registry);
            assertThat(registry.get("quotagate.shadow.rejections").tag("reason", "tenant_rate").functionCounter().count())
                    .isEqualTo(5.0);
            assertThat(Http.get(server.uri("/heavy"), "acme").statusCode()).as("other plans still enforce").isEqualTo(200);
            messages = log.messages();
        }
        {
            List<String> shadowLines = messages.stream().filter(m -> m.startsWith("shadow:")).toList();
            // at most one line per second: the first refusal, then one more after the clock moved
            assertThat(shadowLines).hasSize(2);
            assertThat(shadowLines.get(0)).contains("would reject tenant newbie", "plan trial", "tenant_rate", "let through");
            assertThat(shadowLines.get(1)).contains("(+3 more since the last line)");
        }
    }
}

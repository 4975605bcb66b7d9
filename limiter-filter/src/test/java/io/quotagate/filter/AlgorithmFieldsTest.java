package io.quotagate.filter;

import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.Algorithm;
import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.Plan;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The answers of a published plan whose limit counts with each algorithm, on real Jetty and a manual clock:
 * {@code Retry-After} enough to wait, the draft-11 fields true ({@code r} the units left, {@code t} never
 * past {@code Retry-After} on a 429), GCRA's answers the token bucket's.
 */
class AlgorithmFieldsTest {

    private static QuotaFilter filter(Algorithm algorithm, ManualClock clock) {
        Plans parsed = PlansFile.parse("algorithms.yml", """
                plans:
                  open: { publish: true, limits: [ { name: limit, capacity: 4, refill: 4, period: 1m } ] }
                tenants:
                  assignments: { acme: open }
                """);
        Plans plans = Plans.from(parsed).plan(Plan.from(parsed.plan("open").orElseThrow())
                .limits(List.of(new Bandwidth("limit", 4, 4, Duration.ofMinutes(1), algorithm))).build()).build();
        return QuotaFilter.builder().plans(plans).clock(clock).build();
    }

    /** Each answer's status, Retry-After and fields, as a line: what a client sees. */
    private static List<String> session(Algorithm algorithm) throws Exception {
        ManualClock clock = new ManualClock();
        List<String> seen = new ArrayList<>();
        try (JettyServer server = JettyServer.start(filter(algorithm, clock))) {
            for (int i = 0; i < 5; i++) {
                HttpResponse<String> r = Http.get(server.uri("/items/" + i), "acme");
                seen.add(r.statusCode() + " " + r.headers().firstValue("Retry-After").orElse("-") + " "
                        + r.headers().firstValue("RateLimit").orElseThrow());
                RateLimitDraft11Test.Member policy = RateLimitDraft11Test.parse(r, "RateLimit-Policy").get(0);
                assertThat(policy.integer("q")).isEqualTo(4);
                assertThat(policy.integer("w")).as("a period for the window, the time to fill for the others").isEqualTo(60);
                RateLimitDraft11Test.Member state = RateLimitDraft11Test.parse(r, "RateLimit").get(0);
                if (i < 4) {
                    assertThat(r.statusCode()).isEqualTo(200);
                    assertThat(state.integer("r")).as("units left after request %d", i + 1).isEqualTo(3 - i);
                    continue;
                }
                assertThat(r.statusCode()).isEqualTo(429);
                long retryAfter = Long.parseLong(r.headers().firstValue("Retry-After").orElseThrow());
                assertThat(state.integer("r")).isZero();
                assertThat(state.integer("t")).as("t at most Retry-After").isLessThanOrEqualTo(retryAfter);
                if (algorithm == Algorithm.SLIDING_WINDOW) {
                    // the 4 leave the window with their sub-window (6 s): a minute, and up to 6 s more
                    assertThat(retryAfter).isBetween(60L, 66L);
                } else {
                    assertThat(retryAfter).as("one unit at 4 a minute").isEqualTo(15);
                }
                clock.advance(Duration.ofSeconds(retryAfter - 1));
                assertThat(Http.get(server.uri("/items/x"), "acme").statusCode()).as("a second short").isEqualTo(429);
                clock.advance(Duration.ofSeconds(1));
                assertThat(Http.get(server.uri("/items/y"), "acme").statusCode()).as("after Retry-After").isEqualTo(200);
            }
        }
        return seen;
    }

    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void retryAfterIsEnoughAndThePublishedFieldsAreTrue(Algorithm algorithm) throws Exception {
        List<String> seen = session(algorithm);
        if (algorithm == Algorithm.GCRA) {
            assertThat(seen).as("GCRA answers as the token bucket").isEqualTo(session(Algorithm.TOKEN_BUCKET));
        }
    }
}

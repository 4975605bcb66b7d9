package io.quotagate.spring;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.Algorithm;
import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The endpoint shows each limit's algorithm, and its writes choose or keep it. */
class QuotagateEndpointAlgorithmTest {

    private static QuotaFilter filter() {
        return QuotaFilter.builder().plans(PlansFile.parse("plans.yml", """
                global:
                  limits: [ { algorithm: gcra, capacity: 1000, refill: 1000, period: 1m } ]
                plans:
                  free:
                    limits:
                      - { name: minute, algorithm: sliding-window, capacity: 10, period: 1m }
                      - { name: burst, capacity: 5, refill: 1, period: 1s }
                tenants:
                  default-plan: free
                  assignments: { acme: free }
                """)).clock(new ManualClock()).build();
    }

    @Test
    void showsTheAlgorithmOfThePlansTheGlobalQuotaAndATenantsBandwidths() {
        QuotagateEndpoint endpoint = new QuotagateEndpoint(filter().control());
        @SuppressWarnings("unchecked")
        Map<String, Object> free = (Map<String, Object>) ((Map<String, Object>) endpoint.quotas().get("plans")).get("free");
        assertThat(free.get("limits")).asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.LIST).extracting(l -> (Object) ((Map<?, ?>) l).get("algorithm"))
                .containsExactly("sliding-window", "token-bucket");
        @SuppressWarnings("unchecked")
        Map<String, Object> global = (Map<String, Object>) endpoint.quotas().get("global");
        assertThat(global.get("limits")).asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.LIST).extracting(l -> (Object) ((Map<?, ?>) l).get("algorithm"))
                .containsExactly("gcra");
        assertThat(endpoint.tenant("acme").getBody().get("limits")).asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.LIST)
                .extracting(l -> (Object) ((Map<?, ?>) l).get("algorithm")).containsExactly("sliding-window", "token-bucket");
    }

    @Test
    void aWriteKeepsTheAlgorithmOfTheBandwidthItChangesOrSetsTheOneItNames() {
        QuotaFilter filter = filter();
        QuotagateEndpoint endpoint = new QuotagateEndpoint(filter.control());
        // a sliding window changed without naming an algorithm stays one, and takes no refill
        assertThat(endpoint.setPlanLimits("free", 20, null, "1m", "minute", null).getStatus()).isEqualTo(200);
        assertThat(filter.control().plans().plan("free").orElseThrow().limits().get(0))
                .isEqualTo(Bandwidth.slidingWindow("minute", 20, Duration.ofMinutes(1)));
        WebEndpointResponse<Map<String, Object>> refused = endpoint.setPlanLimits("free", 20, 20L, "1m", "minute", null);
        assertThat(refused.getStatus()).isEqualTo(400);
        assertThat(refused.getBody().get("error").toString()).startsWith("refill: a sliding window takes no refill");
        // naming one switches it; a token bucket needs its refill again
        assertThat(endpoint.setPlanLimits("free", 20, null, "1m", "minute", "gcra").getBody().get("error"))
                .isEqualTo("refill: required, a whole number > 0");
        assertThat(endpoint.setPlanLimits("free", 20, 5L, "1m", "minute", "gcra").getStatus()).isEqualTo(200);
        assertThat(filter.control().plans().plan("free").orElseThrow().limits().get(0).algorithm())
                .isEqualTo(Algorithm.GCRA);
        assertThat(endpoint.setGlobalQuota(500, 500L, "1m", null, "leaky-bucket").getBody().get("error"))
                .isEqualTo("algorithm: unknown value 'leaky-bucket', expected one of [token-bucket, gcra, sliding-window]");
        assertThat(endpoint.setGlobalQuota(500, null, "1m", null, "sliding-window").getStatus()).isEqualTo(200);
        assertThat(filter.control().plans().global().orElseThrow().limits())
                .containsExactly(Bandwidth.slidingWindow("b0", 500, Duration.ofMinutes(1)));
        // a tenant's own limits
        assertThat(endpoint.write("tenant", "acme", "free", "8", null, "1m", "minute", "sliding-window").getStatus())
                .isEqualTo(200);
        assertThat(filter.control().tenant("acme").orElseThrow().limits()).contains(
                Bandwidth.slidingWindow("minute", 8, Duration.ofMinutes(1)));
        assertThat(filter.control().tenant("acme").orElseThrow().limits()).hasSize(2);
        assertThat(List.of(filter.control().tenant("acme").orElseThrow().limits().get(1).algorithm()))
                .containsExactly(Algorithm.TOKEN_BUCKET);
    }
}

package io.quotagate.spring;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The endpoint reads out the concurrency groups: requests in flight and queued, and an adaptive group's limit. */
class QuotagateEndpointGroupsTest {

    @Test
    void anAdaptiveGroupShowsItsLimitInForceAFixedOneDoesNot() {
        QuotaFilter filter = QuotaFilter.builder().plans(PlansFile.parse("plans.yml", """
                plans:
                  pro:
                    limits: [ { capacity: 100, refill: 100, period: 1s } ]
                    concurrency: { reports: 5, completions: 10 }
                routes:
                  - { name: reports, paths: ["/reports/*"], group: reports }
                  - { name: completions, paths: ["/v1/completions"], group: completions }
                groups:
                  reports: { max-inflight: 20 }
                  completions: { adaptive: { algorithm: gradient2, initial: 12, min: 2, max: 40 } }
                tenants:
                  default-plan: pro
                """)).build();
        try {
            QuotagateEndpoint endpoint = new QuotagateEndpoint(filter.control());

            @SuppressWarnings("unchecked")
            Map<String, Map<String, Object>> groups = (Map<String, Map<String, Object>>) endpoint.quotas().get("concurrency");
            assertThat(groups.get("completions")).containsEntry("limit", 12).containsEntry("inflight", 0)
                    .containsEntry("queued", 0);
            assertThat(groups.get("reports")).doesNotContainKey("limit").containsEntry("inflight", 0);
        } finally {
            filter.destroy();
        }
    }
}

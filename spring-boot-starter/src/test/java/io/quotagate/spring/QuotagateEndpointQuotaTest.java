package io.quotagate.spring;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The endpoint reads out calendar quotas: a plan's, and a tenant's use this period. */
class QuotagateEndpointQuotaTest {

    @Test
    void showsAPlansQuotasAndATenantsUseWithItsReset() {
        ManualClock clock = new ManualClock();
        QuotaFilter filter = QuotaFilter.builder().plans(PlansFile.parse("plans.yml", """
                plans:
                  free:
                    limits: [ { capacity: 10, refill: 10, period: 1s } ]
                  pro:
                    limits: [ { capacity: 10, refill: 10, period: 1s } ]
                    quotas: [ { name: monthly, limit: 100000, per: month, zone: Europe/Berlin } ]
                tenants:
                  default-plan: free
                  assignments: { acme: pro, globex: free }
                """)).clock(clock).wallClock(clock.wallClock(Instant.parse("2027-03-10T12:00:00Z"))).build();
        QuotagateEndpoint endpoint = new QuotagateEndpoint(filter.control());

        @SuppressWarnings("unchecked")
        Map<String, Object> pro = (Map<String, Object>) ((Map<String, Object>) endpoint.quotas().get("plans")).get("pro");
        assertThat(pro.get("quotas")).isEqualTo(List.of(Map.of("name", "monthly", "limit", 100000L, "per", "month",
                "zone", "Europe/Berlin")));

        Map<String, Object> acme = endpoint.tenant("acme").getBody();
        assertThat(acme.get("quotas")).isEqualTo(List.of(Map.of("name", "monthly", "per", "month", "limit", 100000L,
                "used", 0L, "remaining", 100000L, "resetsAt", "2027-03-31T22:00:00Z")));
        assertThat(endpoint.tenant("globex").getBody()).doesNotContainKey("quotas");
    }
}

package io.quotagate.filter.internal.route;

import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class RouteTableTest {
    private final RouteTable table = new RouteTable(PlansFile.parse("r.yml", """
            plans: { free: { limits: [ { capacity: 10, refill: 10, period: 1s } ] } }
            routes:
              - { name: ops, paths: ["/health", "/metrics"], limited: false }
              - { name: report-pdf, methods: [GET], paths: ["/reports/*/pdf"], cost: 8, group: reports }
              - { name: reports, methods: [GET], paths: ["/reports/*"], cost: 5, group: reports }
              - { name: writes, methods: [POST, PUT], paths: ["/items/**"], cost: 2 }
            """).routes());

    @Test
    void firstMatchingRuleWins() {
        assertThat(table.match("GET", "/reports/7/pdf").name()).isEqualTo("report-pdf");
        assertThat(table.match("GET", "/reports/7")).satisfies(r -> {
            assertThat(r.name()).isEqualTo("reports");
            assertThat(r.cost()).isEqualTo(5);
            assertThat(r.group()).contains("reports");
        });
        assertThat(table.match("PUT", "/items/1/tags").cost()).isEqualTo(2);
        assertThat(table.match("HEAD", "/health").limited()).isFalse();
    }

    @Test
    void unmatchedRequestsTakeTheDefaultRoute() {
        assertThat(table.match("POST", "/reports/7")).isEqualTo(Route.DEFAULT);
        assertThat(table.match("GET", "/items/1")).isEqualTo(Route.DEFAULT);
        assertThat(Route.DEFAULT.cost()).isEqualTo(1);
        assertThat(Route.DEFAULT.limited()).isTrue();
    }
}

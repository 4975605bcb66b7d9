package io.quotagate.spring.it;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.status.UsagePage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The tenant's own usage endpoint switched on by {@code quotagate.usage-endpoint.path}, and the usage export on
 * the Actuator endpoint ({@code /actuator/quotagate/usage/json} and {@code /csv}), in a Spring Boot application.
 */
class UsageApplicationTest {
    private static final String PLANS = """
            plans:
              pro:
                publish: true
                limits: [ { capacity: 10, refill: 10, period: 1m } ]
                quotas: [ { name: monthly, limit: 100, per: month } ]
              secret:
                limits: [ { capacity: 10, refill: 10, period: 1m } ]
                quotas: [ { name: monthly, limit: 100, per: month } ]
            routes:
              - { name: hello, methods: [GET], paths: ["/hello"], cost: 2 }
            tenants:
              default-plan: pro
              assignments: { acme: pro, hush: secret }
            """;

    private final HttpClient client = HttpClient.newHttpClient();

    @TempDir
    Path dir;

    @Test
    void theOwnUsageEndpointAnswersTheCallerUnchargedAndTheActuatorExportsEveryTenantAsJsonAndCsv() throws Exception {
        Path plans = Files.writeString(dir.resolve("plans.yml"), PLANS);
        try (ConfigurableApplicationContext app = new SpringApplicationBuilder(ActuatorPathsApplicationTest.App.class)
                .properties("server.port=0", "quotagate.plans=" + plans, "quotagate.usage-endpoint.path=/rate_limit",
                        "quotagate.closed-periods-kept=2", "management.endpoints.web.exposure.include=quotagate",
                        "server.shutdown=immediate", "spring.main.banner-mode=off")
                .run()) {
            String port = app.getEnvironment().getProperty("local.server.port");
            assertThat(get(port, "/hello", "acme").statusCode()).isEqualTo(200);
            assertThat(get(port, "/hello", "hush").statusCode()).isEqualTo(200);
            for (int i = 0; i < 3; i++) {
                HttpResponse<String> own = get(port, "/rate_limit?tenant=hush", "acme");
                assertThat(own.statusCode()).isEqualTo(200);
                assertThat(own.body()).startsWith("{\"tenant\":\"acme\",\"plan\":\"pro\"")
                        .contains("\"remaining\":8").contains("\"name\":\"monthly\",\"per\":\"month\",\"limit\":100,\"used\":2");
            }
            assertThat(get(port, "/rate_limit", "hush").statusCode()).as("a hidden plan").isEqualTo(404);
            QuotaFilter filter = app.getBean(QuotaFilter.class);
            assertThat(filter.control().tenantQuotas("acme").get(0).used()).as("never charged").isEqualTo(2);

            HttpResponse<String> json = get(port, "/actuator/quotagate/usage/json?size=1", null);
            assertThat(json.statusCode()).as(json.body()).isEqualTo(200);
            assertThat(json.body()).contains("\"periods\":[").contains("\"closed\":false").contains("\"next\":\"");
            HttpResponse<String> csv = get(port, "/actuator/quotagate/usage/csv?size=1", null);
            assertThat(csv.statusCode()).as(csv.body()).isEqualTo(200);
            assertThat(csv.headers().firstValue("Content-Type").orElseThrow()).startsWith("text/csv");
            assertThat(csv.body()).startsWith(UsagePage.CSV_HEADER + "\r\n")
                    .contains("\r\nacme,pro,monthly,month,100,").contains("\r\nhush,secret,monthly,month,100,");
            assertThat(csv.body().split("\r\n")).as("header, and 3 periods of each tenant").hasSize(1 + 2 * 3);
            assertThat(get(port, "/actuator/quotagate/usage/json?cursor=nonsense", null).statusCode()).isEqualTo(400);
            assertThat(get(port, "/actuator/quotagate/usage/xml", null).statusCode()).isEqualTo(404);
        }
    }

    private HttpResponse<String> get(String port, String path, String tenant) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                .timeout(Duration.ofSeconds(20));
        if (tenant != null) b.header("X-Tenant-Id", tenant);
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }
}

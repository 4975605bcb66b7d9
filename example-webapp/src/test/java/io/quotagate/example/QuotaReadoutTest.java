package io.quotagate.example;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.testing.Http;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import static org.assertj.core.api.Assertions.assertThat;

/** The example plans' monthly quota, read out on the management port. */
class QuotaReadoutTest {

    @Test
    void theManagementPortShowsATenantsUseOfItsMonthlyQuota() throws Exception {
        Plans plans = PlansFile.load(ExampleApp.DEFAULT_PLANS);
        QuotaFilter filter = ExampleApp.withEstimators(QuotaFilter.builder().plans(plans), plans).build();
        try (ExampleApp.Running app = ExampleApp.start("127.0.0.1", 0, "127.0.0.1", 0, filter, "tok")) {
            for (int i = 0; i < 3; i++) {
                assertThat(Http.get(URI.create(app.baseUri() + "/items/" + i), "acme").statusCode()).isEqualTo(200);
            }
            HttpResponse<String> acme = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                            URI.create(app.managementUri() + "/admin/tenants/acme")).header("Authorization", "Bearer tok")
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertThat(acme.statusCode()).isEqualTo(200);
            assertThat(acme.body()).contains("\"quotas\":[{\"name\":\"monthly\",\"per\":\"month\",\"limit\":2000000,"
                    + "\"used\":3,\"remaining\":1999997,\"resetsAt\":\"");
        }
    }
}

package io.quotagate.example;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.status.UsagePage;
import io.quotagate.filter.testing.Http;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import static org.assertj.core.api.Assertions.assertThat;

/** The usage export on the management port, and the tenant's own usage endpoint on the API port. */
class UsageExportAppTest {
    private final HttpClient client = HttpClient.newHttpClient();

    private HttpResponse<String> admin(ExampleApp.Running app, String pathAndQuery, String token) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(app.managementUri() + pathAndQuery));
        if (token != null) b.header("Authorization", "Bearer " + token);
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void theManagementPortExportsEveryTenantsUseAsJsonAndCsvBehindTheAdminToken() throws Exception {
        Plans plans = PlansFile.load(ExampleApp.DEFAULT_PLANS);
        QuotaFilter filter = ExampleApp.withEstimators(QuotaFilter.builder().plans(plans)
                .usageEndpoint("/rate_limit", true), plans).build();
        try (ExampleApp.Running app = ExampleApp.start("127.0.0.1", 0, "127.0.0.1", 0, filter, "tok")) {
            for (int i = 0; i < 3; i++) {
                assertThat(Http.get(URI.create(app.baseUri() + "/items/" + i), "acme").statusCode()).isEqualTo(200);
            }
            assertThat(admin(app, "/admin/usage", null).statusCode()).isEqualTo(401);
            HttpResponse<String> json = admin(app, "/admin/usage?size=10", "tok");
            assertThat(json.statusCode()).as(json.body()).isEqualTo(200);
            assertThat(json.body()).startsWith("{\"tenants\":[{\"tenant\":\"acme\",\"plan\":\"pro\",\"periods\":[")
                    .contains("\"quota\":\"monthly\"").contains("\"closed\":false,\"used\":3}").endsWith("\"next\":null}");
            HttpResponse<String> csv = admin(app, "/admin/usage?format=csv", "tok");
            assertThat(csv.statusCode()).isEqualTo(200);
            assertThat(csv.headers().firstValue("Content-Type").orElseThrow()).startsWith("text/csv");
            assertThat(csv.body()).startsWith(UsagePage.CSV_HEADER + "\r\nacme,pro,monthly,month,2000000,")
                    .contains(",false,3\r\n");
            assertThat(admin(app, "/admin/usage?cursor=x", "tok").statusCode()).isEqualTo(400);
            assertThat(admin(app, "/admin/usage?format=xml", "tok").statusCode()).isEqualTo(400);
            assertThat(admin(app, "/admin/usage?size=0", "tok").statusCode()).isEqualTo(400);
            assertThat(Http.get(URI.create(app.baseUri() + "/admin/usage"), "acme").statusCode())
                    .as("not on the API port").isEqualTo(404);

            HttpResponse<String> own = Http.get(URI.create(app.baseUri() + "/rate_limit?tenant=globex"), "acme");
            assertThat(own.statusCode()).isEqualTo(200);
            assertThat(own.body()).startsWith("{\"tenant\":\"acme\",\"plan\":\"pro\"").contains("\"used\":3,");
            assertThat(filter.control().tenantQuotas("acme").get(0).used()).as("never charged").isEqualTo(3);
        }
    }
}

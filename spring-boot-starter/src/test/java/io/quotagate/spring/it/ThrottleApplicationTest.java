package io.quotagate.spring.it;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.testing.Await;
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
 * A throttled route in a Spring Boot application: a request short of units waits in async mode (through Spring
 * MVC's {@code DispatcherServlet}) instead of being refused, and {@code quotagate.max-delayed-requests} bounds
 * how many wait at once on the instance. Runs on Boot 3.5 here and on Boot 4.0 in module {@code spring-boot4-it}.
 */
class ThrottleApplicationTest {
    /** One unit every 20 s, waited for up to 30 s: a second request waits about 20 s, a third is past the wait. */
    private static final String PLANS = """
            plans:
              free:
                limits: [ { capacity: 1, refill: 1, period: 20s } ]
                throttle: { max-delay: 30s, queue: 10 }
            routes:
              - { name: hello, methods: [GET], paths: ["/hello"] }
            tenants:
              default-plan: free
            """;

    private final HttpClient client = HttpClient.newHttpClient();

    @TempDir
    Path dir;

    @Test
    void theWaitingRoomHoldsNoMoreThanMaxDelayedRequestsOverEveryTenant() throws Exception {
        Path plans = Files.writeString(dir.resolve("plans.yml"), PLANS);
        try (ConfigurableApplicationContext app = new SpringApplicationBuilder(ActuatorPathsApplicationTest.App.class)
                .properties("server.port=0", "quotagate.plans=" + plans, "quotagate.max-delayed-requests=1",
                        "server.shutdown=immediate", "spring.main.banner-mode=off")
                .run()) {
            String port = app.getEnvironment().getProperty("local.server.port");
            QuotaFilter filter = app.getBean(QuotaFilter.class);

            assertThat(get(port, "acme").statusCode()).isEqualTo(200); // acme's one unit
            // acme's second request waits for the next unit, about 20 s, holding the instance's one place
            client.sendAsync(request(port, "acme"), HttpResponse.BodyHandlers.ofString());
            Await.until("acme's second request delayed", () -> filter.control().statistics().delayedNow() == 1);

            assertThat(get(port, "globex").statusCode()).isEqualTo(200); // another tenant's one unit
            HttpResponse<String> full = get(port, "globex");
            assertThat(full.statusCode()).as(full.body()).isEqualTo(429);
            assertThat(full.body()).contains("throttle_full");
            assertThat(filter.control().statistics().delayedNow()).isEqualTo(1);
        } // acme's delayed request ends with the application
    }

    private HttpResponse<String> get(String port, String tenant) throws Exception {
        return client.send(request(port, tenant), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpRequest request(String port, String tenant) {
        return HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/hello")).header("X-Tenant-Id", tenant)
                .timeout(Duration.ofMinutes(1)).build();
    }
}

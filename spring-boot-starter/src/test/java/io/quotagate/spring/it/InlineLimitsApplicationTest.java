package io.quotagate.spring.it;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.quotagate.filter.QuotaFilter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The {@code quotagate.limits} snippet of docs/spring-boot.md, read from that page itself, as the {@code application.yml} of a
 * real application on embedded Tomcat: the limits are enforced over HTTP, a tenant id written in brackets keeps
 * its dot, and a wrong value stops the start with Boot's failure report naming the property and where it was
 * written. Runs on Boot 3.5 here and on Boot 4.0 in module {@code spring-boot4-it}.
 */
@ExtendWith(OutputCaptureExtension.class)
class InlineLimitsApplicationTest {
    private static final String HEADING = "## Limits in application.yml";

    private final HttpClient client = HttpClient.newHttpClient();

    @Test
    void theReadmeSnippetLimitsAFreeTenantAndKeepsTheDottedTenantOnItsPlan() throws Exception {
        try (ConfigurableApplicationContext app = start(readmeSnippet())) {
            // globex: no assignment, so the default plan, free: 100 an hour. The 101st is refused, unless a unit
            // came back meanwhile (one every 36 s): counted up to the first refusal, never timed
            int admitted = 0;
            HttpResponse<String> refused = null;
            for (int i = 0; i < 200 && refused == null; i++) {
                HttpResponse<String> response = get(app, "/items", "globex");
                if (response.statusCode() == 200) {
                    admitted++;
                } else {
                    refused = response;
                }
            }
            assertThat(admitted).isGreaterThanOrEqualTo(100);
            assertThat(refused).as("a refusal after the free plan's 100").isNotNull();
            assertThat(refused.statusCode()).isEqualTo(429);
            assertThat(Long.parseLong(refused.headers().firstValue("Retry-After").orElseThrow())).isPositive();
            assertThat(refused.body()).contains("tenant_rate");

            // "[acme.eu]": pro, 1000 a minute: far past the free plan's 100, never refused
            for (int i = 0; i < 150; i++) {
                assertThat(get(app, "/items", "acme.eu").statusCode()).as("request %d of acme.eu", i).isEqualTo(200);
            }
            QuotaFilter filter = app.getBean(QuotaFilter.class);
            assertThat(filter.control().plans().tenants().assignments()).containsEntry("acme.eu", "pro");
            assertThat(filter.control().tenantLimits("acme.eu")).singleElement()
                    .satisfies(s -> assertThat(s.capacity()).isEqualTo(1000));

            HttpResponse<String> endpoint = get(app, "/actuator/quotagate", null);
            assertThat(endpoint.statusCode()).isEqualTo(200);
            assertThat(new ObjectMapper().readTree(endpoint.body()).path("limits").path("source").asText())
                    .isEqualTo("quotagate.limits");
        }
    }

    @Test
    void aWrongValueStopsTheStartAndBootsReportNamesThePropertyAndWhereItIsWritten(CapturedOutput output) {
        String yaml = readmeSnippet().replace("{ capacity: 100,", "{ capacity: -1,");
        assertThat(yaml).contains("capacity: -1,");
        assertThatThrownBy(() -> start(yaml).close()).hasStackTraceContaining("must be > 0, was -1");
        assertThat(output.toString())
                .contains("APPLICATION FAILED TO START")
                .contains("Invalid value '-1' for configuration property "
                        + "'quotagate.limits.plans.free.limits[0].capacity'")
                .contains("originating from", "application.yml")
                .contains("must be > 0, was -1");
    }

    /** The yaml block of docs/spring-boot.md under {@value #HEADING}. */
    private static String readmeSnippet() {
        try {
            String readme = Files.readString(Path.of("..", "docs", "spring-boot.md"));
            int heading = readme.indexOf("\n" + HEADING + "\n");
            assertThat(heading).as("docs/spring-boot.md heading " + HEADING).isPositive();
            int start = readme.indexOf("```yaml\n", heading) + "```yaml\n".length();
            return readme.substring(start, readme.indexOf("\n```\n", start) + 1);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static ConfigurableApplicationContext start(String applicationYml) {
        ApplicationContextInitializer<ConfigurableApplicationContext> config = context -> context.getEnvironment()
                .getPropertySources().addLast(yaml(applicationYml));
        return new SpringApplicationBuilder(App.class).initializers(config)
                .properties("server.port=0", "spring.main.banner-mode=off",
                        "management.endpoints.web.exposure.include=health,quotagate")
                .run();
    }

    /** As Spring Boot loads an application.yml. */
    private static PropertySource<?> yaml(String text) {
        try {
            return new YamlPropertySourceLoader().load("application.yml",
                    new ByteArrayResource(text.getBytes(StandardCharsets.UTF_8), "application.yml")).get(0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private HttpResponse<String> get(ConfigurableApplicationContext app, String path, String tenant)
            throws Exception {
        String port = app.getEnvironment().getProperty("local.server.port");
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                .timeout(Duration.ofSeconds(10));
        if (tenant != null) request.header("X-Tenant-Id", tenant);
        return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** An API behind the filter, with Spring Security on the class path letting every request through. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Items.class)
    static class App {
        @Bean
        SecurityFilterChain security(HttpSecurity http) throws Exception {
            return http.authorizeHttpRequests(a -> a.anyRequest().permitAll()).build();
        }
    }

    @RestController
    static class Items {
        @GetMapping("/items")
        String items() {
            return "items";
        }
    }
}

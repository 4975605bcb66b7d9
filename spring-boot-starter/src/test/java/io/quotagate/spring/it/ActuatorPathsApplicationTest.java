package io.quotagate.spring.it;

import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A first deploy: the plans file says nothing about the Actuator, and a readiness probe or a Prometheus scrape
 * sends no tenant. The starter leaves the Actuator's paths unlimited (on the application's port, under any base
 * path, and on a management port of its own) unless {@code quotagate.limit-actuator=true}. Runs on Boot 3.5 here
 * and on Boot 4.0 in module {@code spring-boot4-it}.
 */
class ActuatorPathsApplicationTest {
    private final HttpClient client = HttpClient.newHttpClient();

    @Test
    void theActuatorNeedsNoTenantAndIsNeverLimitedWhileTheApiIs() throws Exception {
        try (ConfigurableApplicationContext app = start()) {
            for (int i = 0; i < 5; i++) {
                assertThat(get(app, "local.server.port", "/actuator/health").statusCode()).isEqualTo(200);
            }
            HttpResponse<String> noTenant = get(app, "local.server.port", "/hello");
            assertThat(noTenant.statusCode()).isEqualTo(401);
            assertThat(noTenant.body()).contains("missing_tenant", "send the header X-Tenant-Id", "limited: false");
        }
    }

    @Test
    void anotherBasePathIsLeftUnlimitedToo() throws Exception {
        try (ConfigurableApplicationContext app = start("management.endpoints.web.base-path=/manage")) {
            assertThat(get(app, "local.server.port", "/manage/health").statusCode()).isEqualTo(200);
            assertThat(get(app, "local.server.port", "/actuator/health").statusCode())
                    .as("no longer the Actuator's path: limited like any other").isEqualTo(401);
        }
    }

    @Test
    void aManagementPortOfItsOwnIsNotLimited() throws Exception {
        try (ConfigurableApplicationContext app = start("management.server.port=0")) {
            for (int i = 0; i < 5; i++) {
                assertThat(get(app, "local.management.port", "/actuator/health").statusCode()).isEqualTo(200);
            }
            assertThat(get(app, "local.server.port", "/hello").statusCode()).isEqualTo(401);
        }
    }

    @Test
    void limitActuatorOptsInOnAManagementPortOfItsOwnToo() throws Exception {
        try (ConfigurableApplicationContext app = start("management.server.port=0", "quotagate.limit-actuator=true")) {
            HttpResponse<String> probe = get(app, "local.management.port", "/actuator/health");
            assertThat(probe.statusCode()).isEqualTo(401);
            assertThat(probe.body()).contains("missing_tenant");
        }
    }

    @Test
    void limitActuatorOptsIn() throws Exception {
        try (ConfigurableApplicationContext app = start("quotagate.limit-actuator=true")) {
            HttpResponse<String> probe = get(app, "local.server.port", "/actuator/health");
            assertThat(probe.statusCode()).isEqualTo(401);
            assertThat(probe.body()).contains("missing_tenant");
        }
    }

    private static ConfigurableApplicationContext start(String... more) {
        List<String> properties = new ArrayList<>(List.of("server.port=0", "quotagate.plans=classpath:actuator-plans.yml",
                "management.endpoints.web.exposure.include=health,prometheus", "spring.main.banner-mode=off"));
        properties.addAll(List.of(more));
        return new SpringApplicationBuilder(App.class).properties(properties.toArray(String[]::new)).run();
    }

    private HttpResponse<String> get(ConfigurableApplicationContext app, String portProperty, String path)
            throws Exception {
        String port = app.getEnvironment().getProperty(portProperty);
        return client.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** An API behind the filter, with Spring Security on the class path letting every request through. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Hello.class)
    static class App {
        @Bean
        SecurityFilterChain security(HttpSecurity http) throws Exception {
            return http.authorizeHttpRequests(a -> a.anyRequest().permitAll()).build();
        }
    }

    @RestController
    static class Hello {
        @GetMapping("/hello")
        String hello() {
            return "hello";
        }
    }
}

package io.quotagate.spring.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.RedisServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two real Spring Boot applications (the application of {@link QuotagateApplicationTest}: Tomcat, Spring
 * Security, Actuator and the starter) sharing one real Redis through their plans file's {@code store:}, each
 * test under a key prefix of its own: a tenant set through one instance's Actuator endpoint is read back through
 * the other's within 2 s, a rolling deploy between two plans files stays {@code UP} and says so, and a write
 * while the shared store is down answers 503 and changes nothing. Runs on Boot 3.5 here and on Boot 4.0 in
 * {@code spring-boot4-it}.
 */
class SharedLimitsApplicationTest {

    /** What docs/changing-limits.md promises for a change made through any instance to reach every other. */
    private static final Duration SPREAD = Duration.ofSeconds(2);
    private final HttpClient client = HttpClient.newHttpClient();
    private final ObjectMapper json = new ObjectMapper();

    @TempDir
    Path dir;

    @Test
    void aTenantSetThroughOneInstanceIsReadThroughTheOtherWithinTwoSeconds() throws Exception {
        Path plans = plans("plans.yml", RedisServer.shared().uri(), RedisServer.randomPrefix(), "");
        try (Instance a = Instance.start(plans); Instance b = Instance.start(plans)) {
            assertThat(a.status("/actuator/quotagate/wayne")).isEqualTo(404);

            HttpResponse<String> set = a.post("/actuator/quotagate/tenant/wayne",
                    "{\"plan\": \"pro\", \"capacity\": 7, \"refill\": 7, \"period\": \"1m\"}");
            long written = System.nanoTime();
            assertThat(set.statusCode()).as(set.body()).isEqualTo(200);
            JsonNode onB = b.awaitJson("/actuator/quotagate/wayne",
                    t -> t.at("/contract/plan").asText().equals("pro"));
            double seconds = (System.nanoTime() - written) / 1e9;
            assertThat(seconds).as("read through B after %.3f s", seconds).isLessThan(SPREAD.toSeconds());
            assertThat(onB.at("/contract/limits/0/capacity").asLong()).isEqualTo(7);
            assertThat(onB.at("/limits/0/capacity").asLong()).as("B's bucket has the tenant's own limits").isEqualTo(7);

            // both say where the limits come from: the same shared version, the same runtime entry
            JsonNode limitsA = a.json("/actuator/quotagate").at("/limits");
            JsonNode limitsB = b.json("/actuator/quotagate").at("/limits");
            for (JsonNode limits : new JsonNode[] {limitsA, limitsB}) {
                assertThat(limits.at("/shared").asBoolean()).isTrue();
                assertThat(limits.at("/fileAgrees").asBoolean()).isTrue();
                assertThat(limits.at("/reachable").asBoolean()).isTrue();
                assertThat(limits.at("/overrides/tenants/wayne/plan").asText()).isEqualTo("pro");
            }
            assertThat(limitsB.at("/version").asLong()).isEqualTo(limitsA.at("/version").asLong()).isGreaterThan(1);
            JsonNode health = b.json("/actuator/health/quotagate");
            assertThat(health.at("/status").asText()).isEqualTo("UP");
            assertThat(health.at("/details/limitsVersion").asLong()).isEqualTo(limitsA.at("/version").asLong());
            assertThat(health.at("/details/limitsFileAgrees").asBoolean()).isTrue();
            assertThat(health.at("/details/limitsReachable").asBoolean()).isTrue();
            assertThat(health.at("/details/limitsRefused").asLong()).isZero();

            // cleared through B: A no longer knows the tenant
            assertThat(b.delete("/actuator/quotagate/tenant/wayne").statusCode()).isEqualTo(200);
            a.await("/actuator/quotagate/wayne", r -> r.statusCode() == 404);
            // an invalidation goes to every instance through the store
            assertThat(a.post("/actuator/quotagate/invalidate/wayne", "{}").statusCode()).isEqualTo(200);
        }
    }

    @Test
    void aRollingDeployBetweenTwoPlansFilesStaysUpAndSaysTheFileDisagrees() throws Exception {
        String uri = RedisServer.shared().uri();
        String prefix = RedisServer.randomPrefix();
        Path v1 = plans("plans-v1.yml", uri, prefix, "");
        Path v2 = plans("plans-v2.yml", uri, prefix, "capacity: 150, refill: 150");
        try (Instance a = Instance.start(v1); Instance b = Instance.start(v2)) {
            // B's file was published last: A enforces and reports it, keeps serving, and says its file differs
            JsonNode health = a.awaitJson("/actuator/health/quotagate",
                    h -> h.at("/details/limitsFileAgrees").isBoolean() && !h.at("/details/limitsFileAgrees").asBoolean());
            assertThat(health.at("/status").asText()).isEqualTo("UP");
            assertThat(health.at("/details/limitsNote").asText()).contains("plans-v2.yml");
            JsonNode inForce = a.json("/actuator/quotagate");
            assertThat(inForce.at("/plans/pro/limits/0/capacity").asLong()).isEqualTo(150);
            assertThat(inForce.at("/limits/fileAgrees").asBoolean()).isFalse();
            assertThat(inForce.at("/limits/source").asText()).contains("plans-v2.yml");
            assertThat(b.json("/actuator/health/quotagate").at("/details/limitsFileAgrees").asBoolean()).isTrue();
        }
    }

    @Test
    void aWriteWhileTheSharedStoreIsDownAnswers503AndChangesNothing() throws Exception {
        try (RedisServer redis = RedisServer.startOwn()) {
            Path plans = plans("plans.yml", redis.uri(), RedisServer.randomPrefix(), "");
            try (Instance a = Instance.start(plans)) {
                redis.kill();
                HttpResponse<String> refused = a.post("/actuator/quotagate/tenant/wayne", "{\"plan\": \"pro\"}");
                assertThat(refused.statusCode()).as(refused.body()).isEqualTo(503);
                String error = json.readTree(refused.body()).at("/error").asText();
                assertThat(error).contains("cannot be reached").contains("nothing changed");
                assertThat(refused.body()).doesNotContain("\tat ");
                assertThat(a.status("/actuator/quotagate/wayne")).isEqualTo(404);
                assertThat(a.delete("/actuator/quotagate/overrides").statusCode()).isEqualTo(503);
                // open by default: the instance keeps serving from its local share, and says it cannot read the limits
                JsonNode health = a.awaitJson("/actuator/health/quotagate",
                        h -> h.at("/details/limitsReachable").isBoolean() && !h.at("/details/limitsReachable").asBoolean());
                assertThat(health.at("/status").asText()).isEqualTo("UP");
            }
        }
    }

    /** The application test's plans file with a Redis store, {@code replace} (if any) put in place of pro's rates. */
    private Path plans(String name, String uri, String prefix, String replace) throws IOException {
        String text;
        try (InputStream in = getClass().getResourceAsStream("/it-plans.yml")) {
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        if (!replace.isEmpty()) text = text.replace("capacity: 100, refill: 100", replace);
        text += "store: { type: redis, uri: \"" + uri + "\", prefix: " + prefix + ", timeout: 500ms }\n";
        Path file = dir.resolve(name);
        Files.writeString(file, text);
        return file;
    }

    /** One running application and an HTTP client for its Actuator, as the user {@code ops}. */
    private record Instance(ConfigurableApplicationContext context, int port, HttpClient client, ObjectMapper json)
            implements AutoCloseable {

        static Instance start(Path plans) {
            ConfigurableApplicationContext context = new SpringApplicationBuilder(QuotagateApplicationTest.App.class)
                    .properties("server.port=0", "quotagate.plans=" + plans,
                            "management.endpoints.web.exposure.include=health,quotagate",
                            "management.endpoint.health.show-details=always", "spring.main.banner-mode=off")
                    .run();
            int port = Integer.parseInt(context.getEnvironment().getProperty("local.server.port"));
            return new Instance(context, port, HttpClient.newHttpClient(), new ObjectMapper());
        }

        HttpResponse<String> send(HttpRequest.Builder request) throws IOException, InterruptedException {
            String ops = Base64.getEncoder().encodeToString("ops:pw".getBytes(StandardCharsets.UTF_8));
            return client.send(request.header("Authorization", "Basic " + ops).build(),
                    HttpResponse.BodyHandlers.ofString());
        }

        HttpRequest.Builder request(String path) {
            return HttpRequest.newBuilder(URI.create("http://localhost:" + port + path)).timeout(Duration.ofSeconds(10));
        }

        int status(String path) throws IOException, InterruptedException {
            return send(request(path).GET()).statusCode();
        }

        JsonNode json(String path) throws IOException, InterruptedException {
            HttpResponse<String> response = send(request(path).GET());
            assertThat(response.statusCode()).as(path + ": " + response.body()).isIn(200, 503);
            return json.readTree(response.body());
        }

        HttpResponse<String> post(String path, String body) throws IOException, InterruptedException {
            return send(request(path).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(body)));
        }

        HttpResponse<String> delete(String path) throws IOException, InterruptedException {
            return send(request(path).DELETE());
        }

        /** Polls {@code path} until the answer satisfies {@code condition}, for at most {@link #SPREAD} and a bit. */
        HttpResponse<String> await(String path, Predicate<HttpResponse<String>> condition) throws Exception {
            return Await.until(SPREAD.plusSeconds(1), path + " within " + SPREAD, () -> send(request(path).GET()), condition);
        }

        /** As {@link #await}, for a JSON answer. */
        JsonNode awaitJson(String path, Predicate<JsonNode> condition) throws Exception {
            return Await.until(SPREAD.plusSeconds(1), path + " within " + SPREAD,
                    () -> json.readTree(send(request(path).GET()).body()), condition);
        }

        @Override
        public void close() {
            context.close();
        }
    }
}

package io.quotagate.containers.readme;

import io.undertow.Undertow;
import org.apache.catalina.startup.Tomcat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/installation.md's embedded Tomcat and Undertow snippets, run as shown (on port 0): the filter they build and
 * register answers in front of the application's servlet. The plans are this module's {@code plans.yml}: one request
 * a minute per tenant, so the second is refused.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EmbeddedSnippetsTest {
    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void theEmbeddedTomcatSnippetServesThroughTheFilter() throws Exception {
        Tomcat tomcat = new TomcatSnippet().start(0, Files.createTempDirectory(Path.of("target"), "tomcat-snippet-"));
        try {
            assertLimited(tomcat.getConnector().getLocalPort());
        } finally {
            tomcat.stop();
            tomcat.destroy();
        }
    }

    @Test
    void theUndertowInCodeSnippetServesThroughTheFilter() throws Exception {
        UndertowInCodeSnippet.Running running = new UndertowInCodeSnippet().start(0);
        try {
            Undertow.ListenerInfo listener = running.server().getListenerInfo().get(0);
            assertLimited(((InetSocketAddress) listener.getAddress()).getPort());
        } finally {
            running.server().stop();
            running.manager().stop();
            running.manager().undeploy();
        }
    }

    private static void assertLimited(int port) throws Exception {
        HttpResponse<String> first = get(port, "snippet-tenant");
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.body()).isEqualTo("api");
        HttpResponse<String> second = get(port, "snippet-tenant");
        assertThat(second.statusCode()).isEqualTo(429);
        assertThat(second.body()).contains("\"reason\":\"tenant_rate\"");
        assertThat(get(port, null).statusCode()).as("no tenant").isEqualTo(401);
    }

    private static HttpResponse<String> get(int port, String tenant) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/orders/1"))
                .timeout(Duration.ofSeconds(20)).GET();
        if (tenant != null) b.header("X-Tenant-Id", tenant);
        return CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }
}

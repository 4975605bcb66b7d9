package io.quotagate.example;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.testing.Http;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.util.Locale;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * TRACE would echo the request's headers, credentials included (cross-site tracing): the example app
 * answers it with 405 on every endpoint of both ports (404 where there is no endpoint), and never
 * offers it in {@code Allow}. Sent over raw sockets, byte for byte.
 */
class TraceAndOptionsTest {
    private static final String SECRET_HEADERS = "X-Tenant-Id: acme\r\nAuthorization: Bearer s3cr3t-admin-token\r\n"
            + "Cookie: session=c00kie\r\n";
    private static ExampleApp.Running app;

    @BeforeAll
    static void start() throws Exception {
        Plans plans = PlansFile.load(ExampleApp.DEFAULT_PLANS);
        QuotaFilter filter = ExampleApp.withEstimators(QuotaFilter.builder().plans(plans), plans).build();
        app = ExampleApp.start("127.0.0.1", 0, filter, "s3cr3t-admin-token");
    }

    @AfterAll
    static void stop() throws Exception {
        app.close();
    }

    private static String send(String port, String method, String path) throws IOException {
        int p = port.equals("api") ? app.port() : app.managementPort();
        return Http.rawHead(p, method + " " + path + " HTTP/1.1\r\nHost: localhost\r\n" + SECRET_HEADERS);
    }

    private static String allow(String raw) {
        for (String line : raw.substring(0, raw.indexOf("\r\n\r\n")).split("\r\n")) {
            if (line.toLowerCase(Locale.ROOT).startsWith("allow:")) return line.substring(6).strip();
        }
        return null;
    }

    @ParameterizedTest(name = "TRACE {0} {1}")
    @CsvSource({
            "api, /items/1, 405, 'GET, HEAD, OPTIONS'",
            "api, /reports/1, 405, 'GET, HEAD, OPTIONS'",
            "api, /v1/completions, 405, 'POST, OPTIONS'",
            "api, /health, 405, 'GET, HEAD, OPTIONS'",
            "api, /metrics, 404, ",
            "api, /admin/quota, 404, ",
            "api, /nothing/here, 404, ",
            "management, /metrics, 405, 'GET, HEAD, OPTIONS'",
            "management, /dashboard, 405, 'GET, HEAD, OPTIONS'",
            "management, /health, 405, 'GET, HEAD, OPTIONS'",
            "management, /admin/quota, 405, 'GET, HEAD, PUT, OPTIONS'",
            "management, /nothing/here, 404, "})
    void traceIsRefusedAndEchoesNothing(String port, String path, int status, String allowed) throws Exception {
        String raw = send(port, "TRACE", path);
        assertThat(Http.status(raw)).as(raw).isEqualTo(status);
        assertThat(raw).doesNotContain("s3cr3t", "c00kie", "X-Tenant-Id", "message/http");
        if (allowed != null) {
            assertThat(allow(raw)).as("405 says what is allowed (RFC 9110 15.5.6)").isEqualTo(allowed);
            assertThat(raw).containsIgnoringCase("Content-Type: application/problem+json");
            assertThat(raw).contains("\"status\":405", "\"reason\":\"method_not_allowed\"");
        }
        assertThat(Http.status(send(port, "trace", path))).as("in lower case").isNotEqualTo(200);
    }

    @ParameterizedTest(name = "OPTIONS {0} {1}")
    @CsvSource({
            "api, /items/1, 'GET, HEAD, OPTIONS'",
            "api, /v1/completions, 'POST, OPTIONS'",
            "management, /admin/quota, 'GET, HEAD, PUT, OPTIONS'"})
    void optionsNeverOffersTrace(String port, String path, String allowed) throws Exception {
        String raw = send(port, "OPTIONS", path);
        assertThat(Http.status(raw)).as(raw).isEqualTo(200);
        assertThat(allow(raw)).isEqualTo(allowed);
    }
}

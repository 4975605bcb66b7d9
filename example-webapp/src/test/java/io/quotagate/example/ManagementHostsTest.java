package io.quotagate.example;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.testing.Http;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.URI;
import java.util.Collections;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The management port answers only to its own names (DNS rebinding): raw requests with a forged Host
 * to the example app on real Jetty.
 */
class ManagementHostsTest {
    private ExampleApp.Running app;

    private void start(List<String> allowed) throws Exception {
        Plans plans = PlansFile.load(ExampleApp.DEFAULT_PLANS);
        QuotaFilter filter = ExampleApp.withEstimators(QuotaFilter.builder().plans(plans), plans).build();
        app = ExampleApp.start("127.0.0.1", 0, "127.0.0.1", 0, filter, "s3cret",
                ManagementHosts.of("127.0.0.1", allowed), System::nanoTime);
        // a tenant the dashboard would name
        assertThat(Http.get(URI.create(app.baseUri() + "/items/1"), "acme").statusCode()).isEqualTo(200);
        app.sampleDashboard();
    }

    @AfterEach
    void stop() throws Exception {
        if (app != null) app.close();
    }

    /** {@code GET path} on the management port with this Host line (null: none, as HTTP/1.0 may). */
    private String get(String path, String host) throws Exception {
        return Http.rawHead(app.managementPort(), "GET " + path + (host == null ? " HTTP/1.0\r\n" : " HTTP/1.1\r\nHost: " + host + "\r\n")
                + "Authorization: Bearer s3cret\r\n");
    }

    @ParameterizedTest
    @ValueSource(strings = {"evil.example.com", "evil.example.com:8081", "localhost.evil.example.com", "127.0.0.1.nip.io",
            "EVIL.example.com", "127.0.0.2", "[::2]", "10.0.0.1", "0.0.0.0", "localhos", "xn--localhost"})
    void aForeignHostGets421WithAProblemAndNoData(String host) throws Exception {
        start(List.of());
        for (String path : List.of("/dashboard/data", "/dashboard", "/metrics", "/admin/quota", "/health", "/nope")) {
            String response = get(path, host);
            assertThat(Http.status(response)).as(path).isEqualTo(421);
            assertThat(response).containsIgnoringCase("Content-Type: application/problem+json")
                    .contains("\"status\":421", "\"title\":\"Misdirected Request\"", "--management-allowed-hosts")
                    .doesNotContain("acme", "quotagate_", "3000", "Exception");
        }
        String name = host.startsWith("[") ? host : host.replaceAll(":\\d+$", ""); // the port is not judged
        assertThat(get("/dashboard/data", host)).contains("does not answer to host \\\"" + name + "\\\"");
    }

    @ParameterizedTest
    @ValueSource(strings = {"localhost", "localhost:8081", "LOCALHOST:1", "localhost.", "127.0.0.1", "127.0.0.1:8081",
            "[::1]", "[::1]:8081", "[0:0:0:0:0:0:0:1]:9", "127.000.000.001"})
    void theLoopbackNamesAreAnsweredWithAnyPort(String host) throws Exception {
        start(List.of());
        String data = get("/dashboard/data", host);
        assertThat(Http.status(data)).isEqualTo(200);
        assertThat(data).contains("acme");
        assertThat(Http.status(get("/metrics", host))).isEqualTo(200);
        assertThat(Http.status(get("/admin/quota", host))).isEqualTo(200);
    }

    @Test
    void aRequestWithoutHostIsJudgedByTheAddressItReached() throws Exception {
        start(List.of());
        assertThat(Http.status(get("/health", null))).as("HTTP/1.0, no Host: 127.0.0.1 was reached").isEqualTo(200);
    }

    @Test
    void anAbsoluteUriNamingAnotherHostIsNotAnswered() throws Exception {
        start(List.of());
        String response = Http.rawHead(app.managementPort(),
                "GET http://evil.example.com:8081/dashboard/data HTTP/1.1\r\nHost: localhost:8081\r\n");
        assertThat(Http.status(response)).isIn(400, 421);
        assertThat(response).doesNotContain("acme");
    }

    @Test
    void theApiPortAnswersAnyHost() throws Exception {
        start(List.of());
        String response = Http.rawHead(app.port(), "GET /items/1 HTTP/1.1\r\nHost: api.example.com\r\nX-Tenant-Id: acme\r\n");
        assertThat(Http.status(response)).as("the public API has names of its own").isEqualTo(200);
    }

    @Test
    void configuredNamesAreAnsweredBesideTheBoundOnes() throws Exception {
        start(List.of("dash.internal.example.com", "192.0.2.7", "[2001:db8::7]"));
        for (String host : List.of("dash.internal.example.com", "DASH.internal.example.com:443", "192.0.2.7:8081",
                "[2001:db8:0:0:0:0:0:7]", "localhost")) {
            assertThat(Http.status(get("/dashboard/data", host))).as(host).isEqualTo(200);
        }
        assertThat(Http.status(get("/dashboard/data", "internal.example.com"))).isEqualTo(421);
        assertThat(Http.status(get("/dashboard/data", "x.dash.internal.example.com"))).isEqualTo(421);
    }

    @Test
    void aWildcardBindAnswersTheLoopbackNamesAndThisMachinesAddresses() throws Exception {
        ManagementHosts hosts = ManagementHosts.of("0.0.0.0", List.of());
        assertThat(hosts.allows("localhost")).isTrue();
        assertThat(hosts.allows("[::1]")).isTrue();
        for (NetworkInterface n : Collections.list(NetworkInterface.getNetworkInterfaces())) {
            for (InetAddress a : Collections.list(n.getInetAddresses())) {
                String literal = a.getHostAddress().replaceAll("%.*", "");
                assertThat(hosts.allows(literal.contains(":") ? "[" + literal + "]" : literal)).as(literal).isTrue();
            }
        }
        assertThat(hosts.allows("evil.example.com")).isFalse();
        assertThat(hosts.allows("192.0.2.200")).as("TEST-NET: no interface has it").isFalse();
    }

    @Test
    void aNamedBindAnswersThatNameAndItsAddressesNotLocalhostUnlessItIsLoopback() throws Exception {
        ManagementHosts hosts = ManagementHosts.of("192.0.2.9", List.of());
        assertThat(hosts.allowed()).containsExactly("192.0.2.9");
        assertThat(ManagementHosts.of("localhost", List.of()).allows("127.0.0.1")).isTrue();
    }

    @Test
    void noLookupIsMadeForWhatARequestNames() {
        // each would be a DNS query if handed to InetAddress.getByName unbracketed
        for (String host : List.of("abc:def", "cafe:babe:zz", "999.1.1.1", "a b", "", ":", "[]", "[evil.example.com]")) {
            assertThat(ManagementHosts.canonical(host)).as(host).isNull();
        }
        assertThat(ManagementHosts.canonical("[::1]")).isEqualTo("0:0:0:0:0:0:0:1");
        assertThat(ManagementHosts.canonical("Localhost.")).isEqualTo("localhost");
    }

    @Test
    void aMalformedAllowedHostStopsTheAppNamingIt() {
        for (String bad : List.of("http://dash.example.com", "dash.example.com:8081", "dash example", "dash.example.com/x")) {
            java.io.PrintStream old = System.err;
            java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
            System.setErr(new java.io.PrintStream(captured, true));
            int code;
            try {
                code = new CommandLine(new ExampleApp()).setErr(new PrintWriter(new StringWriter()))
                        .execute("--port", "0", "--management-port", "0", "--management-allowed-hosts", "localhost," + bad);
            } finally {
                System.setErr(old);
            }
            assertThat(code).as(bad).isEqualTo(2);
            assertThat(captured.toString()).contains("example-webapp: --management-allowed-hosts: '" + bad
                    + "' is not a host name or IP address (no scheme, port or path)");
        }
        assertThatThrownBy(() -> ManagementHosts.of("127.0.0.1", List.of(""))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theOptionTakesACommaSeparatedList() {
        ExampleApp options = new ExampleApp();
        new CommandLine(options).parseArgs();
        assertThat(options.managementAllowedHosts).isEmpty();
        new CommandLine(options).parseArgs("--management-allowed-hosts", "a.example.com,b.example.com", "--management-allowed-hosts", "c");
        assertThat(options.managementAllowedHosts).containsExactly("a.example.com", "b.example.com", "c");
    }
}

package io.quotagate.loadtest.bench;

import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

class LoadGeneratorTest {

    @Test
    void aClientRewritesTheTenantOfItsOneRequestInPlace() {
        byte[] request = LoadGenerator.request(new InetSocketAddress("127.0.0.1", 8080));
        int at = LoadGenerator.digitsAt(request);

        for (int tenant : new int[]{4321, 0, 9999, 7, 99_999}) {
            LoadGenerator.forTenant(request, at, tenant);
            assertThat(new String(request, StandardCharsets.US_ASCII))
                    .isEqualTo("GET /items/42 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nX-Tenant-Id: "
                            + LoadGenerator.tenantId(tenant) + "\r\n\r\n");
        }
    }
}

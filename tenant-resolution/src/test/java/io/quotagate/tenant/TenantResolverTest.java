package io.quotagate.tenant;

import io.quotagate.plans.PlansFile;
import jakarta.servlet.http.HttpServletRequest;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class TenantResolverTest {

    /** A request that only answers getHeader: enough for header-based resolvers. */
    static HttpServletRequest withHeaders(Map<String, String> headers) {
        return (HttpServletRequest) Proxy.newProxyInstance(TenantResolverTest.class.getClassLoader(),
                new Class<?>[]{HttpServletRequest.class}, (proxy, method, args) -> {
                    if (method.getName().equals("getHeader")) return headers.get((String) args[0]);
                    throw new UnsupportedOperationException(method.getName());
                });
    }

    @Test
    void headerResolverReadsTheNamedHeader() {
        TenantResolver r = TenantResolver.header("X-Org");
        assertThat(r.resolve(withHeaders(Map.of("X-Org", "acme")))).contains("acme");
        assertThat(r.resolve(withHeaders(Map.of()))).isEmpty();
    }

    @Test
    void firstMatchWins() {
        TenantResolver r = TenantResolver.firstOf(List.of(TenantResolver.header("A"), TenantResolver.header("B")));
        assertThat(r.resolve(withHeaders(Map.of("A", "one", "B", "two")))).contains("one");
        assertThat(r.resolve(withHeaders(Map.of("B", "two")))).contains("two");
        assertThat(r.resolve(withHeaders(Map.of()))).isEmpty();
    }

    @Test
    void settingsWithoutResolversUseTheTenantIdHeader() {
        var plans = PlansFile.parse("p.yml", "plans: { free: { limits: [ { capacity: 1, refill: 1, period: 1s } ] } }");
        TenantResolver r = TenantResolvers.fromSettings(plans.tenants());
        assertThat(r.resolve(withHeaders(Map.of("X-Tenant-Id", "acme")))).contains("acme");
    }

    @Test
    void settingsBuildTheConfiguredChain() {
        var plans = PlansFile.parse("p.yml", """
                plans: { free: { limits: [ { capacity: 1, refill: 1, period: 1s } ] } }
                tenants:
                  resolvers:
                    - { type: header, name: X-Org }
                    - { type: header }
                """);
        TenantResolver r = TenantResolvers.fromSettings(plans.tenants());
        assertThat(r.resolve(withHeaders(Map.of("X-Org", "a", "X-Tenant-Id", "b")))).contains("a");
        assertThat(r.resolve(withHeaders(Map.of("X-Tenant-Id", "b")))).contains("b");
    }

    @Test
    void directoryKnowsOnlyItsAssignments() {
        TenantDirectory d = TenantDirectory.of(Map.of("acme", "pro"));
        assertThat(d.planOf("acme")).contains("pro");
        assertThat(d.planOf("other")).isEmpty();
    }

    @Test
    void rejectionCarriesStatusAndReason() {
        var e = new TenantRejectedException(401, "unknown_api_key", "unknown API key");
        assertThat(e.status()).isEqualTo(401);
        assertThat(e.reason()).isEqualTo("unknown_api_key");
        assertThat(e.getStackTrace()).isEmpty();
    }
}

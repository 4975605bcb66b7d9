package io.quotagate.tenant;

import io.quotagate.plans.PlansFile;
import jakarta.servlet.http.HttpServletRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.reflect.Proxy;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static io.quotagate.tenant.FakeRequest.request;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

class TenantResolverTest {

    /** A request that only answers getHeader and getHeaders (one value each): enough for header-based resolvers. */
    static HttpServletRequest withHeaders(Map<String, String> headers) {
        return (HttpServletRequest) Proxy.newProxyInstance(TenantResolverTest.class.getClassLoader(),
                new Class<?>[]{HttpServletRequest.class}, (proxy, method, args) -> {
                    String value = headers.get((String) args[0]);
                    if (method.getName().equals("getHeader")) return value;
                    if (method.getName().equals("getHeaders")) {
                        return Collections.enumeration(value == null ? List.of() : List.of(value));
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
    }

    @Test
    void headerResolverReadsTheNamedHeader() {
        TenantResolver r = TenantResolver.header("X-Org");
        assertThat(r.resolve(withHeaders(Map.of("X-Org", "acme")))).contains("acme");
        assertThat(r.resolve(withHeaders(Map.of()))).isEmpty();
    }

    static Stream<Arguments> ambiguousHeaders() {
        return Stream.of(
                arguments("sent twice", request().header("X-Tenant-Id", "acme").header("X-Tenant-Id", "globex"),
                        "The X-Tenant-Id header must be sent once; it was repeated."),
                arguments("sent twice with one value", request().header("X-Tenant-Id", "acme").header("X-Tenant-Id", "acme"),
                        "The X-Tenant-Id header must be sent once; it was repeated."),
                arguments("sent twice, the second empty", request().header("X-Tenant-Id", "acme").header("X-Tenant-Id", ""),
                        "The X-Tenant-Id header must be sent once; it was repeated."),
                arguments("sent three times", request().header("X-Tenant-Id", "a").header("x-tenant-id", "b").header("X-TENANT-ID", "c"),
                        "The X-Tenant-Id header must be sent once; it was repeated."),
                arguments("folded by a proxy", request().header("X-Tenant-Id", "globex, acme"),
                        "The X-Tenant-Id header must hold one value, not a list."),
                arguments("a bare comma", request().header("X-Tenant-Id", ","),
                        "The X-Tenant-Id header must hold one value, not a list."));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("ambiguousHeaders")
    void aRepeatedOrFoldedTenantHeaderIsRefusedWith400AmbiguousTenant(String description, FakeRequest request, String detail) {
        TenantResolver r = TenantResolver.header(TenantResolver.DEFAULT_HEADER);
        assertThatThrownBy(() -> r.resolve(request.build())).isInstanceOfSatisfying(TenantRejectedException.class, e -> {
            assertThat(e.status()).isEqualTo(400);
            assertThat(e.reason()).isEqualTo("ambiguous_tenant");
            assertThat(e.getMessage()).isEqualTo(detail);
        });
    }

    @Test
    void aChainStopsAtAnAmbiguousHeaderInsteadOfTryingTheNextResolver() {
        // falling through to a weaker resolver would hand the choice back to the client
        TenantResolver r = TenantResolver.firstOf(List.of(TenantResolver.header("X-Tenant-Id"), TenantResolver.header("X-Org")));
        assertThatThrownBy(() -> r.resolve(request().header("X-Tenant-Id", "a").header("X-Tenant-Id", "b")
                .header("X-Org", "c").build())).isInstanceOf(TenantRejectedException.class);
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

package io.quotagate.filter.internal.route;

import io.quotagate.tenant.TenantRejectedException;
import io.quotagate.tenant.TenantResolver;
import jakarta.servlet.http.HttpServletRequest;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.util.Optional;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code path} resolver and route matching read one path: for any path a container may hand
 * over (Undertow passes dot, empty and parameter segments on as written), the tenant the resolver
 * finds is the one it finds in the canonical form that route matching sees, and a path with a
 * {@code ..} segment is refused by both.
 */
class PathTenantAgreementTest {
    private static final String[] SEGMENTS = {"t", "acme", "globex", "items", "1", "", ".", "..", "%2e", "%2E%2e",
            ".%2e", "..;x", ".;x", "acme;jsessionid=1", ";x=1", "a.b", "...", "%2ex", "T"};

    private static HttpServletRequest dispatched(String path) {
        return (HttpServletRequest) Proxy.newProxyInstance(PathTenantAgreementTest.class.getClassLoader(),
                new Class<?>[]{HttpServletRequest.class}, (proxy, method, args) -> switch (method.getName()) {
                    case "getServletPath" -> path;
                    case "getPathInfo" -> null;
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    /** The tenant, or "refused: reason". */
    private static String resolve(TenantResolver resolver, String path) {
        try {
            Optional<String> tenant = resolver.resolve(dispatched(path));
            return tenant.orElse("(none)");
        } catch (TenantRejectedException e) {
            return "refused: " + e.status() + " " + e.reason();
        }
    }

    @Test
    void theResolverFindsTheTenantOfTheCanonicalPathRouteMatchingSees() {
        Random random = new Random(28);
        for (String prefix : new String[]{"/t/", "/", "/api/t/"}) {
            TenantResolver resolver = TenantResolver.path(prefix);
            for (int i = 0; i < 20_000; i++) {
                StringBuilder b = new StringBuilder();
                int segments = 1 + random.nextInt(6);
                for (int s = 0; s < segments; s++) b.append('/').append(SEGMENTS[random.nextInt(SEGMENTS.length)]);
                if (random.nextInt(4) == 0) b.append('/');
                String path = b.toString();
                String canonical = RequestPath.normalize(path);
                String found = resolve(resolver, path);
                if (canonical == null) {
                    assertThat(found).as(prefix + " " + path).isEqualTo("refused: 400 invalid_path");
                } else {
                    assertThat(found).as(prefix + " " + path + " (canonical " + canonical + ")")
                            .isEqualTo(resolve(resolver, canonical));
                }
            }
        }
    }
}

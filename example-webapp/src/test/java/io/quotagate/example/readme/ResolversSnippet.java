package io.quotagate.example.readme;

// README snippet
import io.quotagate.tenant.ApiKeyResolver;
import io.quotagate.tenant.JwtClaimResolver;
import io.quotagate.tenant.TenantResolver;
import java.nio.file.Files;
import java.util.List;
// README snippet end
import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;

/** docs/tenants.md, resolvers from code: compiled here, held verbatim by that page. */
class ResolversSnippet {
    interface Customers {
        Optional<String> tenantOfKeyHash(String sha256Hex);
    }

    TenantResolver resolvers(Customers db, Path pem) throws IOException {
        // README snippet
        TenantResolver resolver = TenantResolver.firstOf(List.of(
                ApiKeyResolver.builder().lookup(hash -> db.tenantOfKeyHash(hash)).build(),   // Optional<String>, cached
                JwtClaimResolver.builder().claim("tid").publicKeyPem(Files.readString(pem)).build(),
                TenantResolver.host(".api.example.com"),
                TenantResolver.path("/t/"),
                TenantResolver.principal(),
                TenantResolver.attribute("tenant"),
                TenantResolver.header("X-Tenant-Id")));
        // README snippet end
        return resolver;
    }
}

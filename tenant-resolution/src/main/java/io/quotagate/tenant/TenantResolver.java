package io.quotagate.tenant;

import jakarta.servlet.http.HttpServletRequest;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Finds the tenant a request belongs to.
 *
 * <p>A resolver returns the id as the client sent it; the filter checks it against
 * {@link io.quotagate.plans.TenantId} before the id is used as a key anywhere, so a resolver never
 * needs to sanitise. A resolver that recognises the request but refuses it (an unknown API key, a
 * forged token) throws {@link TenantRejectedException}.
 */
@FunctionalInterface
public interface TenantResolver {

    /** The header {@link #header(String)} reads by default. */
    String DEFAULT_HEADER = "X-Tenant-Id";

    /**
     * The tenant id of this request, unvalidated, or empty if this resolver finds none.
     *
     * @throws TenantRejectedException if the request carries a credential that must be refused
     */
    Optional<String> resolve(HttpServletRequest request);

    /** The value of a request header (the first, if repeated). */
    static TenantResolver header(String name) {
        Objects.requireNonNull(name, "name");
        if (name.isBlank()) throw new IllegalArgumentException("header name must not be blank");
        return request -> Optional.ofNullable(request.getHeader(name));
    }

    /** The first resolver, in order, that finds a tenant. */
    static TenantResolver firstOf(List<TenantResolver> resolvers) {
        List<TenantResolver> copy = List.copyOf(resolvers);
        if (copy.isEmpty()) throw new IllegalArgumentException("at least one resolver is required");
        if (copy.size() == 1) return copy.get(0);
        return request -> {
            for (TenantResolver r : copy) {
                Optional<String> id = r.resolve(request);
                if (id.isPresent()) return id;
            }
            return Optional.empty();
        };
    }
}

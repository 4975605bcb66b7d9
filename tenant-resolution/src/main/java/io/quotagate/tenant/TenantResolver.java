package io.quotagate.tenant;

import jakarta.servlet.http.HttpServletRequest;

import java.security.Principal;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * Finds the tenant a request belongs to.
 *
 * <p>A resolver returns the id as the client sent it; the filter checks it against
 * {@link io.quotagate.plans.TenantId} before the id is used as a key anywhere, so a resolver never
 * needs to sanitise. A resolver that recognises the request but refuses it (an unknown API key, a
 * forged token) throws {@link TenantRejectedException}.
 *
 * <p>Built-in resolvers: {@link #header}, {@link #host}, {@link #path}, {@link #principal},
 * {@link #attribute}, {@link ApiKeyResolver} and {@link JwtClaimResolver}; docs/tenants.md says when
 * each one can be trusted.
 */
@FunctionalInterface
public interface TenantResolver {

    /** The header {@link #header(String)} reads by default. */
    String DEFAULT_HEADER = "X-Tenant-Id";

    /** The prefix {@link #path(String)} uses by default: {@code /t/{tenant}/...}. */
    String DEFAULT_PATH_PREFIX = "/t/";

    /**
     * The tenant id of this request, unvalidated, or empty if this resolver finds none.
     *
     * @throws TenantRejectedException if the request carries a credential that must be refused
     */
    Optional<String> resolve(HttpServletRequest request);

    /**
     * The value of a request header. Trustworthy only when something in front of the application (a
     * gateway that authenticated the caller) sets the header and strips any value the client sent.
     * A header sent more than once, or one value holding a comma (how proxies fold repeated headers),
     * is refused with 400 {@code ambiguous_tenant} ({@link TenantRejectedException}): a gateway that
     * appends its value instead of replacing the client's is then never bypassed by the client's copy.
     */
    static TenantResolver header(String name) {
        Objects.requireNonNull(name, "name");
        if (name.isBlank()) throw new IllegalArgumentException("header name must not be blank");
        return request -> Optional.ofNullable(SingleHeader.value(request, name, true));
    }

    /**
     * The single DNS label in front of {@code suffix} in the request's host name:
     * {@code host(".api.example.com")} maps {@code acme.api.example.com} to {@code acme}. A host that
     * does not end with the suffix, or has more than one label in front of it, yields nothing. A host
     * name in absolute form, with its trailing dot ({@code acme.api.example.com.}), names the same host
     * and the same tenant.
     *
     * @param suffix the shared domain, starting with a dot ({@code .api.example.com})
     */
    static TenantResolver host(String suffix) {
        Objects.requireNonNull(suffix, "suffix");
        if (!suffix.startsWith(".") || suffix.length() < 2) {
            throw new IllegalArgumentException("suffix must start with a dot, e.g. .api.example.com, was '" + suffix + "'");
        }
        String s = suffix.toLowerCase(Locale.ROOT);
        return request -> {
            String name = request.getServerName();
            if (name == null) return Optional.empty();
            int end = name.length();
            if (end > 0 && name.charAt(end - 1) == '.') end--; // absolute form (RFC 1034 section 3.1): the same host
            if (end <= s.length()) return Optional.empty();
            if (!name.regionMatches(true, end - s.length(), s, 0, s.length())) return Optional.empty();
            String label = name.substring(0, end - s.length());
            if (label.indexOf('.') >= 0) return Optional.empty();
            return Optional.of(label.toLowerCase(Locale.ROOT));
        };
    }

    /**
     * The path segment after {@code prefix}: {@code path("/t/")} maps {@code /t/acme/items/1} to
     * {@code acme}. The segment is taken from the path the container dispatches (servlet path + path
     * info, decoded, inside the context), read as the filter's route matching reads it: empty and
     * {@code .} segments are skipped and path parameters cut, so {@code /t/acme/../globex/items/1},
     * which the container serves as {@code /t/globex/items/1}, is globex's, and {@code /./t/acme/items/1}
     * is acme's. A {@code ..} segment still in that path (a container that does not resolve it) is
     * refused with 400 {@code invalid_path}.
     *
     * @param prefix starts and ends with {@code /}, without empty, {@code .} or {@code ..} segments
     */
    static TenantResolver path(String prefix) {
        Objects.requireNonNull(prefix, "prefix");
        if (!prefix.startsWith("/") || !prefix.endsWith("/")) {
            throw new IllegalArgumentException("prefix must start and end with '/', e.g. /t/, was '" + prefix + "'");
        }
        DispatchedPath after = new DispatchedPath(prefix);
        return request -> Optional.ofNullable(after.segmentAfterPrefix(DispatchedPath.of(request)));
    }

    /**
     * The name of the authenticated user ({@link HttpServletRequest#getUserPrincipal()}), for
     * applications whose container or security filter authenticates tenants (one principal per
     * tenant, e.g. client-certificate or service-account logins).
     */
    static TenantResolver principal() {
        return request -> {
            Principal p = request.getUserPrincipal();
            return p == null ? Optional.empty() : Optional.ofNullable(p.getName());
        };
    }

    /**
     * A request attribute set by an earlier filter (an authentication filter that knows the tenant).
     * A non-string value is turned into text with {@code toString()}.
     */
    static TenantResolver attribute(String name) {
        Objects.requireNonNull(name, "name");
        if (name.isBlank()) throw new IllegalArgumentException("attribute name must not be blank");
        return request -> {
            Object v = request.getAttribute(name);
            return v == null ? Optional.empty() : Optional.of(v.toString());
        };
    }

    /** The first resolver, in order, that finds a tenant. */
    static TenantResolver firstOf(List<TenantResolver> resolvers) {
        List<TenantResolver> copy = List.copyOf(resolvers);
        if (copy.isEmpty()) throw new IllegalArgumentException("at least one resolver is required");
        if (copy.size() == 1) return copy.get(0);
        TenantResolver[] all = copy.toArray(new TenantResolver[0]);
        return request -> {
            for (TenantResolver r : all) { // an array: no Iterator per request
                Optional<String> id = r.resolve(request);
                if (id.isPresent()) return id;
            }
            return Optional.empty();
        };
    }
}

package io.quotagate.filter;

import io.quotagate.filter.internal.admission.RequestFacts;
import io.quotagate.filter.internal.route.Route;
import io.quotagate.tenant.ClientAddress;
import jakarta.servlet.http.HttpServletRequest;

import java.util.Set;
import java.util.function.Function;

/**
 * What the gate reads of a servlet request: the client's address behind the trusted proxies, the user
 * inside the tenant (by the file's user resolvers, if any), and whether the route's cost is estimated by
 * one of the builder's {@link CostEstimator}s. One per plans in force, shared by every request.
 */
final class ServletRequestFacts implements RequestFacts<HttpServletRequest> {
    private final ClientAddress clientAddress;
    private final Function<HttpServletRequest, String> user;
    private final Set<String> estimatedRoutes;

    /**
     * @param user            finds the user id in a request, or null if no user is resolved
     * @param estimatedRoutes the routes with a cost estimator
     */
    ServletRequestFacts(ClientAddress clientAddress, Function<HttpServletRequest, String> user,
                        Set<String> estimatedRoutes) {
        this.clientAddress = clientAddress;
        this.user = user;
        this.estimatedRoutes = estimatedRoutes;
    }

    @Override
    public String clientAddress(HttpServletRequest request) {
        return clientAddress.of(request);
    }

    @Override
    public String user(HttpServletRequest request) {
        return user == null ? null : user.apply(request);
    }

    @Override
    public boolean estimated(Route route) {
        return estimatedRoutes.contains(route.name());
    }
}

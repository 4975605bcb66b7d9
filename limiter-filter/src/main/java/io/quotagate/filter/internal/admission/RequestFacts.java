package io.quotagate.filter.internal.admission;

import io.quotagate.filter.internal.route.Route;

/**
 * What the {@link Gate} may read of a request, and only when its decision needs it: the client's address,
 * the user inside the tenant, and whether the route's cost is estimated from the body. One instance serves
 * every request under a policy (the filter's reads a servlet request), so a decision allocates nothing for it.
 *
 * @param <R> the request type
 */
public interface RequestFacts<R> {
    /**
     * The client's address: the key of an anonymous client, and a guest's share of a group the guests' cap
     * limits.
     */
    String clientAddress(R request);

    /**
     * The user's id inside the tenant (not yet validated), or null if the request names none or no user is
     * resolved; read only where a limit is kept per user.
     *
     * @throws io.quotagate.tenant.TenantRejectedException for a request that names its user ambiguously (a
     *                                                     repeated or folded header): refused with 400
     *                                                     {@code invalid_user}, uncharged
     */
    String user(R request);

    /** Whether the route's cost is estimated from the request's body ({@link Gate#decide} says what changes). */
    boolean estimated(Route route);

    /**
     * The facts of a request that is its client's address: no user; every route's cost {@code estimated} or
     * none (tests and benchmarks).
     */
    static RequestFacts<String> address(boolean estimated) {
        return estimated ? Address.ESTIMATED : Address.STATIC;
    }

    /** See {@link #address(boolean)}. */
    enum Address implements RequestFacts<String> {
        STATIC, ESTIMATED;

        @Override
        public String clientAddress(String address) {
            return address;
        }

        @Override
        public String user(String address) {
            return null;
        }

        @Override
        public boolean estimated(Route route) {
            return this == ESTIMATED;
        }
    }
}

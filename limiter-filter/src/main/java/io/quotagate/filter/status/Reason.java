package io.quotagate.filter.status;

/** Why a request was refused; {@link #code()} is the {@code reason} member of the problem body. */
public enum Reason {
    /** The tenant's own bucket (its plan) is empty. */
    TENANT_RATE("tenant_rate"),
    /** The pool shared by every guest (unknown tenants and anonymous clients, {@code tenants.guests}) is empty. */
    GUEST_RATE("guest_rate"),
    /** The quota shared by all tenants is empty. */
    GLOBAL_RATE("global_rate"),
    /** The tenant (or the whole API) already has as many requests of the route's group in flight as allowed. */
    CONCURRENCY("concurrency"),
    /**
     * A calendar quota of the tenant's plan (per day, week or month) is used up; the refusal names it
     * and waits for its reset.
     */
    QUOTA("quota"),
    /**
     * The bucket of one user inside the tenant (its plan's {@code per-user} limits) is empty, though
     * the tenant's is not: one user may not take more than that share of the tenant's bucket.
     */
    USER_RATE("user_rate"),
    /** The route's own bucket of the tenant ({@code routes[].limits}, {@code per: tenant}) is empty. */
    ROUTE_RATE("route_rate"),
    /** The route's own bucket of the user inside the tenant ({@code per: user}) is empty. */
    ROUTE_USER_RATE("route_user_rate"),
    /** The route's own bucket of the client address ({@code per: client-address}) is empty. */
    ROUTE_ADDRESS_RATE("route_address_rate");


    private final String code;

    Reason(String code) {
        this.code = code;
    }

    /** The wire form, e.g. {@code tenant_rate}. */
    public String code() {
        return code;
    }
}

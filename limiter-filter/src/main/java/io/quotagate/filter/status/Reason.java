package io.quotagate.filter.status;

/**
 * Why a limit refused a request (a 429): the one table of each reason's wire form, the problem body's
 * wording and the statistics' scope tag, from the bucket that refused to the response and the metric.
 * {@link #code()} is the {@code reason} member of the problem body.
 */
public enum Reason {
    /** The tenant's own bucket (its plan) is empty. */
    TENANT_RATE("tenant_rate", null, "The tenant's rate limit is exhausted"),
    /** The pool shared by every guest (unknown tenants and anonymous clients, {@code tenants.guests}) is empty. */
    GUEST_RATE("guest_rate", null, "The quota shared by tenants without a plan of their own is exhausted"),
    /** The quota shared by all tenants is empty. */
    GLOBAL_RATE("global_rate", null, "The API's shared quota is exhausted"),
    /** The tenant (or the whole API) already has as many requests of the route's group in flight as allowed. */
    CONCURRENCY("concurrency", null, "Too many requests of this kind are running at once"),
    /**
     * A calendar quota of the tenant's plan (per day, week or month) is used up; the refusal names it
     * and waits for its reset.
     */
    QUOTA("quota", null, "The tenant's quota '%s' is used up until it resets"),
    /**
     * The bucket of one user inside the tenant (its plan's {@code per-user} limits) is empty, though
     * the tenant's is not: one user may not take more than that share of the tenant's bucket.
     */
    USER_RATE("user_rate", "per-user", "This user's share of the tenant's rate limit (per-user) is exhausted"),
    /** The route's own bucket of the tenant ({@code routes[].limits}, {@code per: tenant}) is empty. */
    ROUTE_RATE("route_rate", "tenant", "The route's limit '%s' is exhausted"),
    /** The route's own bucket of the user inside the tenant ({@code per: user}) is empty. */
    ROUTE_USER_RATE("route_user_rate", "user", "The route's limit '%s' is exhausted"),
    /** The route's own bucket of the client address ({@code per: client-address}) is empty. */
    ROUTE_ADDRESS_RATE("route_address_rate", "client-address", "The route's limit '%s' is exhausted");


    private final String code;
    private final String scope;
    private final String wording;

    Reason(String code, String scope, String wording) {
        this.code = code;
        this.scope = scope;
        this.wording = wording;
    }

    /** The wire form, e.g. {@code tenant_rate}. */
    public String code() {
        return code;
    }

    /**
     * For a bucket beside the tenant's (a user's share, a route's own), the {@code scope} tag of its
     * refusals in the statistics ({@code per-user}, {@code tenant}, {@code user}, {@code client-address});
     * null for the tenant's own limits (its bucket, the guest pool, the global quota, a calendar quota, a
     * concurrency cap): a refusal by those is the tenant's limit reached.
     */
    public String scope() {
        return scope;
    }

    /**
     * The problem body's {@code detail} of a refusal for this reason.
     *
     * @param limit             the name of the limit that refused (a calendar quota, a route's own), else null
     * @param retryAfterSeconds the {@code Retry-After} it states, in whole seconds
     */
    public String detail(String limit, long retryAfterSeconds) {
        String what = wording.indexOf('%') < 0 ? wording : wording.formatted(limit);
        return what + "; retry after " + retryAfterSeconds + " s.";
    }
}

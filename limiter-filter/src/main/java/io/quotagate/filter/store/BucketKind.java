package io.quotagate.filter.store;

/** What a bucket limits; part of its key, so tenants and the global quota never collide. */
public enum BucketKind {
    /** One bucket per assigned tenant (known to an assignment or the directory), sized by its plan. */
    TENANT("tenant"),
    /**
     * One bucket per unknown tenant (under {@code unknown: default}) or anonymous client: ids any
     * client can make up. Kept apart from {@link #TENANT} so a flood of them can never evict an
     * assigned tenant's bucket.
     */
    GUEST("guest"),
    /**
     * One bucket per user inside an assigned tenant (a plan's {@code per-user} limits), keyed
     * {@code <tenant>/<user>}; a table of its own, so users never evict tenants.
     */
    USER("user"),
    /**
     * A route's own buckets ({@code routes[].limits}) of assigned tenants and their users, keyed
     * {@code <route>/<tenant>} or {@code <route>/<tenant>/<user>}; a table of its own.
     */
    ROUTE("route"),
    /**
     * A route's own buckets of ids any client can make up: guests' ({@code <route>/<id>}) and client
     * addresses' ({@code <route>/@<address>}); kept apart from {@link #ROUTE} as {@link #GUEST} is from
     * {@link #TENANT}.
     */
    ROUTE_GUEST("route-guest"),
    /** The single quota shared by all tenants. */
    GLOBAL("global");

    private final String keyPart;

    BucketKind(String keyPart) {
        this.keyPart = keyPart;
    }

    /** The kind as it appears in a store key ({@code <prefix>:<kind>:<id>}). */
    public String keyPart() {
        return keyPart;
    }
}

package io.quotagate.filter.store;

/** What a bucket limits; part of its key, so tenants and the global quota never collide. */
public enum BucketKind {
    /** One bucket per tenant, sized by the tenant's plan. */
    TENANT("tenant"),
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

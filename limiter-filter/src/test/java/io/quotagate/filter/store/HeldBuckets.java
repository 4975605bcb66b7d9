package io.quotagate.filter.store;


/** Reads a local store's buckets as they are, for tests in other packages that check what a request took. */
public final class HeldBuckets {
    private HeldBuckets() {
    }

    /**
     * Units available now in the bucket {@code store} holds for this id.
     *
     * @param store a {@link BucketStore#local} store
     * @throws AssertionError if it holds none
     */
    public static long available(BucketStore store, BucketKind kind, String id) {
        MonitorBucket b = ((LocalBucketStore) store).held(kind, id);
        if (b == null) throw new AssertionError("no " + kind + " bucket held for " + id);
        return b.available();
    }
}

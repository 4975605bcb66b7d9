package io.quotagate.filter.store;

/** The store contract, for {@link BucketStore#local}. */
class LocalBucketStoreContractTest extends BucketStoreContract {
    private final BucketStore store = BucketStore.local(1_000, clock);

    @Override
    protected BucketStore store() {
        return store;
    }
}

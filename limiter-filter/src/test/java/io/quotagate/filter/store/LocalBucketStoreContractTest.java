package io.quotagate.filter.store;

import io.quotagate.filter.testing.ManualClock;

import java.time.Duration;

/** The store contract, for {@link BucketStore#local}. */
class LocalBucketStoreContractTest extends BucketStoreContract {
    private final ManualClock clock = new ManualClock();
    private final BucketStore store = BucketStore.local(1_000, clock);

    @Override
    protected BucketStore store() {
        return store;
    }

    @Override
    protected void advance(Duration d) {
        clock.advance(d);
    }
}

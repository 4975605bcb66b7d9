package io.quotagate.filter.store;

import io.github.bucket4j.Bucket;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.ConsumptionProbe;
import io.quotagate.filter.admission.Admission;
import io.quotagate.filter.core.BucketKind;
import io.quotagate.plans.Bandwidth;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What every {@link BucketStore} must do, whatever holds the buckets: run by a subclass per store
 * (local, Redis), as bucket4j runs one abstract test against every backend. Subclasses give a fresh,
 * empty store per test and a way to move its time.
 */
public abstract class BucketStoreContract {
    /** 10 units of burst, 1 unit per second. */
    protected static final BucketConfiguration TEN_PER_TEN_SECONDS = Admission.configuration(List.of(
            new Bandwidth("burst", 10, 1, Duration.ofSeconds(1))));

    /** A store that no other test shares. */
    protected abstract BucketStore store();

    /** Moves the store's time forward. */
    protected abstract void advance(Duration d);

    @Test
    void aNewBucketIsFull() {
        Bucket b = store().bucket(BucketKind.TENANT, "acme", TEN_PER_TEN_SECONDS);
        assertThat(b.tryConsumeAndReturnRemaining(1).getRemainingTokens()).isEqualTo(9);
    }

    @Test
    void consumptionIsKeptAcrossLookups() {
        BucketStore store = store();
        assertThat(store.bucket(BucketKind.TENANT, "acme", TEN_PER_TEN_SECONDS).tryConsume(10)).isTrue();
        ConsumptionProbe refused = store.bucket(BucketKind.TENANT, "acme", TEN_PER_TEN_SECONDS).tryConsumeAndReturnRemaining(1);
        assertThat(refused.isConsumed()).isFalse();
        assertThat(refused.getNanosToWaitForRefill()).isEqualTo(Duration.ofSeconds(1).toNanos());
    }

    @Test
    void refillsAsTimePasses() {
        BucketStore store = store();
        Bucket b = store.bucket(BucketKind.TENANT, "acme", TEN_PER_TEN_SECONDS);
        assertThat(b.tryConsume(10)).isTrue();
        advance(Duration.ofMillis(2_500));
        assertThat(store.bucket(BucketKind.TENANT, "acme", TEN_PER_TEN_SECONDS).tryConsumeAndReturnRemaining(2).isConsumed()).isTrue();
        ConsumptionProbe refused = b.tryConsumeAndReturnRemaining(1);
        assertThat(refused.isConsumed()).isFalse();
        assertThat(refused.getNanosToWaitForRefill()).isEqualTo(Duration.ofMillis(500).toNanos());
    }

    @Test
    void tenantsAndKindsDoNotShareBuckets() {
        BucketStore store = store();
        assertThat(store.bucket(BucketKind.TENANT, "acme", TEN_PER_TEN_SECONDS).tryConsume(10)).isTrue();
        assertThat(store.bucket(BucketKind.TENANT, "globex", TEN_PER_TEN_SECONDS).tryConsume(10)).isTrue();
        assertThat(store.bucket(BucketKind.GLOBAL, "acme", TEN_PER_TEN_SECONDS).tryConsume(10)).isTrue();
        assertThat(store.bucket(BucketKind.TENANT, "acme", TEN_PER_TEN_SECONDS).tryConsume(1)).isFalse();
    }

    @Test
    void addedTokensAreGivenBackUpToCapacity() {
        BucketStore store = store();
        Bucket b = store.bucket(BucketKind.TENANT, "acme", TEN_PER_TEN_SECONDS);
        assertThat(b.tryConsume(10)).isTrue();
        b.addTokens(3);
        assertThat(b.tryConsume(3)).isTrue();
        assertThat(b.tryConsume(1)).isFalse();
        b.addTokens(100);
        assertThat(store.bucket(BucketKind.TENANT, "acme", TEN_PER_TEN_SECONDS).tryConsumeAndReturnRemaining(1).getRemainingTokens())
                .as("never above capacity").isEqualTo(9);
    }

    @Test
    void estimatesWithoutConsuming() {
        Bucket b = store().bucket(BucketKind.GLOBAL, "global", TEN_PER_TEN_SECONDS);
        assertThat(b.tryConsume(8)).isTrue();
        assertThat(b.estimateAbilityToConsume(2).canBeConsumed()).isTrue();
        assertThat(b.estimateAbilityToConsume(4).getNanosToWaitForRefill()).isEqualTo(Duration.ofSeconds(2).toNanos());
        assertThat(b.tryConsume(2)).isTrue();
    }

    @Test
    void countsAtLeastThisInstance() {
        assertThat(store().instanceCount()).isGreaterThanOrEqualTo(1);
    }
}

package io.quotagate.filter.redis;

import io.quotagate.filter.internal.admission.Decision;
import io.quotagate.filter.internal.admission.Decisions;
import io.quotagate.filter.status.Reason;
import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.filter.testing.RedisServer;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A guest the guest pool refuses writes nothing to Redis: a flood of made-up ids while the pool is
 * drained leaves the number of {@code <prefix>:guest:*} keys as it was (it used to leave one key per
 * id). On the real Redis, a random prefix per test, the clocks frozen so the pool stays drained.
 */
class RefusedGuestKeysTest {
    /** Guests: 10 each, 50 together, refilled at 1 unit per 10 s. */
    private static final Plans PLANS = PlansFile.parse("guests.yml", """
            plans:
              free:
                limits: [ { capacity: 10, refill: 1, period: 1s } ]
            tenants:
              guests: { limits: [ { capacity: 50, refill: 1, period: 10s } ] }
            """);

    private final ManualClock clock = new ManualClock();
    private final RedisServer redis = RedisServer.shared();
    private final String prefix = RedisServer.randomPrefix();
    private RedisStore store;
    private Decisions decisions;

    @BeforeEach
    void connect() {
        store = RedisStore.connect(RedisSettings.of(redis.uri()).withPrefix(prefix)
                .withTimeout(Duration.ofMillis(500)), 1_000, clock.wallClock(), clock);
        decisions = new Decisions(PLANS, store);
    }

    @AfterEach
    void close() {
        store.close();
    }

    @Test
    void aFloodOfMadeUpGuestIdsWhileThePoolIsDrainedCreatesNoKey() throws Exception {
        for (int g = 0; g < 5; g++) {
            for (int i = 0; i < 10; i++) assertAdmitted(decisions.admit(BucketKind.GUEST, "early-" + g, "free", 1));
        }
        long before = guestKeys();
        assertThat(before).as("the five guests that used the pool").isEqualTo(5);

        for (int i = 0; i < 1_000; i++) {
            assertThat(decisions.admit(BucketKind.GUEST, "made-up-" + i, "free", 1))
                    .isInstanceOfSatisfying(Decision.Rejected.class, r -> {
                        assertThat(r.reason()).isEqualTo(Reason.GUEST_RATE);
                        assertThat(r.retryAfterSeconds()).as("one unit of the pool: 10 s").isEqualTo(10);
                    });
        }
        assertThat(guestKeys()).as("keys after 1,000 refused guests").isEqualTo(before);

        // after a reload, a new guest's bucket would first be moved to the limits in force: not when refused
        decisions.apply(PLANS);
        for (int i = 0; i < 100; i++) {
            assertThat(decisions.admit(BucketKind.GUEST, "after-reload-" + i, "free", 1)).isInstanceOf(Decision.Rejected.class);
        }
        assertThat(guestKeys()).as("keys after a reload and 100 more").isEqualTo(before);
        assertThat(store.fallbackDecisions()).isZero();
    }

    @Test
    void aGuestOverItsOwnLimitIsRefusedForItsOwnRateWithoutTouchingThePool() throws Exception {
        for (int i = 0; i < 10; i++) assertAdmitted(decisions.admit(BucketKind.GUEST, "eager", "free", 1));
        Decision d = decisions.admit(BucketKind.GUEST, "eager", "free", 1);
        assertThat(d).isInstanceOfSatisfying(Decision.Rejected.class, r -> {
            assertThat(r.reason()).isEqualTo(Reason.TENANT_RATE);
            assertThat(r.retryAfterSeconds()).isEqualTo(1);
        });
        // the pool still holds the 40 the others may use
        for (int g = 0; g < 4; g++) {
            for (int i = 0; i < 10; i++) assertAdmitted(decisions.admit(BucketKind.GUEST, "other-" + g, "free", 1));
        }
        assertThat(decisions.admit(BucketKind.GUEST, "late", "free", 1)).isInstanceOf(Decision.Rejected.class);
        assertThat(redis.integer("EXISTS", prefix + ":guest:late")).as("refused by the pool: no key").isZero();
    }

    private static void assertAdmitted(Decision d) {
        assertThat(d).isInstanceOf(Decision.Admitted.class);
    }

    /** The keys matching {@code <prefix>:guest:*}, counted with SCAN. */
    private long guestKeys() throws IOException {
        long count = 0;
        String cursor = "0";
        do {
            List<?> reply = (List<?>) redis.command("SCAN", cursor, "MATCH", prefix + ":guest:*", "COUNT", "1000");
            cursor = (String) reply.get(0);
            count += ((List<?>) reply.get(1)).size();
        } while (!cursor.equals("0"));
        return count;
    }
}

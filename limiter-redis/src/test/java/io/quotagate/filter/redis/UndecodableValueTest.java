package io.quotagate.filter.redis;

import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.store.QuotaBucket;
import io.quotagate.filter.testing.LogCapture;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.filter.testing.RedisServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.logging.Level;

import static io.quotagate.filter.redis.RedisStoreTest.CONFIG;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A value in Redis that is no bucket (written by hand, by another program, or corrupted) is that one
 * key's problem: the key gets a fresh bucket, the failure is logged once for that key, and the store
 * stays on Redis for every tenant, with no outage counted. On the real Redis, a random prefix per test.
 */
class UndecodableValueTest {
    private final ManualClock clock = new ManualClock();
    private final RedisServer redis = RedisServer.shared();
    private final String prefix = RedisServer.randomPrefix();
    private RedisStore store;
    private LogCapture warnings;

    @BeforeEach
    void connect() {
        warnings = LogCapture.of(RedisStore.class, Level.WARNING);
        // bucket4j's buckets (a local allowance): its state format, its newer formats; an allowance of one
        // unit, so that most operations go to Redis
        store = RedisStore.connect(RedisSettings.of(redis.uri()).withPrefix(prefix).withTimeout(Duration.ofMillis(500))
                .withLocalAllowance(new RedisSettings.LocalAllowance(1, Duration.ofMinutes(1))), 1_000, clock.wallClock(), clock);
    }

    @Test
    void onTheScriptAStringOrAnotherTypeThatIsNoBucketIsReplacedInTheSameCallAndLoggedOnce() throws Exception {
        String prefix = RedisServer.randomPrefix();
        String text = prefix + ":guest:badkey";
        String hash = prefix + ":tenant:acme";
        redis.command("SET", text, "garbage");
        redis.command("HSET", hash, "field", "value");
        try (RedisStore script = RedisStore.connect(RedisSettings.of(redis.uri()).withPrefix(prefix)
                .withTimeout(Duration.ofMillis(500)), 1_000, clock.wallClock(), clock)) {
            QuotaBucket bad = script.bucket(BucketKind.GUEST, "badkey", CONFIG);
            for (int i = 0; i < 16; i++) assertThat(bad.tryTake(1)).as("request %d", i).isTrue();
            QuotaBucket acme = script.bucket(BucketKind.TENANT, "acme", CONFIG);
            assertThat(script.takeAll(new QuotaBucket[]{acme}, 1, 10, false).taken()).isTrue();

            assertThat(script.outages()).as("no outage").isZero();
            assertThat(script.fallbackDecisions()).as("every decision made on Redis").isZero();
            assertThat(bad.available()).as("a fresh bucket in place of the garbage, 16 taken").isEqualTo(100 - 16);
            assertThat(acme.available()).isEqualTo(90);
            assertThat(redis.command("TYPE", hash)).as("the hash replaced by a bucket").isEqualTo("string");
            assertThat(repairWarnings()).as("once per key, naming it").hasSize(2)
                    .anySatisfy(m -> assertThat(m).contains(text)).anySatisfy(m -> assertThat(m).contains(hash));
        }
    }

    @AfterEach
    void close() {
        store.close();
        warnings.close();
    }

    @Test
    void aStringThatIsNoBucketIsReplacedByAFreshBucketAndTheStoreStaysOnRedis() throws Exception {
        String key = prefix + ":guest:badkey";
        redis.command("SET", key, "garbage");

        QuotaBucket bad = store.bucket(BucketKind.GUEST, "badkey", CONFIG);
        for (int i = 0; i < 16; i++) assertThat(bad.tryTake(1)).as("request %d", i).isTrue();
        assertThat(store.bucket(BucketKind.TENANT, "acme", CONFIG).tryTake(1)).isTrue();

        assertThat(store.available()).as("still on Redis").isTrue();
        assertThat(store.outages()).as("no outage").isZero();
        assertThat(store.fallbackDecisions()).as("every decision made on Redis").isZero();
        assertThat(bad.available()).as("a fresh bucket in place of the garbage, 16 taken").isEqualTo(100 - 16);
        assertThat(redis.integer("EXISTS", prefix + ":tenant:acme")).isOne();
        assertThat(repairWarnings()).as("logged once, naming the key").singleElement()
                .satisfies(m -> assertThat(m).contains(key));
    }

    @Test
    void aValueOfAnotherRedisTypeIsReplacedToo() throws Exception {
        String key = prefix + ":tenant:acme";
        redis.command("HSET", key, "tokens", "999999");

        QuotaBucket acme = store.bucket(BucketKind.TENANT, "acme", CONFIG);
        for (int i = 0; i < 5; i++) assertThat(acme.tryTake(10)).isTrue();

        assertThat(store.outages()).isZero();
        assertThat(store.fallbackDecisions()).isZero();
        assertThat(redis.command("TYPE", key)).isEqualTo("string");
        assertThat(acme.available()).isEqualTo(50);
        assertThat(repairWarnings()).singleElement().satisfies(m -> assertThat(m).contains(key));
    }

    @Test
    void aBucketInANewerBucket4jFormatIsKeptAndThatKeyDecidedLocally() throws Exception {
        String key = prefix + ":tenant:acme";
        String newer = "\u0000\u0000\u0000\u0007 a later release's state";
        redis.command("SET", key, newer);

        QuotaBucket acme = store.bucket(BucketKind.TENANT, "acme", CONFIG);
        assertThat(acme.tryTake(100)).as("this instance's share").isTrue();
        assertThat(acme.tryTake(1)).isFalse();
        assertThat(store.bucket(BucketKind.TENANT, "globex", CONFIG).tryTake(1)).isTrue();

        assertThat(redis.command("GET", key)).as("kept for the instances that read it").isEqualTo(newer);
        assertThat(store.available()).isTrue();
        assertThat(store.outages()).isZero();
        assertThat(store.fallbackDecisions()).as("acme's two decisions").isEqualTo(2);
        assertThat(repairWarnings()).singleElement().satisfies(m -> assertThat(m).contains(key, "newer"));
    }

    @Test
    void withALocalAllowanceTooTheKeyIsReplacedAndTheStoreStaysOnRedis() throws Exception {
        try (RedisStore allowance = RedisStore.connect(RedisSettings.of(redis.uri()).withPrefix(prefix)
                .withTimeout(Duration.ofMillis(500)).withLocalAllowance(
                        new RedisSettings.LocalAllowance(5, Duration.ofMinutes(1))), 1_000, clock.wallClock(), clock)) {
            redis.command("SET", prefix + ":guest:badkey", "garbage");
            QuotaBucket bad = allowance.bucket(BucketKind.GUEST, "badkey", CONFIG);
            for (int i = 0; i < 16; i++) assertThat(bad.tryTake(1)).isTrue();
            assertThat(allowance.available()).isTrue();
            assertThat(allowance.outages()).isZero();
            assertThat(store.bucket(BucketKind.GUEST, "badkey", CONFIG).available()).as("read by another instance")
                    .isBetween(100L - 16, 100L - 16 + 5);
        }
    }

    @Test
    void aKeyBrokenAgainAndAgainIsLoggedOnceAndOtherKeysOncePerKey() throws Exception {
        QuotaBucket bad = store.bucket(BucketKind.GUEST, "badkey", CONFIG);
        for (int i = 0; i < 5; i++) {
            redis.command("SET", prefix + ":guest:badkey", "garbage " + i);
            assertThat(bad.tryTake(1)).isTrue();
        }
        for (int i = 0; i < 3; i++) {
            redis.command("SET", prefix + ":guest:other" + i, "\u0000\u0000\u0000\u0002");
            assertThat(store.bucket(BucketKind.GUEST, "other" + i, CONFIG).tryTake(1)).isTrue();
        }
        assertThat(store.outages()).isZero();
        assertThat(store.available()).isTrue();
        assertThat(repairWarnings()).as("one line per key").hasSize(1 + 3);
    }

    /** The warnings but the one a Redis keeping nothing on disk gets at start (the shared test server keeps nothing). */
    private java.util.List<String> repairWarnings() {
        return warnings.messages().stream().filter(m -> !m.contains("keeps nothing on disk")).toList();
    }
}

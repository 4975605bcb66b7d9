package io.quotagate.filter.redis;

import io.quotagate.filter.store.LimitsChannel;
import io.quotagate.filter.testing.RedisServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the channel makes of whatever is stored under {@code <prefix>:limits} (anyone who can write to
 * Redis can write it): a usable version is plain digits from 1 to 2^53 - 1, compared and written as
 * text by the scripts; anything else is damaged, reported with the key and the value, and replaced
 * only on purpose ({@link LimitsChannel#DAMAGED} expected). Real Redis.
 */
class RedisLimitsChannelTest {
    private final RedisServer redis = RedisServer.shared();
    private final String prefix = RedisServer.randomPrefix();
    private final String key = prefix + ":limits";
    private RedisStore store;
    private LimitsChannel channel;

    @BeforeEach
    void connect() {
        store = RedisStore.connect(RedisSettings.of(redis.uri()).withPrefix(prefix).withTimeout(Duration.ofMillis(500)),
                100);
        channel = store.limitsChannel().orElseThrow();
    }

    @AfterEach
    void close() throws Exception {
        redis.command("DEL", key);
        store.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {"9223372036854775807", "9007199254740992", "99999999999999999", "-5", "3.5", "abc", "007",
            "0", "1e3", " 5", "5 ", "+5", "0x10", ""})
    void aVersionThatIsNotPlainDigitsFromOneTo2To53IsDamagedAndOnlyReplacedOnPurpose(String version) throws Exception {
        redis.command("HSET", key, "version", version, "body", "{}");
        assertThat(channel.version()).isEqualTo(LimitsChannel.DAMAGED);
        LimitsChannel.Versioned read = channel.read().orElseThrow();
        assertThat(read.version()).isEqualTo(LimitsChannel.DAMAGED);
        assertThat(read.damage()).hasValueSatisfying(d -> assertThat(d).contains(key)
                .contains("'" + version + "'").contains("9007199254740991"));
        // nothing a number could mean matches it: not what Lua's tonumber makes of it, not 0
        for (long expected : List.of(0L, 1L, 5L, 7L, 9007199254740991L - 1)) {
            assertThat(channel.replace(expected, expected + 1, "{\"new\":1}")).as("over %s", expected).isFalse();
        }
        assertThat(redis.command("HGET", key, "version")).isEqualTo(version);
        assertThat(channel.replace(LimitsChannel.DAMAGED, 8, "{\"new\":1}")).isTrue();
        assertThat(redis.command("HGET", key, "version")).isEqualTo("8");
        assertThat(channel.read().orElseThrow()).isEqualTo(LimitsChannel.Versioned.of(8, "{\"new\":1}"));
    }

    @Test
    void theHighestUsableVersionIsReadExactlyAndNoneIsWrittenAboveIt() throws Exception {
        redis.command("HSET", key, "version", "9007199254740990", "body", "{}");
        assertThat(channel.version()).isEqualTo(9007199254740990L);
        assertThat(channel.replace(9007199254740990L, LimitsChannel.MAX_VERSION, "{\"v\":1}")).isTrue();
        assertThat(redis.command("HGET", key, "version")).as("as text, not 9.007199254741e+15")
                .isEqualTo("9007199254740991");
        assertThat(channel.version()).isEqualTo(LimitsChannel.MAX_VERSION);
        assertThat(channel.read().orElseThrow().damage()).isEmpty();
    }

    @Test
    void aKeyOfAnotherTypeAHashWithoutVersionOrWithoutBodyIsDamaged() throws Exception {
        redis.command("SET", key, "hello");
        assertThat(channel.version()).isEqualTo(LimitsChannel.DAMAGED);
        assertThat(channel.read().orElseThrow().damage()).hasValueSatisfying(d -> assertThat(d).contains("not a hash"));
        assertThat(channel.replace(0, 1, "{}")).isFalse();
        assertThat(channel.replace(LimitsChannel.DAMAGED, 1, "{}")).isTrue();

        redis.command("DEL", key);
        redis.command("HSET", key, "body", "{}");
        assertThat(channel.version()).as("a body without a version is no missing record").isEqualTo(LimitsChannel.DAMAGED);
        assertThat(channel.read().orElseThrow().damage()).hasValueSatisfying(d -> assertThat(d).contains("version missing"));
        assertThat(channel.replace(0, 1, "{}")).isFalse();

        redis.command("DEL", key);
        redis.command("HSET", key, "version", "4");
        assertThat(channel.version()).isEqualTo(4);
        LimitsChannel.Versioned noBody = channel.read().orElseThrow();
        assertThat(noBody.version()).as("the version is usable, only the body is damaged").isEqualTo(4);
        assertThat(noBody.damage()).hasValueSatisfying(d -> assertThat(d).contains("no body"));
    }

    @Test
    void aBodyOverTheLimitIsMeasuredNotRead() throws Exception {
        redis.command("EVAL", "local x = 'x' for i = 1, 23 do x = x .. x end "
                + "redis.call('HSET', KEYS[1], 'version', '3', 'body', x .. 'x')", "1", key);
        LimitsChannel.Versioned read = channel.read().orElseThrow();
        assertThat(read.version()).isEqualTo(3);
        assertThat(read.body()).isEmpty();
        assertThat(read.damage()).hasValueSatisfying(d -> assertThat(d).contains("8388609 bytes")
                .contains("more than the 8388608"));
        assertThat(channel.replace(3, 4, "{}")).as("replaced like any record of its version").isTrue();
    }

    @Test
    void aWriteReplacesTheWholeKeyAndOnlyOverTheExpectedVersion() throws Exception {
        assertThat(channel.version()).isZero();
        assertThat(channel.read()).isEmpty();
        assertThat(channel.replace(0, 1, "{\"a\":1}")).isTrue();
        assertThat(channel.replace(0, 1, "{\"b\":1}")).as("someone wrote first").isFalse();
        redis.command("HSET", key, "stray", "x");
        assertThat(channel.replace(1, 2, "{\"c\":1}")).isTrue();
        assertThat(redis.command("HGETALL", key)).isEqualTo(List.of("version", "2", "body", "{\"c\":1}"));
    }
}

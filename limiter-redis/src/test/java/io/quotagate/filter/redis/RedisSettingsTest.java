package io.quotagate.filter.redis;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.plans.InvalidPlansException;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import io.quotagate.plans.StoreSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/**
 * {@code store.type: redis}: the options under {@code store:} are this module's to read and check
 * ({@link RedisSettings#of(StoreSpec)}, through {@link RedisStoreProvider} when a filter starts or reloads),
 * each refusal naming the file, the line and the field as every other plans file error does. No Redis needed.
 */
class RedisSettingsTest {

    @TempDir
    Path dir;

    @Test
    void readsARedisStore() {
        Plans plans = PlansFile.parse("p.yml", """
                plans:
                  only: { limits: [ { capacity: 5, refill: 1, period: 1s } ] }
                store:
                  type: redis
                  uri: redis://127.0.0.1:6379/0
                  prefix: shop.eu
                  timeout: 20ms
                  max-retries: 2
                  on-failure: closed
                  heartbeat: 1s
                  instance-ttl: 4s
                  local-allowance: { units: 20, max-delay: 250ms }
                """);
        assertThat(RedisSettings.of(plans.store())).isEqualTo(RedisSettings.from(RedisSettings.of("redis://127.0.0.1:6379/0"))
                .prefix("shop.eu").timeout(Duration.ofMillis(20)).maxRetries(2)
                .onFailure(RedisSettings.OnFailure.CLOSED).heartbeat(Duration.ofSeconds(1)).instanceTtl(Duration.ofSeconds(4))
                .localAllowance(new RedisSettings.LocalAllowance(20, Duration.ofMillis(250))).build());
    }

    @Test
    void everyOtherSettingHasItsDefault() {
        Plans redis = PlansFile.parse("p.yml", "plans:\n  only: { limits: [ { capacity: 5, refill: 1, period: 1s } ] }\n"
                + "store: { type: redis, uri: \"redis://h:6379\" }\n");
        assertThat(RedisSettings.of(redis.store())).isEqualTo(RedisSettings.of("redis://h:6379"));
        assertThat(RedisSettings.of(redis.store()).onFailure()).isEqualTo(RedisSettings.OnFailure.OPEN);
    }

    @Test
    void aCountThatBillsWaitsTwoSecondsOrTheTimeoutIfThatIsLonger() {
        RedisSettings s = RedisSettings.of("redis://h:6379");
        assertThat(s.quotaTimeout()).isEqualTo(Duration.ofSeconds(2));
        assertThat(s.withTimeout(Duration.ofSeconds(3)).quotaTimeout()).isEqualTo(Duration.ofSeconds(3));
        assertThat(s.withQuotaTimeout(Duration.ofMillis(500)).quotaTimeout()).isEqualTo(Duration.ofMillis(500));
        Plans plans = PlansFile.parse("p.yml", "plans:\n  only: { limits: [ { capacity: 5, refill: 1, period: 1s } ] }\n"
                + "store: { type: redis, uri: \"redis://h:6379\", quota-timeout: 750ms }\n");
        assertThat(RedisSettings.of(plans.store()).quotaTimeout()).isEqualTo(Duration.ofMillis(750));
        assertThatThrownBy(() -> s.withQuotaTimeout(Duration.ofMillis(10)))
                .hasMessage("quotaTimeout (PT0.01S) must not be shorter than timeout (PT0.05S)");
    }

    @Test
    void aSpecWrittenInCodeReadsTheSame() {
        StoreSpec spec = StoreSpec.of("redis", Map.of("uri", "redis://cache:6379", "prefix", "shop",
                "timeout", Duration.ofMillis(20), "on-failure", RedisSettings.OnFailure.CLOSED,
                "local-allowance", Map.of("units", 5, "max-delay", Duration.ofMillis(100))));
        assertThat(RedisSettings.of(spec)).isEqualTo(RedisSettings.from(RedisSettings.of("redis://cache:6379"))
                .prefix("shop").timeout(Duration.ofMillis(20)).onFailure(RedisSettings.OnFailure.CLOSED)
                .localAllowance(new RedisSettings.LocalAllowance(5, Duration.ofMillis(100))).build());
        assertThatThrownBy(() -> RedisSettings.of(spec.with("prefix", "{qg}")))
                .isInstanceOf(InvalidPlansException.class).hasMessageStartingWith("<code>: store.prefix: must match");
    }

    @Test
    void aRejectedRedisUriDoesNotEchoItsPassword() {
        Plans plans = PlansFile.parse("p.yml", "plans:\n  only: { limits: [ { capacity: 5, refill: 1, period: 1s } ] }\n"
                + "store: { type: redis, uri: \"http://user:hunter2@h:6379\" }\n");
        assertThatThrownBy(() -> RedisSettings.of(plans.store()))
                .isInstanceOf(InvalidPlansException.class).hasMessageNotContaining("hunter2");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badStores")
    void refusesABadStoreNamingFileLineAndField(String description, String yaml, int line, String field, String reason) {
        Plans plans = PlansFile.parse("bad.yml", yaml);
        // as a filter checks it at start and on reload: unknown keys first (a local store takes none), then the type's checks
        assertThatThrownBy(() -> BucketStore.check(plans.store()))
                .isInstanceOfSatisfying(InvalidPlansException.class, e -> {
                    assertThat(e.file()).isEqualTo("bad.yml");
                    if (line > 0) assertThat(e.line()).as("line").isEqualTo(line);
                    assertThat(e.field()).as("field").isEqualTo(field);
                    assertThat(e.getMessage()).startsWith("bad.yml:").contains(reason);
                    if (!field.isEmpty()) assertThat(e.getMessage()).contains(field);
                });
    }

    static Stream<Arguments> badStores() {
        String plan = "plans:\n  free:\n    limits:\n";
        return Stream.of(
                arguments("redis store without uri", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "store:\n  type: redis\n", 6, "store.uri", "required"),
                arguments("redis uri of another scheme", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "store:\n  type: redis\n  uri: http://user:secret@cache:6379\n", 7, "store.uri", "expected redis://"),
                arguments("redis cluster uri without ports", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "store:\n  type: redis\n  uri: redis-cluster://u:secret@a,b\n", 7, "store.uri",
                        "redis-cluster://host1:port1,host2:port2), was 'redis-cluster://***@a,b'"),
                arguments("redis key prefix with a hash tag", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "store: { type: redis, uri: \"redis://h:6379\", prefix: \"{qg}\" }\n", 5, "store.prefix", "must match"),
                arguments("redis timeout without unit", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "store:\n  type: redis\n  uri: redis://h:6379\n  timeout: 50\n", 8, "store.timeout", "needs a unit"),
                arguments("quota timeout shorter than the timeout", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "store:\n  type: redis\n  uri: redis://h:6379\n  timeout: 100ms\n  quota-timeout: 50ms\n", 9,
                        "store.quota-timeout", "must not be shorter than store.timeout (PT0.1S), was PT0.05S"),
                arguments("quota timeout above a minute", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "store:\n  type: redis\n  uri: redis://h:6379\n  quota-timeout: 2m\n", 8,
                        "store.quota-timeout", "must be at most 1m"),
                arguments("unknown failure mode", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "store:\n  type: redis\n  uri: redis://h:6379\n  on-failure: retry\n", 8, "store.on-failure",
                        "expected one of [open, closed]"),
                arguments("zero max-retries", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "store:\n  type: redis\n  uri: redis://h:6379\n  max-retries: 0\n", 8, "store.max-retries", "must be > 0"),
                arguments("instance ttl not above heartbeat", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "store:\n  type: redis\n  uri: redis://h:6379\n  heartbeat: 5s\n  instance-ttl: 5s\n", 9,
                        "store.instance-ttl", "must be longer than store.heartbeat"),
                arguments("redis key on a local store", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "store:\n  type: local\n  uri: redis://h:6379\n", 7, "store.uri", "only for a store of type: redis"),
                arguments("local allowance without max-delay", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "store:\n  type: redis\n  uri: redis://h:6379\n  local-allowance: { units: 10 }\n", 8,
                        "store.local-allowance.max-delay", "required"),
                arguments("local allowance of zero units", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "store:\n  type: redis\n  uri: redis://h:6379\n  local-allowance:\n    units: 0\n    max-delay: 100ms\n", 9,
                        "store.local-allowance.units", "must be > 0"),
                arguments("batching, removed", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "store:\n  type: redis\n  uri: redis://h:6379\n  batching: true\n", 8, "store.batching",
                        "removed: the store's script is faster"),
                arguments("batching: false, removed too", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "store:\n  type: redis\n  uri: redis://h:6379\n  batching: false\n", 8, "store.batching",
                        "delete the line"),
                arguments("batching with a local allowance, removed", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "store:\n  type: redis\n  uri: redis://h:6379\n  local-allowance: { units: 5, max-delay: 100ms }\n"
                        + "  batching: true\n", 9, "store.batching", "local-allowance keeps bucket4j's batching"),
                arguments("unknown store key", plan + "      - { capacity: 5, refill: 5, period: 1s }\n"
                        + "store:\n  type: redis\n  uri: redis://h:6379\n  pool: 8\n", 8, "store.pool", "unknown key")
        );
    }

    @Test
    void aFilterRefusesToStartWithABadStore() {
        var builder = QuotaFilter.builder().plans(PlansFile.parse("bad.yml", """
                plans: { free: { limits: [ { capacity: 10, refill: 10, period: 1s } ] } }
                store:
                  type: redis
                  uri: redis://h:6379
                  max-retries: 0
                """));
        assertThatThrownBy(builder::build).isInstanceOf(InvalidPlansException.class)
                .hasMessage("bad.yml:5: store.max-retries: must be > 0, was 0");
    }

    @Test
    void batchingIsRemovedAndAPlansFileThatSetsItFailsAtStartSayingWhyAndWhatToDo() {
        var builder = QuotaFilter.builder().plans(PlansFile.parse("bad.yml", """
                plans: { free: { limits: [ { capacity: 10, refill: 10, period: 1s } ] } }
                store:
                  type: redis
                  uri: redis://h:6379
                  batching: true
                """));
        assertThatThrownBy(builder::build).isInstanceOf(InvalidPlansException.class)
                .hasMessage("bad.yml:5: store.batching: removed: the store's script is faster on every measured row"
                        + " (BENCHMARKS.md); delete the line (local-allowance keeps bucket4j's batching)");
        assertThatThrownBy(() -> RedisSettings.of(StoreSpec.of("redis", Map.of("uri", "redis://h:6379", "batching", false))))
                .isInstanceOf(InvalidPlansException.class).hasMessageStartingWith("<code>: store.batching: removed: ");
        assertThat(RedisSettings.OPTIONS).doesNotContain("batching");
    }

    @Test
    void aReloadWithABadStoreIsRefusedAndThePlansInForceStay() throws Exception {
        String plans = "plans: { free: { limits: [ { capacity: 10, refill: 10, period: 1s } ] } }\n";
        Path f = Files.writeString(dir.resolve("plans.yml"), plans);
        QuotaFilter filter = QuotaFilter.builder().plansFile(f).build();
        try {
            Files.writeString(f, plans.replace("capacity: 10", "capacity: 20")
                    + "store: { type: redis, uri: \"redis://h:6379\", timeout: 50 }\n");
            assertThatThrownBy(() -> filter.control().reload()).isInstanceOf(InvalidPlansException.class)
                    .hasMessageStartingWith(f + ":2: store.timeout: ").hasMessageContaining("needs a unit");
            assertThat(filter.control().plans().plan("free").orElseThrow().limits().get(0).capacity()).isEqualTo(10);
        } finally {
            filter.destroy();
        }
    }

    @Test
    void contradictionsInCodeAreRefusedWhenBuilt() {
        assertThatThrownBy(() -> RedisSettings.from(RedisSettings.of("redis://h:6379")).uri(null).build())
                .hasMessage("a Redis store needs a uri");
        assertThatThrownBy(() -> RedisSettings.from(RedisSettings.of("redis://h:6379"))
                .heartbeat(Duration.ofSeconds(20)).build())
                .hasMessageContaining("must be longer than heartbeat");
        assertThatThrownBy(() -> RedisSettings.of("redis://h:6379").withPrefix("{qg}"))
                .hasMessageContaining("prefix must match");
    }
}

package io.quotagate.filter.redis;

import io.quotagate.filter.store.BucketKind;
import io.quotagate.filter.store.LimitsChannel;
import io.quotagate.filter.store.QuotaCounters;
import io.quotagate.filter.testing.ManualClock;
import io.quotagate.filter.testing.RedisServer;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every Lua script the store runs is the text of a resource beside {@link LuaScript}, never a Java
 * string; all are loaded when the store starts, and a server that forgot them (a restart, a failover,
 * {@code SCRIPT FLUSH}) gets each once more by {@code EVAL}, then {@code EVALSHA} again. Real Redis.
 */
class LuaScriptTest {
    private static final Path MAIN = Path.of("src/main");
    private static final Path SCRIPTS = MAIN.resolve("resources/io/quotagate/filter/redis");
    /** A call of Lettuce's eval, evalsha, evalReadOnly...: {@code .eval(} or {@code .<Long>eval(}. */
    private static final Pattern EVAL_CALL = Pattern.compile("[.>]\\s*eval\\w*\\s*\\(");

    private final ManualClock clock = new ManualClock();

    @Test
    void noJavaSourceOfTheStoreHoldsAScriptAndOnlyLuaScriptSendsOne() throws IOException {
        List<Path> sources;
        try (Stream<Path> files = Files.walk(MAIN.resolve("java"))) {
            sources = files.filter(p -> p.toString().endsWith(".java")).toList();
        }
        assertThat(sources).as("the sources, from the module's directory").hasSizeGreaterThan(10);
        for (Path source : sources) {
            String text = Files.readString(source);
            assertThat(text).as("%s: a script's text belongs in a .lua resource", source)
                    .doesNotContain("redis.call").doesNotContain("redis.pcall");
            if (!source.endsWith("LuaScript.java")) {
                assertThat(EVAL_CALL.matcher(text).find()).as("%s: scripts run through LuaScript.run", source).isFalse();
            }
        }
    }

    @Test
    void everyLuaResourceIsAScriptTheStoreRunsAndEveryScriptIsOne() throws IOException {
        List<String> resources;
        try (Stream<Path> files = Files.walk(MAIN)) {
            resources = files.filter(p -> p.toString().endsWith(".lua"))
                    .peek(p -> assertThat(p.getParent()).as("every script beside LuaScript").isEqualTo(SCRIPTS))
                    .map(p -> p.getFileName().toString()).toList();
        }
        assertThat(Arrays.stream(LuaScript.values()).map(LuaScript::resource)).containsExactlyInAnyOrderElementsOf(resources);
        for (LuaScript s : LuaScript.values()) {
            assertThat(s.text()).as(s.resource()).isEqualTo(Files.readString(SCRIPTS.resolve(s.resource())));
            assertThat(s.sha()).as(s.resource()).matches("[0-9a-f]{40}");
        }
        assertThat(Arrays.stream(LuaScript.values()).map(LuaScript::sha).distinct()).hasSize(LuaScript.values().length);
    }

    @Test
    @SuppressWarnings("unchecked")
    void everyScriptIsLoadedAtStartupAndAServerThatForgotThemGetsEachOnceMoreByEval() throws Exception {
        try (RedisServer own = RedisServer.startOwn()) {
            RedisSettings settings = RedisSettings.of(own.uri()).withPrefix(RedisServer.randomPrefix())
                    .withTimeout(Duration.ofMillis(500))
                    .withHeartbeat(Duration.ofMinutes(1), Duration.ofMinutes(2));
            String[] exists = Stream.concat(Stream.of("SCRIPT", "EXISTS"),
                    Arrays.stream(LuaScript.values()).map(LuaScript::sha)).toArray(String[]::new);
            try (RedisStore store = RedisStore.connect(settings, 100, clock.wallClock(), clock);
                 RedisConnection connection = new RedisConnection(settings, systemClock())) {
                assertThat((List<Object>) own.command(exists)).as("every script loaded at startup")
                        .hasSize(LuaScript.values().length).allMatch("1"::equals);
                LimitsChannel limits = store.limitsChannel().orElseThrow();
                QuotaCounters quotas = store.quotaCounters().orElseThrow();
                InstanceRegistry registry = new InstanceRegistry(connection, settings, systemClock());
                ValueRepair repair = new ValueRepair(connection);
                String counter = "daily:acme:2026-12-03";
                long now = clock.wallClock().millis();
                long expires = now + Duration.ofDays(1).toMillis();

                own.command("SCRIPT", "FLUSH"); // as after a restart or a failover: the server knows none of them
                own.command("CONFIG", "RESETSTAT");
                for (int round = 1; round <= 2; round++) {
                    assertThat(store.bucket(BucketKind.TENANT, "acme", RedisStoreTest.CONFIG).tryTake(1)).isTrue();
                    registry.beat(Duration.ofSeconds(2));
                    assertThat(registry.count()).as("the store, and this registry").isEqualTo(2);
                    assertThat(limits.version()).isEqualTo(round - 1);
                    assertThat(limits.replace(round - 1, round, "{}")).isTrue();
                    assertThat(quotas.tryAdd(counter, 2, 10, now, expires)).isEqualTo(3L * round - 1);
                    quotas.add(counter, 1, now, expires);
                    assertThat(quotas.used(counter)).isEqualTo(3L * round);
                    String damaged = settings.prefix() + ":tenant:damaged" + round;
                    own.command("HSET", damaged, "field", "value");
                    assertThat(repair.repair(damaged, new IllegalStateException("unreadable"))).isTrue();
                    assertThat(own.command("EXISTS", damaged)).isEqualTo("0");

                    assertThat(own.calls("eval")).as("round %d: one EVAL per script, the first time only", round)
                            .isEqualTo(LuaScript.values().length);
                    assertThat((List<Object>) own.command(exists)).as("round %d", round).allMatch("1"::equals);
                }
                assertThat(store.outages()).isZero();
                assertThat(store.fallbackDecisions()).isZero();
            }
        }
    }

    private static RedisClock systemClock() {
        return new RedisClock(Clock.systemUTC(), io.quotagate.filter.store.QuotaClock.system());
    }
}

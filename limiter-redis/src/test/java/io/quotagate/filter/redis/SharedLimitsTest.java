package io.quotagate.filter.redis;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quotagate.filter.QuotaControl;
import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.metrics.QuotaMeterBinder;
import io.quotagate.filter.status.LimitsStatus;
import io.quotagate.filter.testing.Await;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.filter.testing.LogCapture;
import io.quotagate.filter.testing.RedisServer;
import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import io.quotagate.tenant.TenantContract;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Several instances sharing one Redis govern one set of limits: a runtime change made through any
 * instance is enforced and reported by every instance, a restarted instance adopts it, a lost
 * announcement or a lost record heals, an unusable record is refused, and two plans files (a rolling
 * deploy) do not reconfigure the shared buckets back and forth. Real Redis, real Jetty.
 */
class SharedLimitsTest {
    static final Plans PLANS = PlansFile.parse("shared-limits.yml", """
            global:
              limits: [ { capacity: 3000, refill: 3000, period: 1m } ]
            plans:
              free:
                limits: [ { name: burst, capacity: 20, refill: 1, period: 10s } ]
              pro:
                limits: [ { name: burst, capacity: 200, refill: 10, period: 10s } ]
                publish: true
            tenants:
              default-plan: free
              assignments: { acme: pro }
            """);
    /** The same file on a later deploy: free's burst doubled. */
    static final Plans PLANS_V2 = PlansFile.parse("shared-limits-v2.yml", """
            global:
              limits: [ { capacity: 3000, refill: 3000, period: 1m } ]
            plans:
              free:
                limits: [ { name: burst, capacity: 40, refill: 1, period: 10s } ]
              pro:
                limits: [ { name: burst, capacity: 200, refill: 10, period: 10s } ]
            tenants:
              default-plan: free
              assignments: { acme: pro }
            """);
    /**
     * Lua: {@code x}, 19 MiB of 'x' (20 MB, and one string under Jackson's 20,000,000 characters, so a
     * reader that read it would parse it), by doubling a MiB first: string.rep adds a byte at a time.
     */
    private static final String TWENTY_MB = "local x = 'x' for i = 1, 20 do x = x .. x end x = string.rep(x, 19) ";
    private static final List<Bandwidth> TEN_PER_MINUTE = List.of(new Bandwidth("api", 10, 10, Duration.ofMinutes(1)));

    private static RedisSettings settings(String uri, String prefix) {
        return RedisSettings.of(uri).withPrefix(prefix).withTimeout(Duration.ofMillis(500));
    }

    /** One instance: a Redis store, its filter on Jetty, its meters. */
    record Instance(RedisStore store, QuotaFilter filter, JettyServer server, SimpleMeterRegistry meters)
            implements AutoCloseable {
        static Instance start(Plans plans, RedisSettings settings) throws Exception {
            RedisStore store = RedisStore.connect(settings, 1_000);
            QuotaFilter filter = QuotaFilter.builder().plans(plans).store(store).build();
            JettyServer server = JettyServer.start(filter);
            SimpleMeterRegistry meters = new SimpleMeterRegistry();
            new QuotaMeterBinder(filter.control()).bindTo(meters);
            return new Instance(store, filter, server, meters);
        }

        QuotaControl control() {
            return filter.control();
        }

        double gauge(String name) {
            return meters.get(name).gauge().value();
        }

        int get(String tenant) throws Exception {
            return Http.get(server.uri("/items/1"), tenant).statusCode();
        }

        @Override
        public void close() throws Exception {
            server.close();
            store.close();
        }
    }

    @Test
    void aGlobalQuotaChangedOnOneInstanceIsEnforcedAndReportedByEvery() throws Exception {
        RedisSettings s = settings(RedisServer.shared().uri(), RedisServer.randomPrefix());
        try (Instance a = Instance.start(PLANS, s); Instance b = Instance.start(PLANS, s)) {
            assertThat(b.gauge(QuotaMeterBinder.GLOBAL_CAPACITY)).isEqualTo(3000.0);
            long changed = System.nanoTime();
            a.control().setGlobalQuota(TEN_PER_MINUTE);
            // A reports it at once; B within the 2 s docs/changing-limits.md promises (an announcement, else the version check)
            assertThat(a.gauge(QuotaMeterBinder.GLOBAL_CAPACITY)).isEqualTo(10.0);
            Await.within(2, "B reports the new global quota", () -> b.gauge(QuotaMeterBinder.GLOBAL_CAPACITY) == 10.0);
            double seconds = (System.nanoTime() - changed) / 1e9;
            assertThat(seconds).as("seen by B after %.3f s", seconds).isLessThan(2.0);
            for (Instance i : List.of(a, b)) {
                assertThat(i.control().plans().global().orElseThrow().limits()).isEqualTo(TEN_PER_MINUTE);
                assertThat(i.control().overrides().global()).contains(TEN_PER_MINUTE);
                assertThat(i.gauge(QuotaMeterBinder.LIMITS_VERSION)).as("published at start, then changed").isEqualTo(2.0);
            }
            // enforced: 15 requests spread over both instances and several tenants, 10 admitted in all
            List<Integer> statuses = new ArrayList<>();
            for (int i = 0; i < 15; i++) statuses.add((i % 2 == 0 ? a : b).get("t" + i));
            assertThat(statuses.stream().filter(c -> c == 200).count()).as("%s", statuses).isEqualTo(10);
            assertThat(statuses).containsOnly(200, 429);

            // a third instance started later with the same file adopts the change at start
            try (Instance c = Instance.start(PLANS, s)) {
                assertThat(c.gauge(QuotaMeterBinder.GLOBAL_CAPACITY)).isEqualTo(10.0);
                assertThat(c.control().limitsStatus().fileAgrees()).isTrue();
                assertThat(c.get("t99")).as("the shared global bucket is drained").isEqualTo(429);
            }
            // cleared on B: the file's quota again, everywhere
            b.control().clearOverrides();
            Await.within(2, "A reports the file's quota again", () -> a.gauge(QuotaMeterBinder.GLOBAL_CAPACITY) == 3000.0);
            assertThat(a.control().overrides().isEmpty()).isTrue();
        }
    }

    @Test
    void planLimitsAndTenantContractsSetOnOneInstanceApplyOnEvery() throws Exception {
        RedisSettings s = settings(RedisServer.shared().uri(), RedisServer.randomPrefix());
        try (Instance a = Instance.start(PLANS, s); Instance b = Instance.start(PLANS, s)) {
            a.control().setPlanLimits("free", List.of(new Bandwidth("burst", 5, 1, Duration.ofSeconds(10))));
            List<Bandwidth> own = List.of(new Bandwidth("burst", 3, 1, Duration.ofMinutes(1)));
            a.control().setTenant("globex", new TenantContract("pro", own));
            Await.within(2, "B has both changes", () -> b.control().tenant("globex").isPresent()
                    && b.control().plans().plan("free").orElseThrow().limits().get(0).capacity() == 5);
            assertThat(b.control().tenant("globex")).contains(new TenantContract("pro", own));
            assertThat(b.control().tenantLimits("globex")).singleElement()
                    .satisfies(l -> assertThat(l.capacity()).isEqualTo(3));
            // B publishes the limit in force (pro publishes its limits): globex's own 3 units
            var published = Http.get(b.server().uri("/items/1"), "globex");
            assertThat(published.headers().firstValue("RateLimit-Policy")).hasValueSatisfying(
                    p -> assertThat(p).contains("q=3"));
            // globex: 2 more units over both instances, its own contract
            List<Integer> globex = new ArrayList<>();
            for (int i = 0; i < 4; i++) globex.add((i % 2 == 0 ? b : a).get("globex"));
            assertThat(globex).containsExactly(200, 200, 429, 429);
            // a guest on free: 5 over both
            long admitted = 0;
            for (int i = 0; i < 8; i++) if ((i % 2 == 0 ? b : a).get("newcomer") == 200) admitted++;
            assertThat(admitted).isEqualTo(5);

            // invalid changes change nothing anywhere
            assertThatThrownBy(() -> b.control().setTenant("x", TenantContract.onPlan("platinum")))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("platinum");
            assertThatThrownBy(() -> b.control().setPlanLimits("platinum", own))
                    .isInstanceOf(IllegalArgumentException.class);
            long version = (long) a.gauge(QuotaMeterBinder.LIMITS_VERSION);
            assertThat(b.gauge(QuotaMeterBinder.LIMITS_VERSION)).isEqualTo(version);

            assertThat(b.control().clearTenant("globex")).isTrue();
            Await.within(2, "A forgets globex", () -> a.control().tenant("globex").isEmpty());
            assertThat(a.control().clearTenant("globex")).isFalse();
        }
    }

    @Test
    void concurrentChangesThroughTwoInstancesAreAllKept() throws Exception {
        RedisSettings s = settings(RedisServer.shared().uri(), RedisServer.randomPrefix());
        try (Instance a = Instance.start(PLANS, s); Instance b = Instance.start(PLANS, s)) {
            int perInstance = 20;
            var pool = java.util.concurrent.Executors.newFixedThreadPool(4);
            try {
                List<java.util.concurrent.Future<?>> writes = new ArrayList<>();
                for (int i = 0; i < perInstance; i++) {
                    for (Instance x : List.of(a, b)) {
                        String tenant = (x == a ? "a" : "b") + i;
                        writes.add(pool.submit(() -> x.control().setTenant(tenant, TenantContract.onPlan("pro"))));
                    }
                }
                for (var w : writes) w.get(30, java.util.concurrent.TimeUnit.SECONDS);
            } finally {
                pool.shutdownNow();
            }
            // every write read the latest version before writing it: none lost, on either instance
            Await.within(2, "both hold all 40", () -> a.control().overrides().tenants().size() == 2 * perInstance
                    && b.control().overrides().tenants().size() == 2 * perInstance);
            assertThat(a.control().limitsStatus().version()).isEqualTo(1 + 2L * perInstance);
        }
    }

    @Test
    void aLostAnnouncementHealsWithinTwoSecondsByTheVersionCheck() throws Exception {
        RedisServer redis = RedisServer.shared();
        String prefix = RedisServer.randomPrefix();
        RedisSettings s = settings(redis.uri(), prefix);
        try (Instance a = Instance.start(PLANS, s); Instance b = Instance.start(PLANS, s)) {
            a.control().setGlobalQuota(TEN_PER_MINUTE);
            String tenPerMinute = (String) field(redis, prefix + ":limits", "body");
            a.control().setGlobalQuota(List.of(new Bandwidth("api", 20, 20, Duration.ofMinutes(1))));
            Await.within(2, "both at 20", () -> a.gauge(QuotaMeterBinder.GLOBAL_CAPACITY) == 20.0
                    && b.gauge(QuotaMeterBinder.GLOBAL_CAPACITY) == 20.0);
            // a write that announces nothing (as if the announcement were lost)
            long version = writeUnannounced(redis, prefix, tenPerMinute);
            // the limits are installed a moment before the status names their version: wait for both
            Await.within(2, "both adopt version " + version + " by the version check",
                    () -> a.gauge(QuotaMeterBinder.GLOBAL_CAPACITY) == 10.0 && b.gauge(QuotaMeterBinder.GLOBAL_CAPACITY) == 10.0
                            && a.control().limitsStatus().version() == version
                            && b.control().limitsStatus().version() == version);
        }
    }

    @Test
    void anUnusableRecordIsRefusedAndTheLastGoodLimitsStay() throws Exception {
        RedisServer redis = RedisServer.shared();
        String prefix = RedisServer.randomPrefix();
        RedisSettings s = settings(redis.uri(), prefix);
        try (Instance a = Instance.start(PLANS, s); Instance b = Instance.start(PLANS, s)) {
            a.control().setGlobalQuota(TEN_PER_MINUTE);
            Await.within(2, "B at 10", () -> b.gauge(QuotaMeterBinder.GLOBAL_CAPACITY) == 10.0);
            String good = (String) field(redis, prefix + ":limits", "body");
            for (String garbage : List.of("garbage", "{\"format\": 5}",
                    good.replace("\"tenants\":{}}", "\"tenants\":{\"x\":{\"plan\":\"platinum\"}}}"), // a plan no file defines
                    good.replace("\"capacity\":10", "\"capacity\":-1"))) {
                long refusedBefore = b.control().limitsStatus().refused();
                writeUnannounced(redis, prefix, garbage);
                Await.within(3, "B refuses " + garbage, () -> b.control().limitsStatus().refused() == refusedBefore + 1);
                for (Instance i : List.of(a, b)) {
                    assertThat(i.gauge(QuotaMeterBinder.GLOBAL_CAPACITY)).as("last good limits kept").isEqualTo(10.0);
                    assertThat(i.get("guest-" + garbage.length())).isIn(200, 429);
                }
            }
            LimitsStatus status = b.control().limitsStatus();
            assertThat(status.lastRefusal()).hasValueSatisfying(r -> assertThat(r).contains("capacity"));
            assertThat(b.meters.get(QuotaMeterBinder.LIMITS_REFUSED).functionCounter().count()).isEqualTo(4.0);
            // a runtime change on an unusable record changes nothing; publishing the file replaces it
            assertThatThrownBy(() -> a.control().setGlobalQuota(TEN_PER_MINUTE))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("nothing changed");
            a.control().apply(PLANS);
            Await.within(2, "both on the file's quota", () -> a.gauge(QuotaMeterBinder.GLOBAL_CAPACITY) == 3000.0
                    && b.gauge(QuotaMeterBinder.GLOBAL_CAPACITY) == 3000.0);
            // a newer format is never overwritten, not even by an explicit publish
            writeUnannounced(redis, prefix, "{\"format\": 5, \"x\": 1}");
            assertThatThrownBy(() -> a.control().apply(PLANS)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("newer");
        }
    }

    /**
     * A version that is not a whole number from 1 to 2^53 - 1 in plain digits (Long.MAX_VALUE, which Lua's
     * doubles cannot count on from; a negative one; a fraction; text): the record is refused as damaged on
     * every instance, even with a good body, and a change on it applies nowhere and says so. Deleting the
     * record repairs it: the limits in force are written back, at a version above theirs.
     */
    @Test
    void aRecordWhoseVersionIsNoUsableNumberIsRefusedAndAChangeOnItAppliesNowhere() throws Exception {
        RedisServer redis = RedisServer.shared();
        String prefix = RedisServer.randomPrefix();
        String key = prefix + ":limits";
        RedisSettings s = settings(redis.uri(), prefix);
        try (Instance a = Instance.start(PLANS, s); Instance b = Instance.start(PLANS, s);
             LogCapture warnings = LogCapture.of(io.quotagate.filter.internal.limits.SharedLimits.class,
                     java.util.logging.Level.WARNING)) {
            a.control().setGlobalQuota(TEN_PER_MINUTE);
            Await.within(2, "B on A's version", () -> b.control().limitsStatus().version() == a.control().limitsStatus().version());
            // a good body with another quota: whoever adopted it would report 20
            String twenty = ((String) field(redis, key, "body")).replace("\"capacity\":10,\"refill\":10",
                    "\"capacity\":20,\"refill\":20");
            for (String version : List.of("9223372036854775807", "-5", "3.5", "abc")) {
                long inForce = a.control().limitsStatus().version();
                long[] refusedBefore = {a.control().limitsStatus().refused(), b.control().limitsStatus().refused()};
                int warned = warnings.messages().size();
                redis.command("EVAL", "redis.call('HSET', KEYS[1], 'version', ARGV[1], 'body', ARGV[2])", "1", key,
                        version, twenty);
                Await.within(3, "both refuse version " + version, () ->
                        a.control().limitsStatus().refused() == refusedBefore[0] + 1
                                && b.control().limitsStatus().refused() == refusedBefore[1] + 1);
                for (Instance i : List.of(a, b)) {
                    assertThat(i.gauge(QuotaMeterBinder.GLOBAL_CAPACITY)).as("last good limits kept").isEqualTo(10.0);
                    assertThat(i.control().limitsStatus().version()).isEqualTo(inForce);
                    assertThat(i.control().limitsStatus().lastRefusal()).hasValueSatisfying(r -> assertThat(r)
                            .contains("version").contains(version).contains("9007199254740991"));
                }
                assertThat(warnings.messages().subList(warned, warnings.messages().size()))
                        .as("logged once per instance").hasSize(2).allSatisfy(m -> assertThat(m).contains(version));

                assertThatThrownBy(() -> a.control().setGlobalQuota(List.of(new Bandwidth("api", 5, 5,
                        Duration.ofMinutes(1))))).isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("damaged").hasMessageContaining("nothing changed")
                        .hasMessageContaining(key);
                assertThat(field(redis, key, "version")).as("the stored record untouched").isEqualTo(version);
                Thread.sleep(300); // an announcement would have come by now
                for (Instance i : List.of(a, b)) {
                    assertThat(i.gauge(QuotaMeterBinder.GLOBAL_CAPACITY)).as("nowhere").isEqualTo(10.0);
                    assertThat(i.control().limitsStatus().refused()).as("one refusal for one damage")
                            .isEqualTo(i == a ? refusedBefore[0] + 1 : refusedBefore[1] + 1);
                }

                // deleting it repairs it: the limits in force are written back, above the version they had
                redis.command("DEL", key);
                Await.within(3, "written back and in force on both", () ->
                        a.control().limitsStatus().version() > inForce
                                && b.control().limitsStatus().version() == a.control().limitsStatus().version());
                assertThat(Long.parseLong((String) field(redis, key, "version"))).isEqualTo(inForce + 1);
                for (Instance i : List.of(a, b)) assertThat(i.gauge(QuotaMeterBinder.GLOBAL_CAPACITY)).isEqualTo(10.0);
            }
            // and changes work again, everywhere
            a.control().setGlobalQuota(List.of(new Bandwidth("api", 7, 7, Duration.ofMinutes(1))));
            Await.within(2, "B at 7", () -> b.gauge(QuotaMeterBinder.GLOBAL_CAPACITY) == 7.0);
        }
    }

    /**
     * A record this instance's file cannot take (a plan it does not define, published by another file):
     * a change made here is refused as the store's problem, not the change's (an IllegalArgumentException
     * is the admin surfaces' 400), and writes nothing.
     */
    @Test
    void aChangeOnARecordThisFileCannotTakeIsNoClientErrorAndWritesNothing() throws Exception {
        RedisServer redis = RedisServer.shared();
        String prefix = RedisServer.randomPrefix();
        String key = prefix + ":limits";
        try (Instance a = Instance.start(PLANS, settings(redis.uri(), prefix))) {
            String good = (String) field(redis, key, "body");
            writeUnannounced(redis, prefix, good.replace("\"tenants\":{}}", "\"tenants\":{\"x\":{\"plan\":\"platinum\"}}}"));
            String version = (String) field(redis, key, "version");
            assertThatThrownBy(() -> a.control().setGlobalQuota(TEN_PER_MINUTE)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("platinum").hasMessageContaining("nothing changed");
            assertThat(field(redis, key, "version")).isEqualTo(version);
            assertThat(a.gauge(QuotaMeterBinder.GLOBAL_CAPACITY)).isEqualTo(3000.0);
        }
    }

    /**
     * Publishing the file again (reload, apply) replaces a record with a damaged version, at a version
     * above the one in force, and every instance adopts it.
     */
    @Test
    void publishingTheFileReplacesARecordWithADamagedVersion() throws Exception {
        RedisServer redis = RedisServer.shared();
        String prefix = RedisServer.randomPrefix();
        String key = prefix + ":limits";
        RedisSettings s = settings(redis.uri(), prefix);
        try (Instance a = Instance.start(PLANS, s); Instance b = Instance.start(PLANS, s)) {
            a.control().setGlobalQuota(TEN_PER_MINUTE);
            long inForce = a.control().limitsStatus().version();
            Await.within(2, "B on A's version", () -> b.control().limitsStatus().version() == inForce);
            redis.command("HSET", key, "version", "-5");
            Await.within(3, "both refuse it", () -> a.control().limitsStatus().refused() == 1
                    && b.control().limitsStatus().refused() == 1);
            a.control().apply(PLANS);
            assertThat(field(redis, key, "version")).isEqualTo(Long.toString(inForce + 1));
            Await.within(2, "both on the file's quota", () -> a.gauge(QuotaMeterBinder.GLOBAL_CAPACITY) == 3000.0
                    && b.gauge(QuotaMeterBinder.GLOBAL_CAPACITY) == 3000.0);
        }
    }

    /**
     * A stored record with a field no format has, small or of 20 MB, is refused like any damaged record:
     * counted, the last good limits kept, and a change on it is not the client's fault (no
     * IllegalArgumentException, the admin surfaces' 400). A record over the size limit is never read: its
     * body never leaves Redis, not at the version checks, not for a change. On a Redis of its own, so the
     * bytes Redis sent are this test's.
     */
    @Test
    void aRecordWithAnUnknownFieldOrOverTheSizeLimitIsRefusedWithoutBeingRead() throws Exception {
        try (RedisServer own = RedisServer.startOwn()) {
            String prefix = RedisServer.randomPrefix();
            String key = prefix + ":limits";
            RedisSettings s = settings(own.uri(), prefix);
            try (Instance a = Instance.start(PLANS, s); Instance b = Instance.start(PLANS, s)) {
                a.control().setGlobalQuota(TEN_PER_MINUTE);
                Await.within(2, "B on A's version", () -> b.control().limitsStatus().version() == a.control().limitsStatus().version());
                String good = (String) field(own, key, "body");
                assertThat(good).startsWith("{\"format\":1,");
                String small = good.replace("{\"format\":1,", "{\"format\":1,\"pad\":\"x\",");
                String large = "20 MB"; // made by Redis: 20 MB in this JVM would slow the instances
                for (String bad : List.of(small, large)) {
                    String what = bad == small ? "an unknown field" : "20 MB";
                    long inForce = a.control().limitsStatus().version();
                    long[] refusedBefore = {a.control().limitsStatus().refused(), b.control().limitsStatus().refused()};
                    long sentBefore = sentBytes(own);
                    if (bad == small) {
                        writeUnannounced(own, prefix, small);
                    } else { // the small one with a field of 20 MB more
                        own.command("EVAL", TWENTY_MB + "redis.call('HINCRBY', KEYS[1], 'version', 1) redis.call('HSET', "
                                + "KEYS[1], 'body', string.sub(ARGV[1], 1, 19) .. x .. string.sub(ARGV[1], 20))", "1", key, small);
                        assertThat(own.integer("HSTRLEN", key, "body")).isGreaterThan(19 << 20);
                    }
                    Await.within(5, "both refuse " + what, () ->
                            a.control().limitsStatus().refused() == refusedBefore[0] + 1
                                    && b.control().limitsStatus().refused() == refusedBefore[1] + 1);
                    for (Instance i : List.of(a, b)) {
                        assertThat(i.gauge(QuotaMeterBinder.GLOBAL_CAPACITY)).as("last good limits kept").isEqualTo(10.0);
                        assertThat(i.control().limitsStatus().reachable()).isTrue();
                        assertThat(i.control().limitsStatus().lastRefusal()).hasValueSatisfying(r -> assertThat(r)
                                .contains(bad == small ? "pad: unknown field" : "8388608"));
                    }
                    assertThatThrownBy(() -> a.control().setGlobalQuota(List.of(new Bandwidth("api", 5, 5,
                            Duration.ofMinutes(1))))).as(what).isInstanceOf(IllegalStateException.class)
                            .hasMessageContaining("nothing changed");
                    assertThatThrownBy(() -> b.control().setTenant("x", TenantContract.onPlan("pro"))).as(what)
                            .isInstanceOf(IllegalStateException.class);
                    Thread.sleep(1_500); // a version check or more on each instance
                    if (bad == large) {
                        assertThat(sentBytes(own) - sentBefore).as("bytes Redis sent since the record was written")
                                .isLessThan(1 << 20);
                    }
                    for (Instance i : List.of(a, b)) {
                        assertThat(i.gauge(QuotaMeterBinder.GLOBAL_CAPACITY)).isEqualTo(10.0);
                        assertThat(i.control().limitsStatus().reachable()).isTrue();
                    }
                    own.command("DEL", key);
                    Await.within(3, "written back", () -> a.control().limitsStatus().version() > inForce
                            && b.control().limitsStatus().version() == a.control().limitsStatus().version());
                }
            }
        }
    }

    /** {@code total_net_output_bytes} of {@code INFO stats}: what the server has sent to all its clients. */
    private static long sentBytes(RedisServer redis) throws Exception {
        return redis.info("stats", "total_net_output_bytes");
    }

    @Test
    void twoPlansFilesDoNotReconfigureTheSharedBucketsBackAndForth() throws Exception {
        RedisSettings s = settings(RedisServer.shared().uri(), RedisServer.randomPrefix());
        try (Instance old = Instance.start(PLANS, s)) {
            assertThat(old.get("t1")).isEqualTo(200);
            try (Instance next = Instance.start(PLANS_V2, s)) {
                // the file published last wins, on both
                Await.within(2, "the old instance enforces the new file", () ->
                        old.control().plans().plan("free").orElseThrow().limits().get(0).capacity() == 40
                                && old.control().limitsStatus().version() == 2);
                assertThat(next.control().limitsStatus().fileAgrees()).isTrue();
                assertThat(old.control().limitsStatus().fileAgrees()).isFalse();
                assertThat(old.gauge(QuotaMeterBinder.LIMITS_FILE_AGREES)).isEqualTo(0.0);
                assertThat(old.control().limitsStatus().source()).isEqualTo("shared-limits-v2.yml");
                // two windows of 3 s of traffic over both (three version checks each)
                long before = old.store().reconfigurations() + next.store().reconfigurations();
                int admitted = traffic(old, next, "t1");
                long first = old.store().reconfigurations() + next.store().reconfigurations() - before;
                admitted += traffic(old, next, "t1");
                long second = old.store().reconfigurations() + next.store().reconfigurations() - before - first;
                assertThat(first).as("each instance moves t1's bucket and the global one once").isLessThanOrEqualTo(4);
                assertThat(second).as("and never again").isZero();
                // t1 used 1 of 20 on the old file; its 19 tokens are kept under the new capacity (no instant
                // burst on a raise), plus refill at 1 per 10 s over about 6 s
                assertThat(admitted).isBetween(19, 21);
                for (Instance i : List.of(old, next)) {
                    assertThat(i.control().tenantLimits("t1").get(0).capacity()).isEqualTo(40);
                }
            }
        }
    }

    @Test
    void aRecordLostWithRedisDataIsWrittenBackAndChangesWaitForRedis() throws Exception {
        try (RedisServer own = RedisServer.startOwn()) {
            RedisSettings s = settings(own.uri(), RedisServer.randomPrefix()).withHeartbeat(Duration.ofMillis(200),
                    Duration.ofSeconds(10));
            try (Instance a = Instance.start(PLANS, s); Instance b = Instance.start(PLANS, s)) {
                a.control().setGlobalQuota(TEN_PER_MINUTE);
                Await.within(2, "B at 10", () -> b.gauge(QuotaMeterBinder.GLOBAL_CAPACITY) == 10.0);
                own.command("FLUSHALL");
                Await.within(3, "the record is written back", () -> {
                    try {
                        return own.integer("EXISTS", s.prefix() + ":limits") == 1;
                    } catch (Exception e) {
                        return false;
                    }
                });
                for (Instance i : List.of(a, b)) {
                    assertThat(i.gauge(QuotaMeterBinder.GLOBAL_CAPACITY)).as("nobody's forgotten limit comes back")
                            .isEqualTo(10.0);
                }
                Await.within(2, "both on the written-back version", () ->
                        a.control().limitsStatus().version() == b.control().limitsStatus().version());

                own.kill();
                assertThatThrownBy(() -> a.control().setGlobalQuota(List.of(new Bandwidth("api", 50, 50,
                        Duration.ofMinutes(1))))).isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("nothing changed");
                Await.within(6, "B notices", () -> !b.control().limitsStatus().reachable());
                assertThat(b.gauge(QuotaMeterBinder.LIMITS_REACHABLE)).isEqualTo(0.0);
                assertThat(b.get("t1")).as("still serving").isIn(200, 429);
                assertThat(b.gauge(QuotaMeterBinder.GLOBAL_CAPACITY)).isEqualTo(10.0);

                own.start(); // empty: no persistence
                Await.within(5, "reachable again", () -> a.control().limitsStatus().reachable()
                        && b.control().limitsStatus().reachable());
                a.control().setGlobalQuota(List.of(new Bandwidth("api", 50, 50, Duration.ofMinutes(1))));
                Await.within(2, "B picks up the change made after the outage",
                        () -> b.gauge(QuotaMeterBinder.GLOBAL_CAPACITY) == 50.0);
            }
        }
    }

    @Test
    void invalidateDropsATenantsCachedDirectoryAnswerOnEveryInstance() throws Exception {
        RedisSettings s = settings(RedisServer.shared().uri(), RedisServer.randomPrefix());
        Map<String, String> billing = new java.util.concurrent.ConcurrentHashMap<>(Map.of("initech", "free"));
        try (RedisStore storeA = RedisStore.connect(s, 1_000); RedisStore storeB = RedisStore.connect(s, 1_000)) {
            QuotaFilter a = QuotaFilter.builder().plans(PLANS).store(storeA)
                    .tenantDirectory(t -> Optional.ofNullable(billing.get(t))).build();
            QuotaFilter b = QuotaFilter.builder().plans(PLANS).store(storeB)
                    .tenantDirectory(t -> Optional.ofNullable(billing.get(t))).build();
            try (JettyServer ja = JettyServer.start(a); JettyServer jb = JettyServer.start(b)) {
                assertThat(b.control().tenant("initech")).contains(TenantContract.onPlan("free"));
                billing.put("initech", "pro");
                assertThat(b.control().tenant("initech")).as("cached").contains(TenantContract.onPlan("free"));
                a.control().invalidate("initech");
                Await.within(2, "B asks the directory again", () ->
                        b.control().tenant("initech").equals(Optional.of(TenantContract.onPlan("pro"))));
            }
        }
    }

    /** 3 s of requests for one tenant alternating over two instances; the number admitted. */
    private static int traffic(Instance x, Instance y, String tenant) throws Exception {
        long deadline = System.nanoTime() + 3_000_000_000L;
        int admitted = 0;
        for (int requests = 0; System.nanoTime() < deadline && requests < 600; requests++) {
            if ((requests % 2 == 0 ? x : y).get(tenant) == 200) admitted++;
        }
        return admitted;
    }

    /**
     * Writes a new version and body in one step, as the instances' own write does, and announces nothing
     * (as if the announcement were lost). Two separate commands would let a version check read the new
     * version with the old body between them.
     */
    private static long writeUnannounced(RedisServer redis, String prefix, String body) throws Exception {
        return redis.integer("EVAL", "local v = redis.call('HINCRBY', KEYS[1], 'version', 1) "
                + "redis.call('HSET', KEYS[1], 'body', ARGV[1]) return v", "1", prefix + ":limits", body);
    }

    private static Object field(RedisServer redis, String key, String field) throws Exception {
        return redis.command("HGET", key, field);
    }
}

package io.quotagate.loadtest.bench;

import io.quotagate.filter.testing.RedisServer;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.HashSet;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class BenchServerTest {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    @Test
    void eachRedisModeCountsItsOwnStoreClientThreadsAndNoneOfAnotherServersOrOfTheBenchsClient() throws Exception {
        try (RedisServer redis = RedisServer.startOwn()) {
            Set<String> before = names(allThreads());
            // as the bench does: its own Redis client first, then one server per mode, one after another
            try (RedisCommandStats stats = new RedisCommandStats(redis.uri())) {
                stats.calls();
                Set<String> benchClient = names(allThreads());
                benchClient.removeAll(before);
                assertThat(benchClient).as("the bench's own Redis client").anyMatch(n -> n.startsWith("lettuce-"));

                try (BenchServer local = BenchServer.start(Mode.QUOTAGATE_1000_TENANTS);
                     BenchServer one = BenchServer.start(Mode.REDIS_1000_TENANTS, redis.uri());
                     BenchServer other = BenchServer.start(Mode.REDIS_1_TENANT, redis.uri())) {
                    Set<String> oneThreads = names(one.cpuByThread().keySet());
                    Set<String> otherThreads = names(other.cpuByThread().keySet());

                    // Lettuce's event loop encodes the calls, decodes the replies and wakes the request threads;
                    // each server's filter has its own client and heartbeat
                    for (Set<String> threads : java.util.List.of(oneThreads, otherThreads)) {
                        assertThat(threads).anyMatch(n -> n.startsWith("lettuce-nioEventLoop-"));
                        assertThat(threads).anyMatch(n -> n.startsWith("quotagate-redis-heartbeat#"));
                    }
                    assertThat(oneThreads).anyMatch(n -> n.startsWith("bench-server-redis-1000-tenants-"))
                            .noneMatch(n -> n.startsWith("bench-server-redis-1-tenant-"));
                    Set<String> shared = new HashSet<>(oneThreads);
                    shared.retainAll(otherThreads);
                    assertThat(shared).as("threads counted by both servers").isEmpty();
                    assertThat(oneThreads).doesNotContainAnyElementsOf(benchClient);
                    assertThat(otherThreads).doesNotContainAnyElementsOf(benchClient);
                    assertThat(names(local.cpuByThread().keySet())).noneMatch(n -> n.startsWith("lettuce-"))
                            .anyMatch(n -> n.startsWith("bench-server-quotagate-1000-tenants-"));
                }
            }
        }
    }

    @Test
    void aLettuceThreadsPoolIsItsNameWithoutItsThreadNumber() {
        assertThat(BenchServer.lettucePool("lettuce-nioEventLoop-7-1")).isEqualTo("lettuce-nioEventLoop-7-");
        assertThat(BenchServer.lettucePool("lettuce-eventExecutorLoop-12-30")).isEqualTo("lettuce-eventExecutorLoop-12-");
        assertThat(BenchServer.lettucePool("lettuce-timer")).isNull();
        assertThat(BenchServer.lettucePool("lettuce-nioEventLoop-x-1")).isNull();
        assertThat(BenchServer.lettucePool("quotagate-redis-heartbeat")).isNull();
    }

    private static Set<Long> allThreads() {
        Set<Long> ids = new HashSet<>();
        for (long id : THREADS.getAllThreadIds()) ids.add(id);
        return ids;
    }

    /** Each thread as {@code name#id}: two heartbeats share a name, not an id. */
    private static Set<String> names(Set<Long> ids) {
        Set<String> names = new HashSet<>();
        for (long id : ids) {
            ThreadInfo info = THREADS.getThreadInfo(id);
            if (info != null) names.add(info.getThreadName() + "#" + id);
        }
        return names;
    }
}

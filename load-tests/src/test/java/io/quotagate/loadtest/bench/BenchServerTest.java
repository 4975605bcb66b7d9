package io.quotagate.loadtest.bench;

import io.quotagate.filter.testing.RedisServer;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class BenchServerTest {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    @Test
    void aRedisModeCountsItsStoreClientThreadsAsTheServersAndALocalModeCountsOnlyItsOwn() throws Exception {
        try (RedisServer redis = RedisServer.startOwn();
             BenchServer local = BenchServer.start(Mode.QUOTAGATE_1000_TENANTS);
             BenchServer remote = BenchServer.start(Mode.REDIS_1000_TENANTS, redis.uri())) {
            List<String> remoteThreads = names(remote.cpuByThread().keySet());
            List<String> localThreads = names(local.cpuByThread().keySet());

            // Lettuce's event loop encodes the calls, decodes the replies and wakes the request threads
            assertThat(remoteThreads).anyMatch(n -> n.startsWith("lettuce-nioEventLoop"));
            assertThat(remoteThreads).anyMatch(n -> n.startsWith("bench-server-redis-1000-tenants-"));
            assertThat(localThreads).isNotEmpty().allMatch(n -> n.startsWith("bench-server-quotagate-1000-tenants-"));
        }
    }

    private static List<String> names(Set<Long> ids) {
        List<String> names = new ArrayList<>();
        for (long id : ids) {
            ThreadInfo info = THREADS.getThreadInfo(id);
            if (info != null) names.add(info.getThreadName());
        }
        return names;
    }
}

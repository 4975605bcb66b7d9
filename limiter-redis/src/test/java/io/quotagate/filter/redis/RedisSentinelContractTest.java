package io.quotagate.filter.redis;

import io.quotagate.filter.testing.RedisServer;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The store contract through Sentinel ({@code redis-sentinel://...#mymaster}) on a primary, a replica and
 * three sentinels of the test's own: every algorithm, moves between them, one call for mixed lanes, as on
 * one server.
 */
class RedisSentinelContractTest extends RedisBucketStoreContractTest {
    @RegisterExtension
    static final RedisSentinels sentinels = new RedisSentinels();

    @Override
    String uri() {
        return sentinels.uri();
    }

    @Override
    RedisServer serverOf(String key) throws Exception {
        return sentinels.primary();
    }
}

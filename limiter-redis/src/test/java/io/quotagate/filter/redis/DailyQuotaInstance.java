package io.quotagate.filter.redis;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.testing.Http;
import io.quotagate.filter.testing.JettyServer;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;

/**
 * One instance of the filter on a Jetty of its own over a {@link RedisStore}, its tenant {@code acme} on plan
 * {@code pro} with a daily calendar quota (and bandwidths too large to matter): the fixture of the tests of a Redis
 * that loses its data or slows down ({@link LostQuotaCountTest}, {@link SlowRedisQuotaTest}).
 */
record DailyQuotaInstance(RedisStore store, JettyServer server) implements AutoCloseable {

    /** The plans: {@code acme} on {@code pro}, a daily quota {@code daily} of {@code limit}; everybody else free. */
    static Plans plans(String file, int limit) {
        return PlansFile.parse(file, """
                plans:
                  free:
                    limits: [ { capacity: 100000, refill: 100000, period: 1s } ]
                  pro:
                    limits: [ { capacity: 100000, refill: 100000, period: 1s } ]
                    quotas: [ { name: daily, limit: %d, per: day } ]
                tenants:
                  default-plan: free
                  assignments: { acme: pro }
                """.formatted(limit));
    }

    static DailyQuotaInstance start(Plans plans, RedisSettings settings) throws Exception {
        RedisStore store = RedisStore.connect(settings, 1_000);
        return new DailyQuotaInstance(store, JettyServer.start(QuotaFilter.builder().plans(plans).store(store).build()));
    }

    /** The status of one request of {@code acme}. */
    int get() throws Exception {
        return Http.get(server.uri("/items/1"), "acme").statusCode();
    }

    @Override
    public void close() throws Exception {
        server.close();
        store.close();
    }
}

package app;

import io.quotagate.client.AdaptiveLimiter;
import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.redis.RedisStoreProvider;
import io.quotagate.filter.store.BucketStoreProvider;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import io.quotagate.spring.QuotagateAutoConfiguration;
import io.quotagate.tenant.TenantResolver;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;

/** Uses each module from the module path; any failure ends the process with a non-zero status. */
public final class Main {

    public static void main(String[] args) throws Exception {
        var expected = Map.of(
                PlansFile.class, "io.quotagate.plans",
                TenantResolver.class, "io.quotagate.tenant",
                QuotaFilter.class, "io.quotagate.filter",
                RedisStoreProvider.class, "io.quotagate.filter.redis",
                QuotagateAutoConfiguration.class, "io.quotagate.spring",
                AdaptiveLimiter.class, "io.quotagate.client");
        for (var e : expected.entrySet()) {
            Module module = e.getKey().getModule();
            check(module.isNamed() && module.getName().equals(e.getValue()),
                    e.getKey().getName() + " is in module " + module.getName() + ", not " + e.getValue());
        }

        Plans plans = PlansFile.parse("app-plans.yml", String.join("\n",
                "plans:",
                "  free:",
                "    limits:",
                "      - { name: burst, capacity: 20, refill: 10, period: 10s }",
                "tenants:",
                "  default-plan: free"));
        QuotaFilter filter = QuotaFilter.builder().plans(plans).build();
        check(filter.control() != null, "the filter built from the module path has no control");
        filter.destroy();

        List<String> stores = ServiceLoader.load(BucketStoreProvider.class).stream()
                .map(p -> p.type().getName()).toList();
        check(stores.contains(RedisStoreProvider.class.getName()),
                "the Redis store is not found through ServiceLoader on the module path: " + stores);

        AdaptiveLimiter limiter = AdaptiveLimiter.builder().name("modular").initialRate(600).build();
        limiter.acquire(1).accepted();

        System.out.println("modular application: " + expected.size() + " quotagate modules on the module path, "
                + "a filter built, the Redis store found, a permit taken");
    }

    private static void check(boolean condition, String failure) {
        if (!condition) {
            throw new AssertionError(failure);
        }
    }
}

package io.quotagate.example.readme;

// README snippet
import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.store.BucketStore;
import io.quotagate.filter.store.QuotaClock;
import io.quotagate.plans.Plans;
import io.quotagate.plans.PlansFile;
import io.quotagate.tenant.TenantResolver;
import jakarta.servlet.DispatcherType;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.EnumSet;
// README snippet end
import java.util.Optional;

/** docs/installation.md, "Programmatically": compiled here, held verbatim by that page. */
class ProgrammaticSnippet {
    interface Billing {
        Optional<String> planOf(String tenant);
    }

    void register(ServletContextHandler context, Billing billing) {
        // README snippet
        Plans plans = PlansFile.load("classpath:plans.yml");   // or PlansFile.parse(name, yamlText)
        QuotaFilter filter = QuotaFilter.builder()
                .plans(plans)                                         // required
                .tenantResolver(TenantResolver.header("X-Org-Id"))    // default: tenants.resolvers of the file
                .tenantDirectory(tenant -> billing.planOf(tenant))    // an Optional<String> (empty: unknown); cached
                .clock(QuotaClock.system())                           // inject a manual clock in tests
                .wallClock(Clock.systemUTC())                         // the calendar of quotas: which day, month
                .store(BucketStore.local(100_000, QuotaClock.system())) // default: local, tenants.max-tracked
                .quotaSnapshot(Path.of("/var/lib/myapi/quotas.txt"), Duration.ofMinutes(1)) // local quota counts kept
                .build();
        FilterHolder holder = new FilterHolder(filter);
        holder.setAsyncSupported(true);                               // always (see above)
        context.addFilter(holder, "/*", EnumSet.of(DispatcherType.REQUEST));   // a Jetty ServletContextHandler
        // README snippet end
    }
}

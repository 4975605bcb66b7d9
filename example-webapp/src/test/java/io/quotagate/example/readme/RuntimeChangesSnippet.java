package io.quotagate.example.readme;

// README snippet
import io.quotagate.filter.QuotaControl;
import io.quotagate.plans.Bandwidth;
import io.quotagate.plans.CalendarQuota;
import io.quotagate.plans.PlansFile;
import io.quotagate.tenant.TenantContract;
import java.time.Duration;
import java.time.ZoneId;
import java.util.List;
// README snippet end
import io.quotagate.filter.QuotaFilter;
import java.nio.file.Path;

/** docs/changing-limits.md: compiled here, held verbatim by that page. */
class RuntimeChangesSnippet {
    void change(QuotaFilter filter, Path path) {
        // README snippet
        QuotaControl control = filter.control();
        control.setGlobalQuota(List.of(new Bandwidth("api", 1500, 1500, Duration.ofMinutes(1)))); // List.of(): none
        control.setPlanLimits("free", List.of(new Bandwidth("burst", 40, 20, Duration.ofSeconds(10)),   // a token bucket
                Bandwidth.slidingWindow("minute", 100, Duration.ofMinutes(1))));   // or .gcra(name, burst, rate, period)
        control.apply(PlansFile.load(path));   // a whole new plans set
        control.reload();                      // re-read the plans file given to builder().plansFile(path)
        control.tenantLimits("acme");          // each bandwidth of acme's bucket: capacity, remaining, time to full
        control.tenantQuotas("acme");          // each calendar quota: used, remaining, resets at (QuotaUsage)
        control.usage(null, 1000);             // every tenant's quota use, this and closed periods: a page (UsagePage),
                                               // its next() the cursor of the following one (see quotas.md, usage export)
        control.setPlanQuotas("pro", List.of(new CalendarQuota("monthly", 200_000, CalendarQuota.Per.MONTH,
                ZoneId.of("Europe/Berlin"))));  // List.of(): the plan's quotas removed; the counters count on
        control.setTenant("acme", new TenantContract("pro",                        // a customer upgraded, with
                List.of(new Bandwidth("burst", 500, 100, Duration.ofSeconds(10))))); // a contract of its own
        control.tenant("acme");                // Optional<TenantContract>: runtime entry, plans file, else the directory
        control.clearTenant("acme");           // back to what the plans file or the directory says
        control.overrides();                   // every runtime change in force; control.clearOverrides() drops them
        control.invalidate("acme");            // drop acme's cached directory answer (every instance)
        // README snippet end
    }
}

package io.quotagate.example.readme;

// README snippet
import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.signals.QuotaEvent;
import java.nio.file.Path;
// README snippet end

/** docs/events.md: compiled here, held verbatim by that page. */
class QuotaEventsSnippet {
    /** Stands for the application's own CRM client. */
    interface Crm {
        void flag(String tenant);
    }

    QuotaFilter build(Crm crm) {
        // README snippet
        QuotaFilter filter = QuotaFilter.builder().plansFile(Path.of("plans.yml"))
                .listener(event -> { if (event instanceof QuotaEvent.ThrottledForLong t) crm.flag(t.tenant()); })
                .build();
        // README snippet end
        return filter;
    }
}

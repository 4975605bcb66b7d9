package io.quotagate.example.readme;

// README snippet
import io.quotagate.filter.QuotaFilter;
// README snippet end
import java.nio.file.Path;

/** docs/quotas.md, "A tenant's own usage": compiled here, held verbatim by that page. */
class OwnUsageSnippet {
    QuotaFilter build(Path path) {
        // README snippet
        QuotaFilter filter = QuotaFilter.builder().plansFile(path).usageEndpoint("/rate_limit", false).build();
        // README snippet end
        return filter;
    }
}

package io.quotagate.example.readme;

// README snippet
import io.quotagate.filter.status.UsagePage;
// README snippet end
import io.quotagate.filter.QuotaFilter;
import java.io.IOException;
import java.io.Writer;

/** docs/quotas.md, "Usage export (for invoicing)": compiled here, held verbatim by that page. */
class UsageExportSnippet {
    void export(QuotaFilter filter, Writer writer) throws IOException {
        // README snippet
        String cursor = null;
        do {
            UsagePage page = filter.control().usage(cursor, 1_000);   // about 1,000 tenants at most, in memory at once
            writer.write(page.csv(cursor == null));                   // or page.json(); the header on the first page only
            cursor = page.next();                                     // null after the last page
        } while (cursor != null);
        // README snippet end
    }
}

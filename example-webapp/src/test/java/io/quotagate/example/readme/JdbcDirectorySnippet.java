package io.quotagate.example.readme;

// README snippet
import io.quotagate.filter.QuotaFilter;
import io.quotagate.tenant.JdbcTenantDirectory;
import io.quotagate.tenant.TenantDirectory;
import java.time.Duration;
// README snippet end
import java.nio.file.Path;
import javax.sql.DataSource;

/** docs/tenants.md, "Tenants from your database": compiled here, held verbatim by that page. */
class JdbcDirectorySnippet {
    void install(DataSource dataSource, Path plans) {
        // README snippet
        TenantDirectory tenants = JdbcTenantDirectory.builder(dataSource)      // e.g. a HikariDataSource (below)
                .query("select tier as plan, custom_limits as limits, custom_quotas as quotas from customers where id = ?")
                .queryTimeout(Duration.ofSeconds(2))                            // the default
                .build();
        QuotaFilter filter = QuotaFilter.builder().plansFile(plans).tenantDirectory(tenants).build();
        // README snippet end
    }
}

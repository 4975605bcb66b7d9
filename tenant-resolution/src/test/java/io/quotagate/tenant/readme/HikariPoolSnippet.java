package io.quotagate.tenant.readme;

// README snippet
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
// README snippet end

/** docs/tenants.md, "Tenants from your database", which DataSource: compiled here, held verbatim by that page. */
class HikariPoolSnippet {
    HikariDataSource pool() {
        // README snippet
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl("jdbc:postgresql://db:5432/billing");
        config.setUsername("quotagate_reader");                 // a read-only user is enough
        config.setPassword(System.getenv("BILLING_DB_PASSWORD"));
        config.setMaximumPoolSize(4);
        config.setConnectionTimeout(2_000);                      // ms
        HikariDataSource dataSource = new HikariDataSource(config);
        // README snippet end
        return dataSource;
    }
}

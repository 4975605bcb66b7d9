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
        config.setConnectionTimeout(2_000);                      // ms: longest wait for a connection of the pool
        config.setValidationTimeout(1_000);                      // ms: the check of a connection before it is lent
        config.addDataSourceProperty("connectTimeout", 2);       // s, PostgreSQL driver: the TCP connect
        config.addDataSourceProperty("loginTimeout", 3);         // s: connect and log in (a hung server accepts, never answers)
        config.addDataSourceProperty("socketTimeout", 5);        // s: any one read, longer than the query timeout (2 s)
        HikariDataSource dataSource = new HikariDataSource(config);
        // README snippet end
        return dataSource;
    }
}
